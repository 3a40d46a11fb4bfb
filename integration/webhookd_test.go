//go:build integration

package integration

// Issue 11's acceptance on a real test host: webhookd installed with
// pkg/release/packaging/webhookd.service (the unit the package ships) and running as a hardened systemd
// service, fetching over SSH (known_hosts checked) from a bare repository
// in the guest, applying through the same entry point as the CLI. Every
// claim is checked against podman, systemd, the checkout's HEAD, sshd's log
// and webhookd's own /status and /metrics.

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/release"
)

const (
	whURL      = "http://127.0.0.1:9090"
	whWork     = "/root/infra"                      // the operator's clone
	whBare     = "/srv/git/infra.git"               // the "forge"
	whCheckout = "/var/lib/syslet/webhookd/infra"   // webhookd's private clone
	whSecret   = "/etc/syslet/webhook-infra.secret" // HMAC secret / GitLab token
	whConfig   = "/etc/syslet/webhookd.yaml"
	whWait     = 2 * time.Minute // bound for a deploy to land
)

// whHost is a test host with webhookd running as a service.
type whHost struct {
	*testhost.Host
	t       *testing.T
	secret  string
	keyFP   string // SHA256 fingerprint of webhookd's deploy key, as sshd logs it
	specDir string // hosts/<hostname> in the work clone
	n       int    // request counter, for file names and delivery ids
}

func startWebhookd(t *testing.T) *whHost {
	t.Helper()
	w, deployKey := installWebhookd(t)
	h := w.Host
	// The "forge": root's sshd, the deploy key authorised for root, and
	// known_hosts holding this guest's real ed25519 host key.
	h.MustRun(t, "echo "+testhost.Quote(deployKey)+" >> /root/.ssh/authorized_keys")
	h.MustRun(t, `echo "127.0.0.1 $(cut -d' ' -f1,2 /etc/ssh/ssh_host_ed25519_key.pub)" > /etc/syslet/known_hosts`)

	// The config repository: a bare repo and a work clone with one container.
	h.MustRun(t, "git init -q --bare -b main "+whBare+" && git init -q -b main "+whWork+
		" && git -C "+whWork+" remote add origin "+whBare+
		" && git -C "+whWork+" config user.email ops@example && git -C "+whWork+" config user.name ops && mkdir -p "+whWork+"/"+w.specDir)
	w.writeSpec("localhost:5000/web:v1", "0", "")
	w.commit("web v1")
	w.writeConfig("ssh://root@127.0.0.1/srv/git/infra.git")
	h.MustRun(t, "systemctl daemon-reload && systemctl enable --now webhookd.service")
	return w
}

// installWebhookd starts a host with syslet, webhookd's binary and unit
// (not started), podman's socket, images web:v1..v5 and webhookd's
// credentials: an HMAC secret in whSecret and a deploy key in
// /etc/syslet/deploy_ed25519, whose public half it returns as an
// authorized_keys line for the forge.
func installWebhookd(t *testing.T) (*whHost, string) {
	t.Helper()
	h := startWithSyslet(t)
	w := &whHost{Host: h, t: t}
	root, err := testhost.ModuleRoot()
	must(t, err)
	must(t, h.CopyIn(webhookdBin, release.BinDir+"/webhookd"))
	must(t, h.CopyIn(filepath.Join(root, release.Packaging, release.ServiceName), "/etc/systemd/system/"+release.ServiceName))
	h.MustRun(t, "systemctl enable --now podman.socket")
	for i := 1; i <= 5; i++ {
		if _, err := h.MakeImage(fmt.Sprintf("web:v%d", i), fmt.Sprintf("marker-%d", i)); err != nil {
			t.Fatal(err)
		}
	}

	// Credentials: an HMAC secret and a deploy key.
	sec := make([]byte, 32)
	rand.Read(sec)
	w.secret = hex.EncodeToString(sec)
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	blk, err := ssh.MarshalPrivateKey(priv, "webhookd deploy key")
	must(t, err)
	spub, err := ssh.NewPublicKey(pub)
	must(t, err)
	w.keyFP = ssh.FingerprintSHA256(spub)
	h.MustRun(t, "install -d -m 0755 /etc/syslet && install -d -m 0700 /root/.ssh")
	must(t, h.WriteFile(whSecret, []byte(w.secret+"\n"), 0o600))
	must(t, h.WriteFile("/etc/syslet/deploy_ed25519", pem.EncodeToMemory(blk), 0o600))
	w.specDir = "hosts/" + strings.TrimSpace(h.MustRun(t, "hostname"))
	return w, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(spub)))
}

func (w *whHost) writeConfig(url string) {
	w.t.Helper()
	w.writeConfigLines(url, "    secretFile: "+whSecret)
}

// writeConfigLines writes webhookd's config with extra lines in the repository entry.
func (w *whHost) writeConfigLines(url string, extra ...string) {
	w.t.Helper()
	cfg := fmt.Sprintf(`listen: 127.0.0.1:9090
repos:
  - name: infra
    url: %s
    branch: main
    path: hosts/{hostname}
    sshKey: /etc/syslet/deploy_ed25519
    knownHosts: /etc/syslet/known_hosts
%s
`, url, strings.Join(extra, "\n"))
	must(w.t, w.WriteFile(whConfig, []byte(cfg), 0o644))
}

// writeSpec writes the web container's spec into the work clone.
func (w *whHost) writeSpec(image, rev, execStartPre string) {
	w.t.Helper()
	unit := map[string]any{
		"Container": map[string]any{"Image": image, "RunInit": "true", "Exec": "sleep infinity", "Environment": map[string]string{"REV": rev}},
	}
	if execStartPre != "" {
		unit["Service"] = map[string]string{"ExecStartPre": execStartPre}
	}
	b, _ := json.MarshalIndent(map[string]any{"apiVersion": "v1", "type": "container", "name": "web", "unit": unit}, "", "  ")
	must(w.t, w.WriteFile(whWork+"/"+w.specDir+"/web.json", b, 0o644))
}

// deploy commits the work clone, delivers GitHub's push of it, and waits
// until webhookd has applied it; it returns the commit.
func (w *whHost) deploy(msg string) string {
	w.t.Helper()
	commit := w.commit(msg)
	if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: commit}); code != 202 {
		w.t.Fatalf("push refused: %d %s", code, reply)
	}
	w.waitStatus("applied", func(s whStatus) bool { return s.LastApplied == commit })
	return commit
}

// commit commits the work clone and pushes it to the bare repo's main.
func (w *whHost) commit(msg string) string {
	w.t.Helper()
	out := w.MustRun(w.t, "cd "+whWork+" && git add -A && git commit -q -m "+testhost.Quote(msg)+" && git push -q origin HEAD:main && git rev-parse HEAD")
	return strings.TrimSpace(out)
}

func whSign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

type whDelivery struct {
	forge string // github, gitea, forgejo, gitlab
	ref   string
	after string
	id    string // delivery id; "" for a fresh one
	// nonce tells the body apart from every other push's, as a forge's
	// payload does; "" is the delivery id (a body of its own per delivery).
	nonce     string
	forgeWith string // a wrong secret to sign with
}

// request returns the body and headers of a push event in the forge's format.
func (w *whHost) request(d whDelivery) ([]byte, []string) {
	if d.id == "" {
		w.n++
		d.id = fmt.Sprintf("%s-%d-%d", d.forge, w.n, time.Now().UnixNano())
	}
	if d.nonce == "" {
		d.nonce = d.id
	}
	secret := w.secret
	if d.forgeWith != "" {
		secret = d.forgeWith
	}
	body := []byte(fmt.Sprintf(`{"ref":%q,"before":"0000000000000000000000000000000000000000","after":%q,"repository":{"full_name":"ops/infra"},"pusher":{"name":"ops"},"nonce":%q}`, d.ref, d.after, d.nonce))
	switch d.forge {
	case "github":
		return body, []string{"X-GitHub-Event: push", "X-GitHub-Delivery: " + d.id, "X-Hub-Signature-256: sha256=" + whSign(secret, body)}
	case "gitea":
		return body, []string{"X-Gitea-Event: push", "X-Gitea-Delivery: " + d.id, "X-Gitea-Signature: " + whSign(secret, body)}
	case "forgejo":
		return body, []string{"X-Forgejo-Event: push", "X-Forgejo-Delivery: " + d.id, "X-Forgejo-Signature: " + whSign(secret, body), "X-Gitea-Signature: " + whSign(secret, body)}
	case "gitlab":
		body = []byte(fmt.Sprintf(`{"object_kind":"push","ref":%q,"after":%q,"checkout_sha":%q,"project":{"path_with_namespace":"ops/infra"},"nonce":%q}`, d.ref, d.after, d.after, d.nonce))
		return body, []string{"X-Gitlab-Event: Push Hook", "X-Gitlab-Event-UUID: " + d.id, "X-Gitlab-Token: " + secret}
	}
	panic(d.forge)
}

// whCurl is a curl command line that posts the file body with headers and
// prints the HTTP status code and then the reply.
func whCurl(path, bodyFile string, headers []string) string {
	args := []string{"curl", "-sS", "-o", bodyFile + ".reply", "-w", "%{http_code}", "-X", "POST", "-H", "Content-Type: application/json"}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	args = append(args, "--data-binary", "@"+bodyFile, whURL+path)
	return testhost.QuoteArgs(args...) + "; echo; cat " + bodyFile + ".reply"
}

// post sends a request from inside the guest and returns code and reply.
func (w *whHost) post(path string, body []byte, headers []string) (int, string) {
	w.t.Helper()
	w.n++
	f := fmt.Sprintf("/tmp/wh-%d.json", w.n)
	must(w.t, w.WriteFile(f, body, 0o644))
	out := w.MustRun(w.t, whCurl(path, f, headers))
	code, reply, _ := strings.Cut(out, "\n")
	n, err := strconv.Atoi(strings.TrimSpace(code))
	if err != nil {
		w.t.Fatalf("curl: %q", out)
	}
	return n, reply
}

func (w *whHost) push(d whDelivery) (int, string) {
	w.t.Helper()
	body, headers := w.request(d)
	return w.post("/hooks/infra", body, headers)
}

type whStatus struct {
	State       string
	Deploying   string
	Queued      string
	LastApplied string
	LastError   string
	LastPoll    *time.Time
	Last        *struct {
		Commit, Result, Verdict, Stage, Summary, RunID, Error, Trigger string
		Pushes                                                         int
		DurationSeconds                                                float64
		FailingUnits                                                   []string
		RolledBackTo                                                   string
		Findings                                                       []struct{ Source, Path, Rule, Message string }
		FindingCount                                                   int
	}
}

func (w *whHost) status() whStatus {
	w.t.Helper()
	var doc struct{ Repos []whStatus }
	out := w.MustRun(w.t, "curl -sSf "+whURL+"/status")
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Repos) != 1 {
		w.t.Fatalf("/status: %v\n%s", err, out)
	}
	return doc.Repos[0]
}

// waitStatus polls /status until ok holds, for at most whWait.
func (w *whHost) waitStatus(what string, ok func(whStatus) bool) whStatus {
	w.t.Helper()
	deadline := time.Now().Add(whWait)
	for {
		st := w.status()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			log, _ := w.JournalSince("", "-u", "webhookd.service", "-n", "40", "-o", "cat")
			w.t.Fatalf("timed out after %s waiting for %s; status %+v last %+v\nwebhookd log:\n%s", whWait, what, st, st.Last, log)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// metric returns the value of one series of /metrics (0 when absent).
func (w *whHost) metric(series string) float64 {
	w.t.Helper()
	out := w.MustRun(w.t, "curl -sSf "+whURL+"/metrics")
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			must(w.t, err)
			return f
		}
	}
	return 0
}

func (w *whHost) deploys() float64 {
	return w.metric(`webhookd_deploys_total{repo="infra",result="success"}`) +
		w.metric(`webhookd_deploys_total{repo="infra",result="failed"}`) +
		w.metric(`webhookd_deploys_total{repo="infra",result="skipped"}`) +
		w.metric(`webhookd_deploys_total{repo="infra",result="rolled-back"}`)
}

// running returns the web container's image, its marker file and its REV.
func (w *whHost) running() (image, marker, rev string) {
	w.t.Helper()
	image = strings.TrimSpace(w.MustRun(w.t, "podman inspect web --format '{{.ImageName}}'"))
	marker = strings.TrimSpace(w.MustRun(w.t, "podman exec web cat /etc/testhost-marker"))
	env := w.MustRun(w.t, "podman inspect web --format '{{range .Config.Env}}{{println .}}{{end}}'")
	for _, l := range strings.Split(env, "\n") {
		if v, ok := strings.CutPrefix(l, "REV="); ok {
			rev = v
		}
	}
	return image, marker, rev
}

func (w *whHost) head() string {
	return strings.TrimSpace(w.MustRun(w.t, "git -C "+whCheckout+" rev-parse HEAD"))
}

// fetchesLogged counts sshd's logins with webhookd's deploy key since cursor.
func (w *whHost) fetchesLogged(cursor string) int {
	w.t.Helper()
	out, err := w.JournalSince(cursor, "-o", "cat")
	must(w.t, err)
	return strings.Count(out, w.keyFP)
}

func (w *whHost) mainPID() string {
	return strings.TrimSpace(w.MustRun(w.t, "systemctl show -P MainPID webhookd.service"))
}

func (w *whHost) rss() int {
	w.t.Helper()
	out := w.MustRun(w.t, "awk '/^VmRSS:/ {print $2}' /proc/"+w.mainPID()+"/status")
	kb, err := strconv.Atoi(strings.TrimSpace(out))
	must(w.t, err)
	return kb
}

func TestWebhookd(t *testing.T) {
	t.Parallel()
	w := startWebhookd(t)
	if st := strings.TrimSpace(w.MustRun(t, "systemctl is-active webhookd.service")); st != "active" {
		t.Fatalf("webhookd is %s", st)
	}
	var applied string // the commit the host runs

	t.Run("GitHubPushDeploysThatCommit", func(t *testing.T) {
		w.t = t
		body := []byte(`{"zen":"Keep it logically awesome.","hook_id":1}`)
		code, reply := w.post("/hooks/infra", body, []string{"X-GitHub-Event: ping", "X-GitHub-Delivery: ping-1", "X-Hub-Signature-256: sha256=" + whSign(w.secret, body)})
		if code != 200 || !strings.Contains(reply, `"pong"`) {
			t.Fatalf("ping: %d %s", code, reply)
		}
		first := strings.TrimSpace(w.MustRun(t, "git -C "+whWork+" rev-parse HEAD"))
		if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: first}); code != 202 {
			t.Fatalf("first push: %d %s", code, reply)
		}
		w.waitStatus("first commit applied", func(s whStatus) bool { return s.LastApplied == first })

		w.writeSpec("localhost:5000/web:v2", "0", "")
		c := w.commit("web v2")
		t0 := time.Now()
		code, reply = w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: c})
		if code != 202 || !strings.Contains(reply, `"queued"`) {
			t.Fatalf("push: %d %s", code, reply)
		}
		st := w.waitStatus("v2 applied", func(s whStatus) bool { return s.LastApplied == c })
		t.Logf("202 → applied in %s; summary %q, run %s", time.Since(t0).Round(time.Millisecond), st.Last.Summary, st.Last.RunID)
		if st.Last.Result != "success" || st.Last.RunID == "" || st.LastError != "" {
			t.Fatalf("status: %+v", st.Last)
		}
		if img, marker, _ := w.running(); img != "localhost:5000/web:v2" || marker != "marker-2" {
			t.Fatalf("web runs %s (%s), want web:v2", img, marker)
		}
		if h := w.head(); h != c {
			t.Fatalf("checkout HEAD %s, want %s", h, c)
		}
		// The run journal records the commit as the run's source.
		w.MustRun(t, "grep -q "+testhost.Quote(`"source":"git infra@`+c+`"`)+" /var/lib/syslet/runs.jsonl")
		applied = c
	})

	for i, forge := range []string{"gitea", "forgejo", "gitlab"} {
		t.Run(strings.ToUpper(forge[:1])+forge[1:]+"PushDeploysThatCommit", func(t *testing.T) {
			w.t = t
			v := i + 3
			w.writeSpec(fmt.Sprintf("localhost:5000/web:v%d", v), "0", "")
			c := w.commit(fmt.Sprintf("web v%d", v))
			if code, reply := w.push(whDelivery{forge: forge, ref: "refs/heads/main", after: c}); code != 202 || !strings.Contains(reply, `"queued"`) {
				t.Fatalf("push: %d %s", code, reply)
			}
			st := w.waitStatus(fmt.Sprintf("v%d applied", v), func(s whStatus) bool { return s.LastApplied == c })
			if st.Last.Result != "success" {
				t.Fatalf("status: %+v", st.Last)
			}
			if img, marker, _ := w.running(); img != fmt.Sprintf("localhost:5000/web:v%d", v) || marker != fmt.Sprintf("marker-%d", v) {
				t.Fatalf("web runs %s (%s), want web:v%d", img, marker, v)
			}
			applied = c
		})
	}

	t.Run("SlowBodiesDoNotStarveAPush", func(t *testing.T) {
		w.t = t
		// Two hundred clients in the guest send complete headers and then
		// the body a byte a second, for up to 15 s; a correctly signed
		// push meanwhile is answered 202 while all of them are still
		// connected, and deploys.
		// The clients are the connections of one process, opened one
		// after the other in milliseconds: two hundred processes of their
		// own took seconds to start on a busy machine, longer than
		// webhookd holds a slow body, so they were never all connected at
		// once. (A write after the server's answer must not kill the
		// process before it records the answers: SIGPIPE is ignored.)
		must(t, w.WriteFile("/root/slow.sh", []byte(`trap '' PIPE
fds=()
for i in $(seq 200); do
	exec {fd}<>/dev/tcp/127.0.0.1/9090 || exit 1
	printf 'POST /hooks/infra HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: push\r\nX-GitHub-Delivery: slow-%s\r\nContent-Length: 1000\r\n\r\n' "$i" >&$fd
	fds+=("$fd")
done
start=$(date +%s.%N)
declare -A cut # connection → when a write to it first failed (it was cut off)
for s in $(seq 15); do
	sleep 1
	alive=0
	for i in "${!fds[@]}"; do
		[ -n "${cut[$i]}" ] && continue
		if printf x >&${fds[$i]} 2>/dev/null; then alive=1; else cut[$i]=$(date +%s.%N); fi
	done
	[ $alive = 0 ] && break
done
for i in "${!fds[@]}"; do
	answer=$(timeout 5 head -c 12 <&${fds[$i]})
	end=${cut[$i]:-$(date +%s.%N)}
	echo "$answer $(echo "$end $start" | awk '{print $1-$2}')" > /tmp/slow-$((i+1)).answer
done
`), 0o755))
		w.writeSpec("localhost:5000/web:v2", "slow", "")
		c := w.commit("web REV=slow during 200 slow clients")
		body, headers := w.request(whDelivery{forge: "github", ref: "refs/heads/main", after: c})
		must(t, w.WriteFile("/tmp/wh-slow.json", body, 0o644))
		args := []string{"curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}\\n", "-X", "POST", "-H", "Content-Type: application/json"}
		for _, h := range headers {
			args = append(args, "-H", h)
		}
		args = append(args, "--data-binary", "@/tmp/wh-slow.json", whURL+"/hooks/infra")
		// One command in the guest starts the clients, waits until all two
		// hundred are connected with their headers sent, pushes, and counts
		// the slow connections again once the push is answered: webhookd
		// cuts a slow body off after about a second, so a round trip from
		// here between the steps could miss the attack. The order is what
		// counts, not a duration: a push that waited for a slot would be
		// answered only after slow clients were cut off.
		established := "ss -Htn state established '( dport = :9090 )' | wc -l"
		out := strings.Fields(w.MustRun(t, "rm -f /tmp/slow-*.answer; ulimit -n 4096; (setsid bash /root/slow.sh </dev/null >/dev/null 2>&1 &); "+
			"n=0; for i in $(seq 250); do n=$("+established+"); [ $n -ge 200 ] && break; sleep 0.02; done; "+
			`[ $n -ge 200 ] || { echo "only $n slow clients connected"; exit 1; }; echo $n; `+testhost.QuoteArgs(args...)+"; "+established))
		if len(out) != 3 {
			t.Fatalf("the slow clients and the push: %q", out)
		}
		before, code, after := out[0], out[1], out[2]
		t.Logf("%s slow connections established; the signed push: %s; then %s slow connections still established", before, code, after)
		if n, _ := strconv.Atoi(after); code != "202" || n < 200 {
			t.Fatalf("the signed push during 200 slow clients: %s with %s of them still connected, want 202 while all 200 are", code, after)
		}
		st := w.waitStatus("REV=slow applied", func(s whStatus) bool { return s.LastApplied == c })
		if _, _, rev := w.running(); rev != "slow" || st.Last.Result != "success" {
			t.Fatalf("web runs REV=%s (%+v), want slow", rev, st.Last)
		}
		w.MustRun(t, "for i in $(seq 90); do [ $(ls /tmp/slow-*.answer 2>/dev/null | wc -l) -ge 200 ] && exit 0; sleep 0.5; done; ls /tmp/slow-*.answer | wc -l; exit 1")
		answers := w.MustRun(t, "cat /tmp/slow-*.answer | awk '{print $1, $2}' | sort | uniq -c | sort -rn | head -3; cat /tmp/slow-*.answer | awk '$3>m{m=$3} END{print \"longest held \" m \"s\"}'")
		t.Logf("the slow clients' answers:\n%s", answers)
		if n := strings.TrimSpace(w.MustRun(t, "grep -c '^HTTP/1.1 408' /tmp/slow-*.answer | grep -c ':1$'")); n != "200" {
			t.Errorf("%s of 200 slow clients cut off with 408:\n%s", n, answers)
		}
		applied = c
	})

	t.Run("BadCommitIsRolledBack", func(t *testing.T) {
		w.t = t
		_, before, _ := w.running()
		bad := buildBrokenImage(t, w.Host, "web:exits", "echo web-cannot-start; exit 3")
		w.writeSpec(bad, "bad", "")
		c := w.commit("web: an image that exits")
		if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: c}); code != 202 {
			t.Fatalf("push: %d %s", code, reply)
		}
		st := w.waitStatus("the bad commit rolled back", func(s whStatus) bool { return s.Last != nil && s.Last.Commit == c && s.State == "idle" })
		t.Logf("bad commit: %+v", *st.Last)
		if st.Last.Result != "rolled-back" || st.LastApplied != applied || st.Last.RolledBackTo == "" ||
			len(st.Last.FailingUnits) != 1 || !strings.Contains(st.Last.FailingUnits[0], "web.service") {
			t.Fatalf("status after the bad commit: %+v %+v", st, *st.Last)
		}
		if _, marker, _ := w.running(); marker != before {
			t.Errorf("web runs %s after the rollback, want %s again", marker, before)
		}
		if v := w.metric(`webhookd_deploys_total{repo="infra",result="rolled-back"}`); v != 1 {
			t.Errorf("deploys_total rolled-back = %v, want 1", v)
		}
		// A later good commit deploys normally.
		w.writeSpec("localhost:5000/web:v5", "0", "")
		good := w.commit("web v5")
		if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: good}); code != 202 {
			t.Fatalf("push: %d %s", code, reply)
		}
		st = w.waitStatus("the good commit applied", func(s whStatus) bool { return s.LastApplied == good })
		if st.Last.Result != "success" {
			t.Fatalf("status after the good commit: %+v", *st.Last)
		}
		if img, marker, _ := w.running(); img != "localhost:5000/web:v5" || marker != "marker-5" {
			t.Errorf("web runs %s (%s), want web:v5", img, marker)
		}
		applied = good
	})

	t.Run("ForgedSignatureIsRefusedWithoutGitTraffic", func(t *testing.T) {
		w.t = t
		cur, err := w.JournalCursor()
		must(t, err)
		headBefore := w.head()
		fetchOK := w.metric(`webhookd_git_fetches_total{repo="infra",result="ok"}`)
		w.MustRun(t, "echo 'not for the host' > "+whWork+"/NOTES.md")
		c := w.commit("notes")
		for _, d := range []whDelivery{
			{forge: "github", ref: "refs/heads/main", after: c, forgeWith: "guessed-secret-guessed"},
			{forge: "gitea", ref: "refs/heads/main", after: c, forgeWith: "guessed-secret-guessed"},
			{forge: "gitlab", ref: "refs/heads/main", after: c, forgeWith: "guessed-secret-guessed"},
		} {
			if code, reply := w.push(d); code != 401 {
				t.Fatalf("forged %s push: %d %s", d.forge, code, reply)
			}
		}
		body, _ := w.request(whDelivery{forge: "github", ref: "refs/heads/main", after: c})
		if code, reply := w.post("/hooks/infra", body, []string{"X-GitHub-Event: push", "X-GitHub-Delivery: unsigned-1"}); code != 401 {
			t.Fatalf("unsigned push: %d %s", code, reply)
		}
		time.Sleep(2 * time.Second) // room for a fetch that must not happen
		if h := w.head(); h != headBefore {
			t.Fatalf("checkout HEAD moved %s → %s", headBefore, h)
		}
		if n := w.fetchesLogged(cur); n != 0 {
			t.Fatalf("sshd logged %d logins with the deploy key after forged deliveries", n)
		}
		if f := w.metric(`webhookd_git_fetches_total{repo="infra",result="ok"}`); f != fetchOK {
			t.Fatalf("fetches went %v → %v", fetchOK, f)
		}
		if n := w.metric(`webhookd_deliveries_total{outcome="unauthorized",repo="infra"}`); n != 4 {
			t.Fatalf("unauthorized deliveries = %v, want 4", n)
		}
		// The same check sees a real fetch: the count above is not blind.
		if code, _ := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: c}); code != 202 {
			t.Fatal("signed push refused")
		}
		w.waitStatus("notes commit applied", func(s whStatus) bool { return s.LastApplied == c })
		if n := w.fetchesLogged(cur); n == 0 {
			t.Fatalf("sshd logged no login with the deploy key %s for a real fetch", w.keyFP)
		}
		applied = c
	})

	t.Run("ReplayOtherBranchOversized", func(t *testing.T) {
		w.t = t
		before := w.deploys()
		d := whDelivery{forge: "github", ref: "refs/heads/main", after: applied, id: "replay-me"}
		if code, reply := w.push(d); code != 202 {
			t.Fatalf("first delivery: %d %s", code, reply)
		}
		if code, reply := w.push(d); code != 409 || !strings.Contains(reply, "replay") {
			t.Fatalf("replayed delivery: %d %s", code, reply)
		}
		// The same signed body under a fresh delivery id (the id is not
		// signed) is the same delivery.
		again := whDelivery{forge: "github", ref: "refs/heads/main", after: applied, id: "replay-me-under-another-id", nonce: "replay-me"}
		if code, reply := w.push(again); code != 409 || !strings.Contains(reply, "replay") {
			t.Fatalf("the signed body replayed under a fresh id: %d %s", code, reply)
		}
		w.waitStatus("the one delivery's deploy", func(s whStatus) bool { return s.State == "idle" && s.Queued == "" })

		w.MustRun(t, "cd "+whWork+" && git push -q origin HEAD:dev")
		if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/dev", after: applied}); code != 202 || !strings.Contains(reply, `"ignored"`) || !strings.Contains(reply, "refs/heads/dev") {
			t.Fatalf("other branch: %d %s", code, reply)
		}
		w.MustRun(t, "head -c 1048577 /dev/zero | tr '\\0' x > /tmp/wh-big")
		r := w.Run(whCurl("/hooks/infra", "/tmp/wh-big", []string{"X-GitHub-Event: push", "X-Hub-Signature-256: sha256=00"}))
		if !strings.HasPrefix(r.Stdout, "413\n") {
			t.Fatalf("oversized body: %s", r)
		}
		time.Sleep(time.Second)
		if n := w.deploys(); n != before+1 {
			t.Fatalf("deploys went %v → %v, want exactly one (the first delivery)", before, n)
		}
	})

	t.Run("BurstOf20PushesCoalesces", func(t *testing.T) {
		w.t = t
		out := w.MustRun(t, `cd `+whWork+` && f=`+w.specDir+`/web.json && for i in $(seq 1 20); do
			jq --arg rev "burst-$i" '.unit.Container.Environment.REV = $rev' $f > $f.new && mv $f.new $f &&
			git commit -q -am "burst $i" && git push -q origin HEAD:main && git rev-parse HEAD || exit 1; done`)
		commits := strings.Fields(out)
		if len(commits) != 20 {
			t.Fatalf("made %d commits: %q", len(commits), out)
		}
		before := w.deploys()
		// One curl posts all 20 at once (--parallel), so they arrive within
		// milliseconds of each other even on a loaded machine.
		args := []string{"curl", "-sS", "--parallel", "--parallel-immediate", "--parallel-max", "20"}
		for i, c := range commits {
			body, headers := w.request(whDelivery{forge: "github", ref: "refs/heads/main", after: c})
			f := fmt.Sprintf("/tmp/wh-burst-%d.json", i)
			must(t, w.WriteFile(f, body, 0o644))
			if i > 0 {
				args = append(args, "--next")
			}
			args = append(args, "-o", "/dev/null", "-w", `%{http_code}\n`, "-X", "POST", "-H", "Content-Type: application/json")
			for _, h := range headers {
				args = append(args, "-H", h)
			}
			args = append(args, "--data-binary", "@"+f, whURL+"/hooks/infra")
		}
		t0 := time.Now()
		if n := strings.TrimSpace(w.MustRun(t, testhost.QuoteArgs(args...)+" | grep -c '^202$'")); n != "20" {
			t.Fatalf("%s of 20 pushes answered 202", n)
		}
		t.Logf("20 pushes posted in %s", time.Since(t0).Round(time.Millisecond))
		last := commits[19]
		st := w.waitStatus("last burst commit applied", func(s whStatus) bool {
			return s.LastApplied == last && s.State == "idle" && s.Queued == ""
		})
		n := w.deploys() - before
		t.Logf("deploys for 20 pushes: %v; last covered %d pushes", n, st.Last.Pushes)
		if n < 1 || n > 2 {
			t.Fatalf("%v deploys for a burst of 20 pushes, want at most 2", n)
		}
		if _, _, rev := w.running(); rev != "burst-20" {
			t.Fatalf("web runs REV=%s, want burst-20", rev)
		}
		applied = last
	})

	t.Run("CommitNotOnBranchFailsCleanly", func(t *testing.T) {
		w.t = t
		w.waitStatus("no deploy running or queued", func(s whStatus) bool { return s.State == "idle" && s.Queued == "" })
		inv := prop(t, w.Host, "web.service", "InvocationID")
		failed := w.metric(`webhookd_deploys_total{repo="infra",result="failed"}`)
		w.MustRun(t, "cd "+whWork+" && git checkout -q -b side")
		w.writeSpec("localhost:5000/web:v1", "side", "")
		side := strings.TrimSpace(w.MustRun(t, "cd "+whWork+" && git commit -q -am side && git push -q origin side && git rev-parse HEAD && git checkout -q main"))
		if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: side}); code != 202 {
			t.Fatalf("push: %d %s", code, reply)
		}
		st := w.waitStatus("failure", func(s whStatus) bool { return s.Last != nil && s.Last.Commit == side && s.State == "idle" })
		if st.Last.Result != "failed" || !strings.Contains(st.LastError, "not reachable from main") || st.LastApplied != applied {
			t.Fatalf("status: %+v %+v", st, st.Last)
		}
		if f := w.metric(`webhookd_deploys_total{repo="infra",result="failed"}`); f != failed+1 {
			t.Fatalf("failed deploys %v → %v", failed, f)
		}
		if now := prop(t, w.Host, "web.service", "InvocationID"); now != inv {
			t.Fatal("web was restarted by a failed deploy")
		}
		if _, _, rev := w.running(); rev != "burst-20" {
			t.Fatalf("web runs REV=%s", rev)
		}
		if h := w.head(); h != applied {
			t.Fatalf("checkout HEAD %s, want the applied %s", h, applied)
		}
	})

	t.Run("UnreachableRemoteOrChangedHostKeyFailsCleanly", func(t *testing.T) {
		w.t = t
		inv := prop(t, w.Host, "web.service", "InvocationID")
		w.writeSpec("localhost:5000/web:v5", "unreachable", "")
		c := w.commit("web v5 while the remote is away")
		w.MustRun(t, "cp /etc/syslet/known_hosts /root/known_hosts.good")
		restore := func() {
			w.MustRun(t, "cp /root/known_hosts.good /etc/syslet/known_hosts")
			w.writeConfig("ssh://root@127.0.0.1/srv/git/infra.git")
			w.MustRun(t, "systemctl restart webhookd.service")
		}
		t.Cleanup(func() {
			if t.Failed() { // leave the next subtests a working daemon
				restore()
			}
		})
		otherKey, _, _ := ed25519.GenerateKey(rand.Reader)
		ok, _ := ssh.NewPublicKey(otherKey)
		wrongKey := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(ok)))
		for _, tc := range []struct {
			name, url, knownHosts, want string
		}{
			{"unreachable", "ssh://root@127.0.0.1:1/srv/git/infra.git", "$(cat /root/known_hosts.good)\n[127.0.0.1]:1 $(cut -d' ' -f1,2 /etc/ssh/ssh_host_ed25519_key.pub)", "connection refused"},
			{"changed host key", "ssh://root@127.0.0.1/srv/git/infra.git", "127.0.0.1 " + wrongKey, "does not match /etc/syslet/known_hosts"},
		} {
			w.writeConfig(tc.url)
			w.MustRun(t, "printf '%s\\n' \""+tc.knownHosts+"\" > /etc/syslet/known_hosts && systemctl restart webhookd.service")
			if st := w.status(); st.LastApplied != applied {
				t.Fatalf("%s: status after restart lost the applied commit: %+v", tc.name, st)
			}
			if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: c}); code != 202 {
				t.Fatalf("%s: push: %d %s", tc.name, code, reply)
			}
			st := w.waitStatus(tc.name+" failure", func(s whStatus) bool {
				return s.Last != nil && s.Last.Commit == c && s.State == "idle" && strings.Contains(s.LastError, tc.want)
			})
			if st.Last.Result != "failed" || st.Last.Stage != "fetch" || !strings.Contains(st.LastError, tc.want) || st.LastApplied != applied {
				t.Fatalf("%s: status %+v", tc.name, st.Last)
			}
			t.Logf("%s: %s", tc.name, st.LastError)
			if f := w.metric(`webhookd_deploys_total{repo="infra",result="failed"}`); f != 1 {
				t.Fatalf("%s: failed deploys = %v, want 1", tc.name, f)
			}
			if f := w.metric(`webhookd_git_fetches_total{repo="infra",result="error"}`); f != 1 {
				t.Fatalf("%s: fetch errors = %v, want 1", tc.name, f)
			}
			if now := prop(t, w.Host, "web.service", "InvocationID"); now != inv {
				t.Fatalf("%s: web was restarted", tc.name)
			}
		}
		// Back to the real remote: the same commit deploys.
		restore()
		if code, _ := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: c}); code != 202 {
			t.Fatal("push refused")
		}
		w.waitStatus("v5 applied", func(s whStatus) bool { return s.LastApplied == c })
		if img, _, rev := w.running(); img != "localhost:5000/web:v5" || rev != "unreachable" {
			t.Fatalf("web runs %s REV=%s", img, rev)
		}
		applied = c
	})

	t.Run("SurvivesAThousandMalformedRequests", func(t *testing.T) {
		w.t = t
		pid := w.mainPID()
		rssBefore := w.rss()
		// A body whose signature is right but which is not a push payload:
		// each such delivery is verified, then refused (400), and its id
		// lands in the bounded replay memory.
		must(t, w.WriteFile("/tmp/wh-garbage", []byte("{"), 0o644))
		w.MustRun(t, "head -c 2097152 /dev/zero > /tmp/wh-2m")
		sig := whSign(w.secret, []byte("{"))
		// One curl process sends them one after the other (a config file of
		// 1000 requests separated by "next"), reusing connections where the
		// server keeps them: five kinds, 200 of each.
		var cfg strings.Builder
		for i := 1; i <= 1000; i++ {
			if i > 1 {
				cfg.WriteString("next\n")
			}
			cfg.WriteString("request = \"POST\"\noutput = \"/dev/null\"\nwrite-out = \"%{http_code}\\n\"\n")
			switch i % 5 {
			case 0: // unsigned
				fmt.Fprintf(&cfg, "data = \"garbage\"\nurl = \"%s/hooks/infra\"\n", whURL)
			case 1: // wrong signature and token
				fmt.Fprintf(&cfg, "header = \"X-Hub-Signature-256: sha256=deadbeef\"\nheader = \"X-Gitlab-Token: x\"\ndata = \"garbage\"\nurl = \"%s/hooks/infra\"\n", whURL)
			case 2: // signed, but not a push payload; a fresh delivery id each
				fmt.Fprintf(&cfg, "header = \"X-GitHub-Event: push\"\nheader = \"X-GitHub-Delivery: junk-%d\"\nheader = \"X-Hub-Signature-256: sha256=%s\"\ndata-binary = \"@/tmp/wh-garbage\"\nurl = \"%s/hooks/infra\"\n", i, sig, whURL)
			case 3: // unknown repository, a new name each time
				fmt.Fprintf(&cfg, "data = \"x\"\nurl = \"%s/hooks/no-such-repo-%d\"\n", whURL, i)
			case 4: // 2 MiB, chunked (no Content-Length to refuse early)
				fmt.Fprintf(&cfg, "header = \"Transfer-Encoding: chunked\"\ndata-binary = \"@/tmp/wh-2m\"\nurl = \"%s/hooks/infra\"\n", whURL)
			}
		}
		must(t, w.WriteFile("/tmp/wh-junk.curlrc", []byte(cfg.String()), 0o644))
		script := "curl -sS -K /tmp/wh-junk.curlrc | sort | uniq -c"
		t0 := time.Now()
		res := w.Run(script) // curl's exit status is its last transfer's; the counts below are what matters
		out := res.Stdout
		t.Logf("1000 malformed requests in %s:\n%s", time.Since(t0).Round(time.Millisecond), out)
		counts := map[string]int{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(l)
			if len(f) == 2 {
				counts[f[1]], _ = strconv.Atoi(f[0])
			}
		}
		if counts["401"] != 400 || counts["400"] != 200 || counts["404"] != 200 || counts["413"] != 200 {
			t.Fatalf("answers: %v\n%s", counts, res)
		}
		if now := w.mainPID(); now != pid {
			t.Fatalf("webhookd restarted (pid %s → %s)", pid, now)
		}
		rssAfter := w.rss()
		t.Logf("VmRSS before %d kB, after %d kB", rssBefore, rssAfter)
		if rssAfter > rssBefore+64*1024 {
			t.Fatalf("VmRSS grew from %d kB to %d kB", rssBefore, rssAfter)
		}
		// Still serves a good one.
		w.writeSpec("localhost:5000/web:v5", "after-junk", "")
		c := w.commit("after junk")
		if code, reply := w.push(whDelivery{forge: "gitlab", ref: "refs/heads/main", after: c}); code != 202 {
			t.Fatalf("good push after junk: %d %s", code, reply)
		}
		w.waitStatus("good push applied", func(s whStatus) bool { return s.LastApplied == c })
		if _, _, rev := w.running(); rev != "after-junk" {
			t.Fatalf("web runs REV=%s", rev)
		}
		applied = c
	})

	t.Run("PollModeDeploysWithoutWebhooks", func(t *testing.T) {
		w.t = t
		// A host the forge cannot reach: no secret, no webhooks, a timer.
		w.writeConfigLines("ssh://root@127.0.0.1/srv/git/infra.git", "    poll: 5s")
		w.MustRun(t, "systemctl restart webhookd.service")
		w.writeSpec("localhost:5000/web:v4", "polled", "")
		c := w.commit("found by polling")
		st := w.waitStatus("polled commit applied", func(s whStatus) bool { return s.LastApplied == c })
		if img, _, rev := w.running(); img != "localhost:5000/web:v4" || rev != "polled" {
			t.Fatalf("web runs %s REV=%s", img, rev)
		}
		if st.Last.Result != "success" {
			t.Fatalf("status: %+v", st.Last)
		}
		body, headers := w.request(whDelivery{forge: "github", ref: "refs/heads/main", after: c})
		if code, reply := w.post("/hooks/infra", body, headers); code != 401 {
			t.Fatalf("a signed push to a repository without a secret: %d %s", code, reply)
		}
		// Polls of an applied tip deploy nothing.
		before := w.deploys()
		time.Sleep(12 * time.Second)
		if n := w.deploys(); n != before {
			t.Fatalf("deploys went %v → %v while the branch stood still", before, n)
		}
		w.writeConfig("ssh://root@127.0.0.1/srv/git/infra.git")
		w.MustRun(t, "systemctl restart webhookd.service")
		applied = c
	})

	t.Run("StopWaitsForTheRunningDeploy", func(t *testing.T) {
		w.t = t
		// A start that takes 8 s keeps the deploy running while we stop webhookd.
		w.writeSpec("localhost:5000/web:v5", "slow", "/bin/sleep 8")
		c := w.commit("slow start")
		cur, err := w.JournalCursor()
		must(t, err)
		if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: c}); code != 202 {
			t.Fatalf("push: %d %s", code, reply)
		}
		w.waitStatus("deploy running", func(s whStatus) bool { return s.State == "deploying" })
		t0 := time.Now()
		w.MustRun(t, "systemctl stop webhookd.service")
		took := time.Since(t0)
		t.Logf("systemctl stop took %s", took.Round(time.Millisecond))
		if r := prop(t, w.Host, "webhookd.service", "Result"); r != "success" {
			t.Fatalf("webhookd stopped with result %s", r)
		}
		if st := prop(t, w.Host, "web.service", "ActiveState"); st != "active" {
			t.Fatalf("web.service is %s after the stop", st)
		}
		if _, _, rev := w.running(); rev != "slow" {
			t.Fatalf("web runs REV=%s: the deploy did not finish", rev)
		}
		saved := w.MustRun(t, "cat /var/lib/syslet/webhookd/.status/infra.json")
		if !strings.Contains(saved, `"lastApplied": "`+c+`"`) {
			t.Fatalf("saved status lacks the commit:\n%s", saved)
		}
		log, err := w.JournalSince(cur, "-u", "webhookd.service", "-o", "cat")
		must(t, err)
		fin := strings.Index(log, `"deploy finished"`)
		stop := strings.Index(log, `"webhookd stopped"`)
		if fin < 0 || stop < 0 || fin > stop || !strings.Contains(log[:min(len(log), fin+200)], `"result":"success"`) {
			t.Fatalf("want a successful 'deploy finished' before 'webhookd stopped':\n%s", log)
		}
		w.MustRun(t, "grep -q "+testhost.Quote(`"source":"git infra@`+c+`"`)+" /var/lib/syslet/runs.jsonl")
	})
}
