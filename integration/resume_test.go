//go:build integration

package integration

// Issue 7's acceptance: an apply killed (SIGKILL) or stopped (SIGTERM) at
// any of the nine steps is resumed exactly by the next plain run; the lock
// names its holder, honours signals and times out; concurrent applies
// serialise; `syslet history` tells every run's result.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

const upgradeDir = "/root/upgrade"

// seedSpec is a new oneshot in the upgrade; every run appends a line to a
// file in the db-data volume, so the test can count its runs.
const seedSpec = `{"apiVersion":"v1","type":"container","name":"seed","desiredState":"oneshot","unit":{"Unit":{"After":"db.service"},"Container":{"Image":"localhost:5000/busybox:latest","Exec":"sh -c 'echo ran >> /var/lib/db/seed-runs'","Volume":"db-data.volume:/var/lib/db"}}}`

// upgradeHost boots a host running examples/demo-previous and prepares
// /root/upgrade: examples/ with web on a new image and a new oneshot, so
// that the upgrade's plan has actions in all nine steps.
func upgradeHost(t *testing.T) *testhost.Host {
	t.Helper()
	h := applyHost(t)
	apply(t, h, specDir+"/demo-previous")
	ref, err := h.MakeImage("busybox:v2", "marker-v2")
	must(t, err)
	h.MustRun(t, "mkdir -p "+upgradeDir+" && cp "+specDir+"/*.json "+upgradeDir+"/")
	editFile(t, h, upgradeDir+"/60-web.json", fmt.Sprintf(`if .name == "web" then .unit.Container.Image = %q else . end`, ref))
	must(t, h.WriteFile(upgradeDir+"/70-seed.json", []byte(seedSpec), 0o644))
	d := syslet(h, "--diff", upgradeDir)
	for s := 1; s <= 9; s++ {
		// An empty step prints as "  N. <name padded>  -".
		if regexp.MustCompile(fmt.Sprintf(`(?m)^  %d\. .* -$`, s)).MatchString(d.Stdout) {
			t.Fatalf("the upgrade plan has no action in step %d:\n%s", s, d)
		}
	}
	return h
}

// startPaused starts an apply of dir in the background that pauses after
// step n, and waits until it has paused. It returns the apply's pid.
func startPaused(t *testing.T, h *testhost.Host, n int, dir, log string) int {
	t.Helper()
	marker := fmt.Sprintf("/run/syslet/test-paused-%d", n)
	h.MustRun(t, "rm -f "+marker)
	h.MustRun(t, fmt.Sprintf("SYSLET_TEST_PAUSE_AFTER_STEP=%d setsid nohup syslet %s > %s 2>&1 < /dev/null & echo started", n, dir, log))
	if r := h.Eventually("test -s "+marker, 60*time.Second); !r.OK() {
		t.Fatalf("apply did not pause after step %d:\n%s", n, h.Run("cat "+log))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(h.MustRun(t, "cat "+marker)))
	must(t, err)
	return pid
}

// waitGone waits for a process to exit.
func waitGone(t *testing.T, h *testhost.Host, pid int) {
	t.Helper()
	if r := h.Eventually(fmt.Sprintf("! kill -0 %d 2>/dev/null", pid), 60*time.Second); !r.OK() {
		t.Fatalf("syslet (pid %d) did not exit", pid)
	}
}

type historyRun struct {
	Run        string `json:"run"`
	Result     string `json:"result"`
	Resumes    string `json:"resumes"`
	Source     string `json:"source"`
	Applied    int    `json:"applied"`
	NotReached int    `json:"notReached"`
	Actions    int    `json:"actions"`
}

func history(t *testing.T, h *testhost.Host) []historyRun {
	t.Helper()
	var runs []historyRun
	must(t, json.Unmarshal([]byte(h.MustRun(t, "syslet history --output json -n 100")), &runs))
	return runs
}

// checkUpgraded proves the host is exactly what /root/upgrade says, from
// systemd, podman and inside the containers.
func checkUpgraded(t *testing.T, h *testhost.Host) {
	t.Helper()
	for _, u := range []string{"app.service", "db.service", "web.service", "backend-network.service", "db-data-volume.service", "web-cache-volume.service"} {
		if st := prop(t, h, u, "ActiveState"); st != "active" {
			t.Errorf("%s is %s, want active", u, st)
		}
		if prop(t, h, u, "NeedDaemonReload") != "no" {
			t.Errorf("%s runs an old definition (NeedDaemonReload=yes)", u)
		}
	}
	if m := strings.TrimSpace(h.Run("podman exec web cat /etc/testhost-marker").Stdout); m != "marker-v2" {
		t.Errorf("web runs image marker %q, want marker-v2", m)
	}
	if got := h.Eventually("curl -fsS http://127.0.0.1:8080/ | grep -qx '<h1>shop</h1>'", 15*time.Second); !got.OK() {
		t.Errorf("web does not serve the new index.html:\n%s", h.Run("curl -sS http://127.0.0.1:8080/"))
	}
	if got := h.Eventually("curl -fsS http://127.0.0.1:9000/settings | grep -q reviews=off", 15*time.Second); !got.OK() {
		t.Errorf("app does not serve the new config (reviews=off):\n%s", h.Run("curl -sS http://127.0.0.1:9000/settings"))
	}
	if got := h.Run("podman exec app cat /etc/app/conf.d/20-features.conf").Stdout; !strings.Contains(got, "reviews=off") {
		t.Errorf("app's config dir inside the container: %q", got)
	}
	if d := prop(t, h, "db.service", "Description"); d != "shop database" {
		t.Errorf("db.service description %q", d)
	}
	runs := strings.TrimSpace(h.Run("cat $(podman volume inspect db-data --format '{{.Mountpoint}}')/seed-runs").Stdout)
	if runs != "ran" {
		t.Errorf("the new oneshot must have run exactly once; its runs file holds %q", runs)
	}
	if h.Run("test -e /etc/containers/systemd/legacy.container || podman volume exists legacy-cache").OK() {
		t.Errorf("legacy's unit or its Delete volume is still there")
	}
}

// resumeScenario interrupts the upgrade after step n with sig on h (an
// upgradeHost as the upgrade finds it), then proves a plain run resumes it
// exactly and a third run does nothing.
func resumeScenario(t *testing.T, h *testhost.Host, n int, sig string) {
	pid := startPaused(t, h, n, upgradeDir, "/root/first.log")
	h.MustRun(t, fmt.Sprintf("kill -%s %d", sig, pid))
	waitGone(t, h, pid)
	first := h.MustRun(t, "cat /root/first.log")
	if sig == "TERM" {
		if !strings.Contains(first, "Summary") || (n < 9 && (!strings.Contains(first, "interrupted") || !strings.Contains(first, "not reached:"))) {
			t.Errorf("a SIGTERM at step %d must end gracefully with a summary naming what was not reached:\n%s", n, first)
		}
	}
	r := apply(t, h, upgradeDir)
	t.Logf("resuming run after %s at step %d:\n%s", sig, n, r.Stdout)
	runs := history(t, h)
	if len(runs) < 2 {
		t.Fatalf("history has %d runs", len(runs))
	}
	interruptedRun, resume := runs[len(runs)-2], runs[len(runs)-1]
	wantFirst := map[string]string{"KILL": "unfinished", "TERM": "interrupted"}[sig]
	if interruptedRun.Result != wantFirst {
		t.Errorf("interrupted run %s result %q, want %q", interruptedRun.Run, interruptedRun.Result, wantFirst)
	}
	if resume.Result != "ok" && resume.Result != "no-changes" {
		t.Errorf("resuming run %s result %q", resume.Run, resume.Result)
	}
	if n == 9 && !strings.Contains(r.Stdout, "its health gate gave no verdict; judging its containers now") {
		// Every change landed before the signal, but not the gate's verdict.
		t.Errorf("after a %s at step 9 the next run must judge the interrupted run's containers:\n%s", sig, r.Stdout)
	}
	if n < 9 {
		if !strings.Contains(r.Stdout, "previous run "+interruptedRun.Run+" did not finish; resuming") || resume.Resumes != interruptedRun.Run {
			t.Errorf("the second run must say it resumes %s (history: resumes %q):\n%s", interruptedRun.Run, resume.Resumes, r.Stdout)
		}
	}
	checkUpgraded(t, h)
	c := cursor(t, h)
	third := apply(t, h, upgradeDir)
	if !strings.Contains(third.Stdout, "No changes") {
		t.Errorf("third run must report no changes:\n%s", third.Stdout)
	}
	if jobs := deployJobs(t, h, c); len(jobs) > 0 {
		t.Errorf("third run made systemd work:\n%s", strings.Join(jobs, "\n"))
	}
	if failed := strings.TrimSpace(h.MustRun(t, "systemctl --failed --no-legend --plain")); failed != "" {
		t.Errorf("units left failed:\n%s", failed)
	}
}

// deployJobs is systemdJobs without podman's API service: reading the image
// and secret stores socket-activates it when it has timed out idle, which
// is podman's own on-demand lifecycle, not a unit syslet started.
func deployJobs(t *testing.T, h *testhost.Host, since string) []string {
	t.Helper()
	var jobs []string
	for _, j := range systemdJobs(t, h, since) {
		if !strings.Contains(j, "podman.service") {
			jobs = append(jobs, j)
		}
	}
	return jobs
}

func TestKillAtEveryStepResumes(t *testing.T) { atEveryStep(t, "KILL") }

func TestTermAtEveryStepResumes(t *testing.T) { atEveryStep(t, "TERM") }

// stepHosts is how many hosts share the nine steps of atEveryStep.
const stepHosts = 3

// atEveryStep runs resumeScenario for each of the nine steps, on three
// hosts side by side, each taking every third step. Between two steps a
// host is put back to where the upgrade starts (resetUpgrade, as the
// random kills do), which costs a third of booting and preparing a host.
func atEveryStep(t *testing.T, sig string) {
	t.Parallel()
	for i := range stepHosts {
		t.Run(fmt.Sprintf("host%d", i), func(t *testing.T) {
			t.Parallel()
			h := upgradeHost(t)
			for n := i + 1; n <= 9; n += stepHosts {
				ok := t.Run(fmt.Sprintf("step%d", n), func(t *testing.T) {
					if n > i+1 {
						resetUpgrade(t, h)
					}
					resumeScenario(t, h, n, sig)
				})
				if !ok {
					// The host is in an unknown state: the steps left on
					// it would fail for that, not for their own reason.
					t.Fatalf("step %d failed: steps after it on this host not run", n)
				}
			}
		})
	}
}

// The lock: a waiting apply names the holder, gives up after
// --lock-timeout, and ends at once on SIGTERM; two applies started
// together both finish, one after the other, and the later one wins.
func TestApplyLock(t *testing.T) {
	t.Parallel()
	h := upgradeHost(t)
	holder := startPaused(t, h, 3, upgradeDir, "/root/holder.log")
	before := snapshot(t, h)

	t0 := time.Now()
	r := syslet(h, "--lock-timeout", "2s", specDir)
	if r.Code == 0 || !strings.Contains(r.Stderr, fmt.Sprintf("pid %d", holder)) || !strings.Contains(r.Stderr, upgradeDir) {
		t.Errorf("--lock-timeout 2s against a held lock must fail naming pid %d and source %s:\n%s", holder, upgradeDir, r)
	}
	if d := time.Since(t0); d > 15*time.Second {
		t.Errorf("--lock-timeout 2s took %s", d)
	}

	h.MustRun(t, "setsid nohup syslet "+specDir+" > /root/waiter.log 2>&1 < /dev/null & echo $! > /root/waiter.pid")
	if r := h.Eventually("grep -q 'waiting for it to finish' /root/waiter.log", 30*time.Second); !r.OK() {
		t.Fatalf("second apply does not say it waits:\n%s", h.Run("cat /root/waiter.log"))
	}
	waiter := strings.TrimSpace(h.MustRun(t, "cat /root/waiter.pid"))
	// Time the exit inside the guest: SSH round trips are not the apply's.
	out := h.MustRun(t, "s=$(date +%s%N); kill -TERM "+waiter+"; while kill -0 "+waiter+" 2>/dev/null; do sleep 0.01; done; e=$(date +%s%N); echo $(( (e - s) / 1000000 ))")
	ms, err := strconv.Atoi(strings.TrimSpace(out))
	must(t, err)
	if ms > 1000 {
		t.Errorf("a waiting apply took %d ms to exit after SIGTERM, want under a second", ms)
	}
	wlog := h.MustRun(t, "cat /root/waiter.log")
	if !strings.Contains(wlog, "interrupted while waiting") {
		t.Errorf("the waiter should say it was interrupted while waiting:\n%s", wlog)
	}
	if snapshot(t, h) != before {
		t.Errorf("the interrupted waiter changed the host")
	}
	t.Logf("waiting apply exited %d ms after SIGTERM", ms)

	// Let the holder finish: SIGTERM ends it gracefully after step 3.
	h.MustRun(t, fmt.Sprintf("kill -TERM %d", holder))
	waitGone(t, h, holder)

	// Two applies at once: one of them waits; both finish; the final state
	// is the input of the one that ran last.
	h.MustRun(t, "mkdir -p /root/a /root/b && cp "+upgradeDir+"/*.json /root/a/ && cp "+upgradeDir+"/*.json /root/b/")
	for dir, text := range map[string]string{"/root/a": "<h1>from a</h1>\n", "/root/b": "<h1>from b</h1>\n"} {
		editFile(t, h, dir+"/60-web.json", fmt.Sprintf(`if .name == "web" then .configFiles[0].content = %q else . end`, text))
	}
	both := h.Run("syslet /root/a > /root/a.log 2>&1 & pa=$!; syslet /root/b > /root/b.log 2>&1 & pb=$!; wait $pa; ra=$?; wait $pb; rb=$?; echo $ra $rb")
	if strings.TrimSpace(both.Stdout) != "0 0" {
		t.Fatalf("both applies must succeed: %s\na: %s\nb: %s", both, h.Run("cat /root/a.log").Stdout, h.Run("cat /root/b.log").Stdout)
	}
	logs := h.MustRun(t, "cat /root/a.log /root/b.log")
	if !strings.Contains(logs, "waiting for it to finish") {
		t.Errorf("one of the two applies should have waited:\n%s", logs)
	}
	runs := history(t, h)
	last := runs[len(runs)-1]
	want := "<h1>from a</h1>"
	if last.Source == "/root/b" {
		want = "<h1>from b</h1>"
	}
	if got := h.Eventually("curl -fsS http://127.0.0.1:8080/ | grep -qx '"+want+"'", 15*time.Second); !got.OK() {
		t.Errorf("the later apply (%s) must win: web serves %s", last.Source, h.Run("curl -sS http://127.0.0.1:8080/").Stdout)
	}
	checkHistory(t, h)
}

// checkHistory reads `syslet history` (text and JSON) and checks every run
// of TestApplyLock is listed with its result.
func checkHistory(t *testing.T, h *testhost.Host) {
	t.Helper()
	runs := history(t, h)
	var results []string
	for _, r := range runs {
		results = append(results, r.Source+"="+r.Result)
	}
	got := strings.Join(results, " ")
	// demo-previous applied, the holder interrupted after step 3, the two
	// concurrent applies (the lock-timeout run and the SIGTERMed waiter
	// never took the lock, so they are not runs).
	for _, want := range []string{specDir + "/demo-previous=ok", upgradeDir + "=interrupted", "/root/a=ok", "/root/b=ok"} {
		if !strings.Contains(got, want) {
			t.Errorf("history lacks %s: %s", want, got)
		}
	}
	text := h.MustRun(t, "syslet history")
	if !strings.Contains(text, "interrupted") || !strings.Contains(text, "RESULT") {
		t.Errorf("syslet history text:\n%s", text)
	}
	one := h.MustRun(t, "syslet history "+runs[1].Run)
	if !strings.Contains(one, "not reached") || !strings.Contains(one, "write-unit") {
		t.Errorf("syslet history RUN of the interrupted run should list applied and not reached actions:\n%s", one)
	}
	t.Logf("syslet history:\n%s", text)
}

// An apply's --output json is one JSON document with the plan and the
// result; run as a systemd unit, its per-action log lines land in the
// journal with structured fields.
func TestApplyOutputAndJournalFields(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	r := h.Run("syslet --output json " + specDir)
	if !r.OK() {
		t.Fatalf("apply --output json:\n%s", r)
	}
	var doc struct {
		Run    string          `json:"run"`
		Plan   json.RawMessage `json:"plan"`
		Result struct {
			Applied []json.RawMessage `json:"applied"`
		} `json:"result"`
	}
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	if err := dec.Decode(&doc); err != nil || dec.More() {
		t.Fatalf("stdout must be exactly one JSON document (err %v, more %v):\n%s", err, dec.More(), r.Stdout)
	}
	if doc.Run == "" || len(doc.Plan) == 0 || len(doc.Result.Applied) == 0 {
		t.Errorf("the document lacks run, plan or result: %s", r.Stdout)
	}
	if !strings.Contains(r.Stderr, "Steps, in the order they run") {
		t.Errorf("the human plan belongs on stderr:\n%s", r.Stderr)
	}
	editSpec(t, h, "30-db.json", `.unit.Unit.Description = "db via systemd-run"`)
	h.MustRun(t, "systemd-run --wait --quiet -u syslet-apply -p StandardError=journal -p StandardOutput=journal syslet "+specDir)
	out := h.MustRun(t, "journalctl -u syslet-apply -o json --output-fields=SYSLET_RUN,SYSLET_OP,SYSLET_TARGET,SYSLET_RESULT,MESSAGE | grep SYSLET_OP")
	if !strings.Contains(out, `"SYSLET_OP":"daemon-reload"`) || !strings.Contains(out, `"SYSLET_RESULT":"applied"`) || !strings.Contains(out, `"SYSLET_RUN"`) {
		t.Errorf("structured journal fields missing:\n%s", out)
	}
}
