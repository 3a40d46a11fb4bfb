//go:build integration

package integration

// Issue 38's acceptance for pull fleets, on six real test hosts: one forge
// host (a bare repository behind its sshd, and the receiver answering the
// forges' commit-status calls) and five webhookd hosts polling it — two on
// the canary branch, three on main — each reaching the forge host through
// a bridge over its own SSH connection (testhost.Bridge), as a fleet
// reaches its forge over the network. The CI job of the canary ring runs
// on the forge host: syslet wait-status on the canaries' statuses, and a
// fast-forward push of the commit to main only when it exits 0. Every
// claim is checked against the hosts themselves (/status, podman,
// InvocationIDs), the bare repository's refs, the statuses the receiver
// holds and the forge's sshd log of each host's fetches.

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/release"
)

const (
	ringPoll     = 5 * time.Second  // every fleet host's poll interval (and so its spread): webhookd's minimum
	ringGitAddr  = "127.0.0.1:2222" // on each fleet host: the forge host's sshd
	ringAPI      = "http://127.0.0.1:8090/gitea"
	ringBare     = "/srv/git/infra.git"  // on the forge host
	ringWork     = "/root/infra"         // the operators' clone, on the forge host
	ringCIScript = "/root/ci-promote.sh" // the canary ring's CI job, on the forge host
)

// ringHost is one webhookd host of the fleet.
type ringHost struct {
	*whHost
	hostname string
	ring     string // the branch it follows: canary or main
	keyFP    string // its deploy key's fingerprint, as the forge's sshd logs it
	authKey  string // its authorized_keys line on the forge host
}

func (r *ringHost) context() string { return "syslet/" + r.hostname }

// parallel runs f for every i in [0, n) at once and fails t with every error.
func parallel(t *testing.T, n int, f func(i int) error) {
	t.Helper()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// runErr is h.Run as an error.
func runErr(h *testhost.Host, cmd string) (string, error) {
	r := h.Run(cmd)
	if !r.OK() {
		return r.Stdout, errors.New(r.String())
	}
	return r.Stdout, nil
}

// setUpRingHost names h, and installs webhookd on it following branch
// ring of the forge host's repository over the bridge, with its own
// deploy key; webhookd is not started.
func setUpRingHost(h *testhost.Host, name, ring, forgeHostKey, forgeToken string) (*ringHost, error) {
	root, err := testhost.ModuleRoot()
	if err != nil {
		return nil, err
	}
	for src, dst := range map[string]string{
		sysletBin:   "/usr/local/bin/syslet",
		webhookdBin: release.BinDir + "/webhookd",
		filepath.Join(root, release.Packaging, release.ServiceName): "/etc/systemd/system/" + release.ServiceName,
	} {
		if err := h.CopyIn(src, dst); err != nil {
			return nil, err
		}
	}
	// Every guest boots as "testhost"; a fleet's hosts have names of their
	// own (their spec directory and their status context).
	if _, err := runErr(h, "hostname "+name+" && echo "+name+" > /etc/hostname && systemctl enable --now podman.socket && install -d -m 0755 /etc/syslet"); err != nil {
		return nil, err
	}
	r := &ringHost{hostname: name, ring: ring}
	for i := 1; i <= 2; i++ {
		if _, err := h.MakeImage(fmt.Sprintf("web:v%d", i), fmt.Sprintf("marker-%d", i)); err != nil {
			return nil, err
		}
	}
	if ring == "canary" {
		// The bad change's image: its entrypoint exits at once.
		ep, _ := json.Marshal([]string{"/bin/sh", "-c", "echo web-cannot-start; exit 3", "--"})
		if _, err := runErr(h, fmt.Sprintf(`d=$(mktemp -d) && printf 'FROM localhost:5000/web:v1\nENTRYPOINT %s\n' > $d/Containerfile &&
podman build -q --tls-verify=false -t localhost:5000/web:exits $d >/dev/null && podman push -q --tls-verify=false localhost:5000/web:exits && podman rmi -f localhost:5000/web:exits >/dev/null`, ep)); err != nil {
			return nil, err
		}
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	blk, err := ssh.MarshalPrivateKey(priv, "webhookd deploy key of "+r.hostname)
	if err != nil {
		return nil, err
	}
	spub, _ := ssh.NewPublicKey(pub)
	r.keyFP = ssh.FingerprintSHA256(spub)
	r.authKey = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(spub)))
	// A short soak keeps the test quick: the bad image exits at once.
	cfg := fmt.Sprintf(`listen: 127.0.0.1:9090
soak: 2s
repos:
  - name: infra
    url: ssh://root@%s%s
    branch: %s
    path: hosts/{hostname}
    sshKey: /etc/syslet/deploy_ed25519
    knownHosts: /etc/syslet/known_hosts
    poll: %s
    status: {forge: gitea, api: %q, repo: ops/infra, tokenFile: %s}
`, ringGitAddr, ringBare, ring, ringPoll, ringAPI, rcvToken)
	for path, f := range map[string]struct {
		b    []byte
		mode uint32
	}{
		"/etc/syslet/deploy_ed25519": {pem.EncodeToMemory(blk), 0o600},
		"/etc/syslet/known_hosts":    {[]byte("[127.0.0.1]:2222 " + forgeHostKey + "\n"), 0o644},
		rcvToken:                     {[]byte(forgeToken + "\n"), 0o600},
		whConfig:                     {[]byte(cfg), 0o644},
	} {
		if err := h.WriteFile(path, f.b, fs.FileMode(f.mode)); err != nil {
			return nil, err
		}
	}
	if _, err := runErr(h, "systemctl daemon-reload && webhookd --check"); err != nil {
		return nil, err
	}
	return r, nil
}

// ringSpec is a host's web container at image, with REV.
func ringSpec(image, rev string) []byte {
	b, _ := json.MarshalIndent(map[string]any{"apiVersion": "v1", "type": "container", "name": "web",
		"unit": map[string]any{"Container": map[string]any{"Image": image, "RunInit": "true", "Exec": "sleep infinity", "Environment": map[string]string{"REV": rev}}}}, "", "  ")
	return b
}

// firstFetch is a host's first fetch after a (re)start: when its new
// webhookd began, the delay it drew, and when the forge's sshd saw the
// host's deploy key log in.
type firstFetch struct {
	began time.Time
	drawn time.Duration
	at    time.Time
}

// unixStamp reads the timestamp journalctl -o short-unix starts a line with.
func unixStamp(t *testing.T, line string) time.Time {
	t.Helper()
	ts, err := strconv.ParseFloat(strings.Fields(line)[0], 64)
	must(t, err)
	return time.Unix(0, int64(ts*1e9))
}

// firstFetches reads, for each host, when its webhookd last began (its
// journal since curs[i]) and the delay it drew, and its first login at the
// forge after that (the forge's journal since forgeCur). The old daemon of
// a restart may still poll while it stops: that fetch is not the new one's.
func firstFetches(t *testing.T, forge *testhost.Host, forgeCur string, fleet []*ringHost, curs []string) []firstFetch {
	t.Helper()
	out := make([]firstFetch, len(fleet))
	sshd, err := forge.JournalSince(forgeCur, "-o", "short-unix")
	must(t, err)
	for i, r := range fleet {
		log, err := r.JournalSince(curs[i], "-u", "webhookd.service", "-o", "short-unix")
		must(t, err)
		for _, l := range strings.Split(log, "\n") {
			_, doc, ok := strings.Cut(l, ": {")
			var ev struct {
				Message     string `json:"message"`
				FirstPollIn string `json:"firstPollIn"`
			}
			if ok && json.Unmarshal([]byte("{"+doc), &ev) == nil && ev.Message == "polling the branch" {
				out[i].began = unixStamp(t, l)
				out[i].drawn, err = time.ParseDuration(ev.FirstPollIn)
				must(t, err)
			}
		}
		if out[i].began.IsZero() {
			t.Fatalf("%s: webhookd did not log its first poll's delay:\n%s", r.hostname, log)
		}
		for _, l := range strings.Split(sshd, "\n") {
			if strings.Contains(l, "Accepted publickey") && strings.Contains(l, r.keyFP) {
				if at := unixStamp(t, l); at.After(out[i].began) {
					out[i].at = at
					break
				}
			}
		}
		if out[i].at.IsZero() {
			t.Fatalf("%s: no fetch at the forge since webhookd began at %s (drawn delay %s)", r.hostname, out[i].began.Format(time.RFC3339Nano), out[i].drawn)
		}
	}
	return out
}

func TestPullRings(t *testing.T) {
	t0 := time.Now()
	hosts := testhost.StartN(t, 6)
	forge, fleetHosts := hosts[0], hosts[1:]
	t.Logf("six hosts up in %s", time.Since(t0).Round(time.Millisecond))

	// The forge host: the receiver (the forges' statuses API), syslet for
	// the CI job, the bare repository and the operators' clone.
	creds := startReceiver(t, forge)
	must(t, forge.CopyIn(sysletBin, "/usr/local/bin/syslet"))
	forgeKey := strings.TrimSpace(forge.MustRun(t, "cut -d' ' -f1,2 /etc/ssh/ssh_host_ed25519_key.pub"))

	fleet := make([]*ringHost, len(fleetHosts))
	parallel(t, len(fleetHosts), func(i int) error {
		ring, name := "main", fmt.Sprintf("main%d", i-1)
		if i < 2 {
			ring, name = "canary", fmt.Sprintf("canary%d", i+1)
		}
		r, err := setUpRingHost(fleetHosts[i], name, ring, forgeKey, creds.forgeToken)
		if err != nil {
			return fmt.Errorf("host %d: %w", i, err)
		}
		r.whHost = &whHost{Host: fleetHosts[i], t: t}
		fleet[i] = r
		return nil
	})
	canaries, mains := fleet[:2], fleet[2:]
	var keys []string
	for _, r := range fleet {
		testhost.Bridge(t, r.Host, ringGitAddr, forge, "127.0.0.1:22")
		testhost.Bridge(t, r.Host, "127.0.0.1:8090", forge, "127.0.0.1:8090")
		keys = append(keys, r.authKey)
	}
	forge.MustRun(t, "printf '%s\\n' "+testhost.QuoteArgs(keys...)+" >> /root/.ssh/authorized_keys")
	forge.MustRun(t, "git init -q --bare -b main "+ringBare+" && git init -q -b main "+ringWork+
		" && git -C "+ringWork+" remote add origin "+ringBare+
		" && git -C "+ringWork+" config user.email ops@example && git -C "+ringWork+" config user.name ops")
	// commitAll writes every host's spec, commits on branch and pushes it.
	commitAll := func(t *testing.T, branch, image, rev string) string {
		t.Helper()
		forge.MustRun(t, "cd "+ringWork+" && { [ \"$(git symbolic-ref --short HEAD)\" = "+branch+" ] || git checkout -q "+branch+"; }")
		for _, r := range fleet {
			must(t, forge.WriteFile(ringWork+"/hosts/"+r.hostname+"/web.json", ringSpec(image, rev), 0o644))
		}
		return strings.TrimSpace(forge.MustRun(t, "cd "+ringWork+" && git add -A && git commit -q -m "+testhost.Quote(rev)+
			" && git push -q origin HEAD:"+branch+" && git rev-parse HEAD"))
	}
	c0 := commitAll(t, "main", "localhost:5000/web:v1", "initial")
	forge.MustRun(t, "git -C "+ringWork+" branch -q canary && git -C "+ringWork+" push -q origin canary")
	// The canary ring's CI job: wait for the canaries' statuses of the
	// canary branch's tip; promote it to main (a fast-forward push) only
	// on exit 0.
	var ctxArgs []string
	for _, r := range canaries {
		ctxArgs = append(ctxArgs, "--context", r.context())
	}
	ci := `#!/bin/sh
set -u
cd ` + ringWork + ` && git fetch -q origin || exit 1
c=$(git rev-parse origin/canary)
syslet wait-status --forge gitea --api ` + ringAPI + ` --repo ops/infra --token-file ` + rcvToken + ` ` + testhost.QuoteArgs(ctxArgs...) + ` --interval 2s --timeout 5m "$c" || exit $?
git push -q origin "$c:refs/heads/main"
`
	must(t, forge.WriteFile(ringCIScript, []byte(ci), 0o755))

	// Five webhookds started at the same moment, as after a fleet-wide
	// upgrade. Each draws its first poll within the interval; the forge's
	// sshd logs each host's fetches by its deploy key.
	startAll := func(t *testing.T, verb string) ([]firstFetch, time.Time) {
		t.Helper()
		forgeCur, err := forge.JournalCursor()
		must(t, err)
		curs := make([]string, len(fleet))
		for i, r := range fleet {
			curs[i], err = r.JournalCursor()
			must(t, err)
		}
		started := time.Now()
		parallel(t, len(fleet), func(i int) error {
			_, err := runErr(fleet[i].Host, "systemctl "+verb+" webhookd.service")
			return err
		})
		// Every host has fetched once it has applied c0 and its next poll
		// is past its first.
		for _, r := range fleet {
			r.t = t
			r.waitStatus("first poll", func(s whStatus) bool { return s.LastApplied == c0 && s.State == "idle" && s.LastPoll != nil })
		}
		return firstFetches(t, forge, forgeCur, fleet, curs), started
	}
	var spread [2][]firstFetch
	var starts [2]time.Time
	t.Run("PollSpreadOverTheInterval", func(t *testing.T) {
		spread[0], starts[0] = startAll(t, "start")
		spread[1], starts[1] = startAll(t, "restart")
		var b strings.Builder
		fmt.Fprintf(&b, "poll %s, pollSpread %s (the default: the interval); the delay each new webhookd drew, and its first fetch as the forge's sshd logged it, from the moment all five were (re)started:\n", ringPoll, ringPoll)
		fmt.Fprintf(&b, "%-8s %-7s %-24s %-24s\n", "host", "ring", "start: drawn → fetched", "restart: drawn → fetched")
		for i, r := range fleet {
			fmt.Fprintf(&b, "%-8s %-7s %-24s %-24s\n", r.hostname, r.ring,
				fmt.Sprintf("%5.2fs → %5.2fs", spread[0][i].drawn.Seconds(), spread[0][i].at.Sub(starts[0]).Seconds()),
				fmt.Sprintf("%5.2fs → %5.2fs", spread[1][i].drawn.Seconds(), spread[1][i].at.Sub(starts[1]).Seconds()))
		}
		for round := range 2 {
			var offs []float64
			for i, f := range spread[round] {
				// The fetch waits for the drawn delay, which lies within the
				// spread (the log line comes a moment after the timer).
				if f.drawn < 0 || f.drawn >= ringPoll || f.at.Sub(f.began) < f.drawn-100*time.Millisecond {
					t.Errorf("%s: drew %s, fetched %s after webhookd began", fleet[i].hostname, f.drawn, f.at.Sub(f.began))
				}
				offs = append(offs, f.at.Sub(starts[round]).Seconds())
			}
			sort.Float64s(offs)
			fmt.Fprintf(&b, "round %d: first fetches at %.2fs … %.2fs after the start (%d hosts, the closest two %.2fs apart)\n",
				round+1, offs[0], offs[len(offs)-1], len(offs), minGap(offs))
		}
		t.Log(b.String())
	})

	// A bad commit on the canary branch: both canaries deploy it, fail the
	// health gate and roll back; the CI job exits non-zero at the first
	// failure; main does not move and the main ring never sees the commit.
	bad := ""
	t.Run("BadCommitStopsAtTheCanaries", func(t *testing.T) {
		mainInv := map[string]string{}
		for _, r := range mains {
			r.t = t
			mainInv[r.hostname] = prop(t, r.Host, "web.service", "InvocationID")
		}
		mainBefore := strings.TrimSpace(forge.MustRun(t, "git -C "+ringBare+" rev-parse main"))
		bad = commitAll(t, "canary", "localhost:5000/web:exits", "bad")
		t1 := time.Now()
		res := forge.Run(ringCIScript)
		t.Logf("CI job (exit %d after %s):\n%s%s", res.Code, time.Since(t1).Round(time.Millisecond), res.Stdout, res.Stderr)
		if res.Code != 1 || !strings.Contains(res.Stdout, "failed on syslet/") || !strings.Contains(res.Stdout, "do not promote it") {
			t.Fatalf("the CI job: want exit 1 naming a canary, got %s", res)
		}
		for _, r := range canaries {
			r.t = t
			st := r.waitStatus("the bad commit rolled back", func(s whStatus) bool { return s.Last != nil && s.Last.Commit == bad && s.State == "idle" })
			if st.Last.Result != "rolled-back" || st.LastApplied != c0 || len(st.Last.FailingUnits) == 0 {
				t.Fatalf("%s: %+v %+v", r.hostname, st, st.Last)
			}
			if img, _, rev := r.running(); img != "localhost:5000/web:v1" || rev != "initial" {
				t.Fatalf("%s runs %s REV=%s after its rollback", r.hostname, img, rev)
			}
		}
		// Both canaries' failures are on the forge, and the CI job is done.
		waitReceived(t, forge, "/gitea/repos/ops/infra/statuses/"+bad, "both canaries' failure", func(rs []rcvRecord) bool {
			n := 0
			for _, rec := range rs {
				if rec.Code == 201 && strings.Contains(rec.Body, `"state":"failure"`) {
					n++
				}
			}
			return n == len(canaries)
		})
		if now := strings.TrimSpace(forge.MustRun(t, "git -C "+ringBare+" rev-parse main")); now != mainBefore {
			t.Fatalf("main moved from %s to %s", mainBefore, now)
		}
		// The main ring polled on, fetched main, and never saw the commit.
		for _, r := range mains {
			r.t = t
			polled := r.status().LastPoll
			st := r.waitStatus("a poll after the bad commit", func(s whStatus) bool { return s.LastPoll != nil && s.LastPoll.After(*polled) })
			if st.LastApplied != c0 || st.Last == nil || st.Last.Commit != c0 {
				t.Fatalf("%s: %+v %+v", r.hostname, st, st.Last)
			}
			if inv := prop(t, r.Host, "web.service", "InvocationID"); inv != mainInv[r.hostname] {
				t.Fatalf("%s: web.service was restarted", r.hostname)
			}
			if n := strings.TrimSpace(r.MustRun(t, "git -C "+whCheckout+" cat-file -t "+bad+" 2>/dev/null || echo absent")); n != "absent" {
				t.Fatalf("%s's clone holds the bad commit (%s)", r.hostname, n)
			}
		}
		for _, rec := range received(t, forge, "/gitea/repos/ops/infra/statuses/"+bad) {
			for _, r := range mains {
				if strings.Contains(rec.Body, r.context()) {
					t.Fatalf("a main host set a status on the bad commit: %s", rec.Body)
				}
			}
		}
	})

	// The fix on the canary branch: the canaries deploy it, the CI job
	// exits 0 and promotes it, and the main ring deploys it too.
	t.Run("GoodCommitIsPromotedToEveryHost", func(t *testing.T) {
		good := commitAll(t, "canary", "localhost:5000/web:v2", "good")
		t1 := time.Now()
		res := forge.Run(ringCIScript)
		t.Logf("CI job (exit %d after %s):\n%s%s", res.Code, time.Since(t1).Round(time.Millisecond), res.Stdout, res.Stderr)
		if res.Code != 0 || !strings.Contains(res.Stdout, "may be promoted") {
			t.Fatalf("the CI job: %s", res)
		}
		if now := strings.TrimSpace(forge.MustRun(t, "git -C "+ringBare+" rev-parse main")); now != good {
			t.Fatalf("main is at %s, want the promoted %s", now, good)
		}
		t2 := time.Now()
		for _, r := range fleet {
			r.t = t
			st := r.waitStatus("the good commit applied", func(s whStatus) bool { return s.LastApplied == good && s.State == "idle" })
			if st.Last.Result != "success" {
				t.Fatalf("%s: %+v", r.hostname, st.Last)
			}
			if img, marker, rev := r.running(); img != "localhost:5000/web:v2" || marker != "marker-2" || rev != "good" {
				t.Fatalf("%s runs %s (%s) REV=%s", r.hostname, img, marker, rev)
			}
		}
		t.Logf("promoted → all five applied in %s", time.Since(t2).Round(time.Millisecond))
		// The whole fleet's statuses of the commit read back as success.
		var all []string
		for _, r := range fleet {
			all = append(all, "--context", r.context())
		}
		out := forge.MustRun(t, "syslet wait-status --forge gitea --api "+ringAPI+" --repo ops/infra --token-file "+rcvToken+" "+
			testhost.QuoteArgs(all...)+" --interval 1s --timeout 2m "+good)
		if !strings.Contains(out, "every status is success") {
			t.Fatalf("wait-status on all five:\n%s", out)
		}
	})

	// GitHub's and GitLab's reads, from statuses set in their own format.
	t.Run("GitHubAndGitLabReads", func(t *testing.T) {
		for _, tc := range []struct {
			forge, set, auth, body string
			code                   int
		}{
			{"github", "/github/repos/ops/infra/statuses/" + c0, "Authorization: Bearer " + creds.forgeToken, `{"state":"success","context":"syslet/x"}`, 0},
			{"gitlab", "/gitlab/projects/ops%2Finfra/statuses/" + c0, "PRIVATE-TOKEN: " + creds.forgeToken, `{"state":"failed","name":"syslet/x"}`, 1},
		} {
			forge.MustRun(t, testhost.QuoteArgs("curl", "-sSf", "-o", "/dev/null", "-X", "POST", "-H", tc.auth, "-H", "Accept: application/vnd.github+json",
				"-H", "X-GitHub-Api-Version: 2022-11-28", "-H", "Content-Type: application/json", "--data", tc.body, rcvURL+tc.set))
			r := forge.Run("syslet wait-status --forge " + tc.forge + " --api " + rcvURL + "/" + tc.forge + " --repo ops/infra --token-file " + rcvToken +
				" --context syslet/x --timeout 1m " + c0)
			if r.Code != tc.code {
				t.Fatalf("%s: want exit %d: %s", tc.forge, tc.code, r)
			}
		}
	})
}

// minGap is the smallest difference between neighbours of sorted xs.
func minGap(xs []float64) float64 {
	g := -1.0
	for i := 1; i < len(xs); i++ {
		if d := xs[i] - xs[i-1]; g < 0 || d < g {
			g = d
		}
	}
	return g
}
