//go:build integration

package integration

// Issue 57's acceptance for labels and threshold promotion: hosts carry
// labels in the config repository (hosts/<host>/labels) and in webhookd's
// metrics; `syslet push --select` picks push targets by them, and
// `syslet wait-status --select --min-success` promotes a ring on a
// threshold, read from the forge's statuses or from a real Prometheus
// scraping the hosts' webhookd.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
	hostlabels "github.com/syslet/syslet/pkg/fleet"
)

// TestPushSelect: four hosts with labels; push --select role=web,site=fra
// applies on the two that carry both, and the other two see no SSH login
// at all (their sshd logs nothing since the push began).
func TestPushSelect(t *testing.T) {
	t.Parallel()
	hosts := []struct {
		name, labels string
		picked       bool
	}{
		{"web1", "role=web\nsite=fra\nring=canary\n", true},
		{"web2", "# the second web host in Frankfurt\nrole=web\nsite=fra\n", true},
		{"web3", "role=web\nsite=ams\n", false},
		{"db1", "role=db\nsite=fra\n", false},
	}
	hs := testhost.StartN(t, len(hosts))
	parallel(t, len(hosts), func(i int) error {
		if err := hs[i].CopyIn(sysletBin, "/usr/local/bin/syslet"); err != nil {
			return err
		}
		_, err := runErr(hs[i], "systemctl enable --now podman.socket")
		return err
	})
	e := newPushEnv(t)
	e.writeSpecs("hosts/common", map[string]string{"net.json": sharedNetwork})
	curs := make([]string, len(hosts))
	for i, h := range hosts {
		e.addHost(h.name, hs[i].Port())
		e.trust(hs[i], hostKey(t, hs[i]))
		e.writeSpecs("hosts/"+h.name, map[string]string{"app.json": sleeper("app-" + h.name), "labels": h.labels})
		curs[i] = verboseSSHD(t, hs[i])
	}

	r := e.push("--hosts-dir", "hosts", "--select", "role=web,site=fra")
	t.Logf("push --select role=web,site=fra (exit %d):\n%s", r.code, r)
	if r.code != 0 {
		t.Fatalf("exit %d; want 0", r.code)
	}
	mustContain(t, "selection", r.stderr, "syslet push: --select role=web,site=fra: 2 of 4 host(s): web1, web2")
	mustContain(t, "summary", r.stdout, "2 host(s): 2 applied")
	for i, h := range hosts {
		log := sshdLog(t, hs[i], curs[i])
		active := hs[i].Run("systemctl is-active app-" + h.name + ".service").OK()
		ls, err := hostlabels.ParseLabels(h.name, []byte(h.labels))
		must(t, err)
		t.Logf("%s (%s): picked %v, app active %v, logins %d", h.name, ls, h.picked, active, strings.Count(log, "Accepted publickey"))
		if h.picked {
			mustContain(t, h.name+"'s sshd log", log, "Accepted publickey for root")
			if !active {
				t.Errorf("%s: app-%s.service is not active after the push", h.name, h.name)
			}
			continue
		}
		if strings.Contains(log, "Accepted publickey") || strings.Contains(log, "Connection from") {
			t.Errorf("%s was not selected, but its sshd saw a connection:\n%s", h.name, log)
		}
		if active || hs[i].Run("test -e /etc/containers/systemd/app-"+h.name+".container").OK() {
			t.Errorf("%s was not selected, but its app was deployed", h.name)
		}
	}
}

// forwardLocal makes a loopback port of this machine reach addr on h's
// loopback (through its sshd), until t ends; it returns the local
// address. Prometheus on this side scrapes the guests' webhookd so.
func forwardLocal(t *testing.T, h *testhost.Host, addr string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close()
				out, err := h.Dial(addr)
				if err != nil {
					return
				}
				defer out.Close()
				done := make(chan struct{}, 2)
				go func() { io.Copy(out, in); done <- struct{}{} }()
				go func() { io.Copy(in, out); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	return ln.Addr().String()
}

// startPrometheus runs the Prometheus of this machine, scraping targets
// every second, until t ends; it returns its base URL once it is ready.
func startPrometheus(t *testing.T, targets []string) string {
	t.Helper()
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = strconv.Quote(tg)
	}
	url, _ := startPrometheusWith(t, func(string, string) string {
		return "global: {scrape_interval: 1s, scrape_timeout: 900ms}\nscrape_configs:\n  - job_name: webhookd\n    static_configs:\n      - targets: [" + strings.Join(quoted, ", ") + "]\n"
	})
	return url
}

// startPrometheusWith runs the Prometheus of this machine (Debian's
// prometheus package) with the configuration config returns, given the
// address it will listen on and its directory, until t ends; it returns
// its base URL once it is ready, and its process.
func startPrometheusWith(t *testing.T, config func(listen, dir string) string) (string, *os.Process) {
	t.Helper()
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	listen := ln.Addr().String()
	ln.Close()
	must(t, os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config(listen, dir)), 0o644))
	cmd := exec.Command("/usr/bin/prometheus", "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+listen, "--log.level=warn")
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	must(t, err)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Prometheus goes with the test process, however it ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	must(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		logf.Close()
	})
	url := "http://" + listen
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url, cmd.Process
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Fatalf("prometheus is not ready after a minute:\n%s", b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// promQuery runs an instant query and returns each series' labels.
func promQuery(t *testing.T, url, q string) []map[string]string {
	t.Helper()
	resp, err := http.PostForm(url+"/api/v1/query", neturl.Values{"query": {q}})
	must(t, err)
	defer resp.Body.Close()
	var ans struct {
		Data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
			} `json:"result"`
		} `json:"data"`
	}
	must(t, json.NewDecoder(resp.Body).Decode(&ans))
	var out []map[string]string
	for _, r := range ans.Data.Result {
		out = append(out, r.Metric)
	}
	return out
}

// TestRingThreshold: five webhookd hosts with labels (three canaries, two
// on main) polling one forge host, one canary stopped; the canary ring is
// promoted on --min-success 60% by its labels, read from the forge's
// statuses and from a real Prometheus scraping the five webhookd: a bad
// commit rolled back on the two running canaries fails fast (exit 1), a
// good one is promoted (exit 0) with the stopped canary named missing.
func TestRingThreshold(t *testing.T) {
	t0 := time.Now()
	hosts := testhost.StartN(t, 6)
	forge, fleetHosts := hosts[0], hosts[1:]
	t.Logf("six hosts up in %s", time.Since(t0).Round(time.Millisecond))
	creds := startReceiver(t, forge)
	must(t, forge.CopyIn(sysletBin, "/usr/local/bin/syslet"))
	forgeKey := strings.TrimSpace(forge.MustRun(t, "cut -d' ' -f1,2 /etc/ssh/ssh_host_ed25519_key.pub"))

	names := []string{"canary1", "canary2", "canary3", "main1", "main2"}
	labels := map[string]string{
		"canary1": "ring=canary\nrole=web\nsite=fra\n",
		"canary2": "ring=canary\nrole=web\nsite=ams\n",
		"canary3": "ring=canary\nrole=db\nsite=fra\n",
		"main1":   "ring=main\nrole=web\nsite=fra\n",
		"main2":   "ring=main\nrole=db\nsite=ams\n",
	}
	fleet := make([]*ringHost, len(fleetHosts))
	parallel(t, len(fleetHosts), func(i int) error {
		ring := "main"
		if strings.HasPrefix(names[i], "canary") {
			ring = "canary"
		}
		r, err := setUpRingHost(fleetHosts[i], names[i], ring, forgeKey, creds.forgeToken)
		if err != nil {
			return fmt.Errorf("%s: %w", names[i], err)
		}
		r.whHost = &whHost{Host: fleetHosts[i], t: t}
		fleet[i] = r
		return nil
	})
	canaries := fleet[:3]
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
	commitAll := func(t *testing.T, branch, image, rev string) string {
		t.Helper()
		forge.MustRun(t, "cd "+ringWork+" && { [ \"$(git symbolic-ref --short HEAD)\" = "+branch+" ] || git checkout -q "+branch+"; }")
		for _, r := range fleet {
			must(t, forge.WriteFile(ringWork+"/hosts/"+r.hostname+"/web.json", ringSpec(image, rev), 0o644))
			must(t, forge.WriteFile(ringWork+"/hosts/"+r.hostname+"/labels", []byte(labels[r.hostname]), 0o644))
		}
		return strings.TrimSpace(forge.MustRun(t, "cd "+ringWork+" && git add -A && git commit -q -m "+testhost.Quote(rev)+
			" && git push -q origin HEAD:"+branch+" && git rev-parse HEAD"))
	}
	c0 := commitAll(t, "main", "localhost:5000/web:v1", "initial")
	forge.MustRun(t, "git -C "+ringWork+" branch -q canary && git -C "+ringWork+" push -q origin canary")
	parallel(t, len(fleet), func(i int) error {
		_, err := runErr(fleet[i].Host, "systemctl start webhookd.service")
		return err
	})
	for _, r := range fleet {
		r.waitStatus("c0 applied", func(s whStatus) bool { return s.LastApplied == c0 && s.State == "idle" })
	}
	// canary3 goes down for maintenance: it reports nothing from now on.
	canaries[2].MustRun(t, "systemctl stop webhookd.service")

	// Prometheus on this side scrapes the five webhookd (canary3's scrape
	// fails).
	var targets []string
	for _, r := range fleet {
		targets = append(targets, forwardLocal(t, r.Host, "127.0.0.1:9090"))
	}
	prom := startPrometheus(t, targets)
	deadline := time.Now().Add(time.Minute)
	for len(promQuery(t, prom, `webhookd_host_info{ring="canary"}`)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("prometheus has no canary's webhookd_host_info after a minute: %v", promQuery(t, prom, "up"))
		}
		time.Sleep(time.Second)
	}
	t.Logf("prometheus sees: %v", promQuery(t, prom, "webhookd_host_info"))
	localHosts := t.TempDir()
	must(t, forge.CopyOut(ringWork+"/hosts", localHosts))

	const timeout = 5 * time.Minute
	viaForge := func(t *testing.T, commit string) (testhost.Result, time.Duration) {
		t1 := time.Now()
		r := forge.Run("syslet wait-status --forge gitea --api " + ringAPI + " --repo ops/infra --token-file " + rcvToken +
			" --hosts-dir " + ringWork + "/hosts --select ring=canary --min-success 60% --interval 2s --timeout " + timeout.String() + " " + commit)
		took := time.Since(t1)
		t.Logf("forge: syslet wait-status --select ring=canary --min-success 60%% (exit %d after %s):\n%s%s", r.Code, took.Round(time.Millisecond), r.Stdout, r.Stderr)
		return r, took
	}
	viaProm := func(t *testing.T, commit string) (int, string, time.Duration) {
		t1 := time.Now()
		cmd := exec.Command(sysletBin, "wait-status", "--prometheus", prom, "--hosts-dir", localHosts, "--select", "ring=canary",
			"--min-success", "60%", "--interval", "1s", "--timeout", timeout.String(), commit)
		out, err := cmd.CombinedOutput()
		took := time.Since(t1)
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			code, out = -1, []byte(err.Error())
		}
		t.Logf("prometheus: syslet wait-status --prometheus --select ring=canary --min-success 60%% (exit %d after %s):\n%s", code, took.Round(time.Millisecond), out)
		return code, string(out), took
	}

	// Both waits start together, as soon as the commit is pushed: each
	// sees the canaries deploy and decides on its own source.
	both := func(t *testing.T, commit string) (testhost.Result, time.Duration, int, string, time.Duration) {
		var (
			code      int
			out       string
			promTook  time.Duration
			promReady = make(chan struct{})
		)
		go func() {
			defer close(promReady)
			code, out, promTook = viaProm(t, commit)
		}()
		r, took := viaForge(t, commit)
		<-promReady
		return r, took, code, out, promTook
	}

	t.Run("BadCommitFailsFast", func(t *testing.T) {
		bad := commitAll(t, "canary", "localhost:5000/web:exits", "bad")
		r, took, code, out, promTook := both(t, bad)
		if r.Code != 1 || took >= timeout || !strings.Contains(r.Stdout, "failed on canary1 (failure), canary2 (failure): at most 1 of 3 host(s) can still succeed, 2 needed (--min-success 60%): do not promote it") {
			t.Fatalf("forge: want exit 1 naming both canaries: %s", r)
		}
		if strings.Contains(r.Stdout+out, "main1") || strings.Contains(r.Stdout+out, "main2") {
			t.Fatalf("a host of ring=main was waited for")
		}
		if code != 1 || promTook >= timeout || !strings.Contains(out, "failed on canary1 (rolled-back), canary2 (rolled-back): at most 1 of 3 host(s) can still succeed, 2 needed (--min-success 60%): do not promote it") {
			t.Fatalf("prometheus: want exit 1 naming both canaries")
		}
		for _, r := range canaries[:2] {
			r.t = t
			st := r.waitStatus("the bad commit rolled back", func(s whStatus) bool { return s.Last != nil && s.Last.Commit == bad && s.State == "idle" })
			if st.Last.Result != "rolled-back" || st.LastApplied != c0 {
				t.Fatalf("%s: %+v %+v", r.hostname, st, st.Last)
			}
		}
	})
	t.Run("GoodCommitPromotedWithACanaryMissing", func(t *testing.T) {
		good := commitAll(t, "canary", "localhost:5000/web:v2", "good")
		r, _, code, out, _ := both(t, good)
		if r.Code != 0 || !strings.Contains(r.Stdout, "2 of 3 host(s) succeeded, 2 needed (--min-success 60%): "+good[:12]+" may be promoted; not successful: canary3 (missing: no report)") {
			t.Fatalf("forge: want exit 0 naming canary3 missing: %s", r)
		}
		if code != 0 || !strings.Contains(out, "2 of 3 host(s) succeeded, 2 needed (--min-success 60%): "+good[:12]+" may be promoted; not successful: canary3 (missing: no report)") {
			t.Fatalf("prometheus: want exit 0 naming canary3 missing")
		}
		// Every host said so in its own metrics too.
		for _, s := range promQuery(t, prom, `webhookd_applied_commit_info{commit="`+good+`"} * on (job, instance, repo) group_left (host, ring) webhookd_host_info`) {
			t.Logf("applied %s: %s (ring %s)", good[:12], s["host"], s["ring"])
		}
	})
}
