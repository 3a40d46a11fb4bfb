//go:build integration

package integration

// Issue 38's acceptance for `syslet push` rollouts, on five real test
// hosts booted at once: a bad image stops at its canary and the other
// hosts are never even connected to; the fixed image goes out batch by
// batch, in order; a container killed by hand during a pause stops the
// rollout before the next batch. Every claim is checked on the guests
// (systemd's InvocationIDs and start times, sshd's own journal), not only
// in push's output.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/push"
)

// fleet is n test hosts with syslet, podman's socket and the app's images
// in each registry: app:v1 and app:v3 run, app:v2 exits at once.
type fleet struct {
	t     *testing.T
	e     *pushEnv
	hosts []*testhost.Host
	names []string
	// remote is push's --remote-command: the gates' soak cut to 1 s where
	// a good image only has to stay up.
	remote string
}

func newFleet(t *testing.T, n int) *fleet {
	t.Helper()
	f := &fleet{t: t, e: newPushEnv(t), hosts: testhost.StartN(t, n), remote: "syslet --soak 1s"}
	f.each(func(_ int, h *testhost.Host) error {
		if err := h.CopyIn(sysletBin, "/usr/local/bin/syslet"); err != nil {
			return err
		}
		ep, _ := json.Marshal([]string{"/bin/sh", "-c", "echo broken image; exit 3", "--"})
		r := h.Run("systemctl enable --now podman.socket && testhost-mkimage app:v1 v1 && testhost-mkimage app:v3 v3 && " +
			fmt.Sprintf(`d=$(mktemp -d) && printf 'FROM localhost:5000/app:v1\nENTRYPOINT %s\n' > $d/Containerfile && `, ep) +
			"podman build -q --tls-verify=false -t localhost:5000/app:v2 $d >/dev/null && podman push -q --tls-verify=false localhost:5000/app:v2 && podman rmi -f localhost:5000/app:v2 >/dev/null")
		if !r.OK() {
			return fmt.Errorf("%s: preparing: %s", h.Name(), r)
		}
		return nil
	})
	for i, h := range f.hosts {
		name := fmt.Sprintf("web%d", i+1)
		f.names = append(f.names, name)
		f.e.addHost(name, h.Port())
		f.e.trust(h, hostKey(t, h))
	}
	return f
}

// each runs fn on every host at once and fails the test with every error.
func (f *fleet) each(fn func(i int, h *testhost.Host) error) {
	f.t.Helper()
	errs := make([]error, len(f.hosts))
	var wg sync.WaitGroup
	for i, h := range f.hosts {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = fn(i, h) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		f.t.Fatal(err)
	}
}

// specs writes the app's spec (its image version and an environment
// revision) and returns the directory.
func (f *fleet) specs(image string, rev int) string {
	spec := fmt.Sprintf(`{"apiVersion":"v1","type":"container","name":"app","unit":{"Container":{"Image":"localhost:5000/app:%s","RunInit":"true","Exec":"sleep 100000","Environment":{"REV":"%d"}}}}`, image, rev)
	return f.e.writeSpecs(fmt.Sprintf("specs-%s-%d", image, rev), map[string]string{"app.json": spec + "\n"})
}

// rollout runs `syslet push` of dir to every host, in order, with
// f.remote, printing its JSON document, and returns it.
func (f *fleet) rollout(dir string, extra ...string) (pushResult, push.Document) {
	f.t.Helper()
	args := append([]string{"--remote-command", f.remote, "--output", "json"}, extra...)
	r := f.e.push(append(append(args, f.names...), dir)...)
	return r, decodeDocument(f.t, r.stdout)
}

func decodeDocument(t *testing.T, stdout string) push.Document {
	t.Helper()
	var d push.Document
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("stdout is not push's JSON document: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Fatalf("stdout holds more than one JSON document:\n%s", stdout)
	}
	return d
}

// show reads systemd properties of app.service on h.
func show(t *testing.T, h *testhost.Host, props ...string) []string {
	t.Helper()
	out := h.MustRun(t, "systemctl show --value app.service -p "+strings.Join(props, ","))
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// TestPushRollout: five hosts booted at once, three rollouts in a row.
func TestPushRollout(t *testing.T) {
	t.Parallel()
	f := newFleet(t, 5)

	// Every host runs v1.
	if r, d := f.rollout(f.specs("v1", 1), "--parallel", "5"); r.code != 0 || d.Counts["applied"] != 5 {
		t.Fatalf("first deploy of v1: exit %d, counts %v\n%s", r.code, d.Counts, r)
	}
	invocation := map[string]string{}
	for i, h := range f.hosts[1:] {
		invocation[f.names[i+1]] = show(t, h, "InvocationID")[0]
	}
	cursors := make([]string, len(f.hosts))
	f.each(func(i int, h *testhost.Host) (err error) {
		if i > 0 {
			cursors[i], err = sshdVerbose(h)
		}
		return err
	})
	if !t.Run("one host that rolls back exits 4", func(t *testing.T) { f.t = t; oneRollsBack(f) }) {
		t.FailNow()
	}
	if !t.Run("bad image stops at the canary", func(t *testing.T) { f.t = t; badCanary(f, invocation, cursors) }) {
		t.FailNow()
	}
	if !t.Run("fixed image in three batches", func(t *testing.T) { f.t = t; fixedInBatches(f) }) {
		t.FailNow()
	}
	t.Run("a container killed during the pause stops the rollout", func(t *testing.T) { f.t = t; killedDuringPause(f) })
}

// oneRollsBack: a push of the bad image to one host, no rollout: the
// host rolls back, and push exits with the verdict's code, 4, as a local
// apply that rolls back does (issue 55: it exited 1).
func oneRollsBack(f *fleet) {
	t := f.t
	r := f.e.push("--output", "json", "web1", f.specs("v2", 2))
	d := decodeDocument(t, r.stdout)
	if r.code != 4 || d.ExitCode != 4 || len(d.Hosts) != 1 {
		t.Fatalf("one host rolled back: exit %d, document exit %d\n%s", r.code, d.ExitCode, r)
	}
	if h := d.Hosts[0]; h.Outcome != "rolled back" || h.Verdict != "rolled-back" || h.ExitCode == nil || *h.ExitCode != 4 || h.RollbackRun == "" {
		t.Errorf("web1: %+v", h)
	}
	mustContain(t, "table", r.stderr, "1 host(s): 1 rolled back")
	mustContain(t, "web1's image", f.hosts[0].MustRun(t, "podman inspect -f '{{.ImageName}}' app"), "app:v1")
}

// badCanary: a bad image, canary first: web1 rolls back, nobody else is
// touched, not even connected to.
func badCanary(f *fleet, invocation map[string]string, cursors []string) {
	t := f.t
	// The bad image exits at once, but on a loaded machine "at once" can
	// come after a 1 s soak window: the canary's gate gets its default 5 s.
	f.remote = "syslet"
	defer func() { f.remote = "syslet --soak 1s" }()
	r, d := f.rollout(f.specs("v2", 2), "--batch", "1,2")
	if r.code != 4 {
		t.Errorf("bad image: exit %d; want 4 (the rollout stopped on a host that rolled back)", r.code)
	}
	if d.Batches != 3 || d.ExitCode != 4 || len(d.Hosts) != 5 {
		t.Fatalf("document: batches %d, exit %d, %d hosts", d.Batches, d.ExitCode, len(d.Hosts))
	}
	canary := d.Hosts[0]
	if canary.Host != "web1" || canary.Batch != 1 || canary.Outcome != "rolled back" || canary.ExitCode == nil || *canary.ExitCode != 4 ||
		canary.Run == "" || canary.RollbackRun == "" || !strings.Contains(canary.Reason, "failed its health gate") {
		t.Errorf("canary: %+v", canary)
	}
	st := d.Stopped
	if st == nil || st.Host != "web1" || st.Batch != 1 || st.Outcome != "rolled back" || st.Interrupted || st.Failed != 1 || st.Allowed != 0 ||
		!strings.Contains(st.Reason, "app.service") || !strings.Contains(st.Message, "web1 rolled back in batch 1") {
		t.Errorf("stopped: %+v", st)
	}
	for i, want := range []int{2, 2, 3, 3} {
		h := d.Hosts[i+1]
		if h.Outcome != "not reached" || h.Batch != want || h.ExitCode != nil || h.Started != nil {
			t.Errorf("%s: %+v; want not reached in batch %d", h.Host, h, want)
		}
	}
	mustContain(t, "table", r.stderr, "Rollout stopped: web1 rolled back in batch 1", "not reached (never connected to, left as they were): web2, web3, web4, web5", "5 host(s): 4 not reached, 1 rolled back")
	if got := show(t, f.hosts[0], "ActiveState")[0]; got != "active" {
		t.Errorf("canary app.service %s after its rollback", got)
	}
	mustContain(t, "canary's image", f.hosts[0].MustRun(t, "podman inspect -f '{{.ImageName}}' app"), "app:v1")
	for i, h := range f.hosts[1:] {
		name := f.names[i+1]
		if got := show(t, h, "InvocationID")[0]; got != invocation[name] {
			t.Errorf("%s: app.service InvocationID %s → %s; a host not reached was touched", name, invocation[name], got)
		}
		if log := sshdLog(t, h, cursors[i+1]); strings.Contains(log, "Connection from") || strings.Contains(log, "Accepted") {
			t.Errorf("%s: sshd saw a connection although the host was not reached:\n%s", name, log)
		}
	}

}

// fixedInBatches: the same commit fixed goes to all five in three
// batches, in order, on push's clock and on the hosts'.
func fixedInBatches(f *fleet) {
	t := f.t
	r, d := f.rollout(f.specs("v3", 3), "--batch", "1,2")
	if r.code != 0 || d.Stopped != nil || d.Counts["applied"] != 5 {
		t.Fatalf("fixed image: exit %d, counts %v, stopped %+v\n%s", r.code, d.Counts, d.Stopped, r)
	}
	batchOf := []int{1, 2, 2, 3, 3}
	var began, active []time.Time
	for i, h := range d.Hosts {
		if h.Batch != batchOf[i] || h.Outcome != "applied" || h.Run == "" || h.Started == nil {
			t.Errorf("%s: %+v; want applied in batch %d", h.Host, h, batchOf[i])
			continue
		}
		began = append(began, *h.Started)
		// When systemd on the host last brought app.service up: the
		// guests share this machine's kernel, so their monotonic clocks
		// compare.
		us, _ := strconv.ParseInt(show(t, f.hosts[i], "ActiveEnterTimestampMonotonic")[0], 10, 64)
		active = append(active, time.Unix(0, us*1000))
		mustContain(t, h.Host+"'s image", f.hosts[i].MustRun(t, "podman inspect -f '{{.ImageName}}' app"), "app:v3")
	}
	if len(began) == 5 {
		for i := range 5 {
			for k := range 5 {
				if batchOf[k] >= batchOf[i] {
					continue
				}
				end := began[k].Add(time.Duration(d.Hosts[k].Seconds * float64(time.Second)))
				if began[i].Before(end) {
					t.Errorf("%s (batch %d) began before %s (batch %d) ended", d.Hosts[i].Host, batchOf[i], d.Hosts[k].Host, batchOf[k])
				}
				if !active[i].After(active[k]) {
					t.Errorf("%s (batch %d) brought app.service up before %s (batch %d)", d.Hosts[i].Host, batchOf[i], d.Hosts[k].Host, batchOf[k])
				}
			}
		}
	}
}

// killedDuringPause: the canary's container killed by hand during the
// pause after its batch stops the rollout there; the next batches are not
// reached.
func killedDuringPause(f *fleet) {
	t := f.t
	specs := f.specs("v3", 4) // a new environment: every host it reaches restarts app
	others := map[string]string{}
	for i, h := range f.hosts[1:] {
		others[f.names[i+1]] = show(t, h, "InvocationID")[0]
	}

	args := []string{"push", "-F", f.e.sshConfig, "--known-hosts", f.e.knownHosts, "-i", f.e.key, "--remote-command", "syslet --soak 1s",
		"--output", "json", "--batch", "1,2", "--pause", "5s"}
	cmd := exec.Command(sysletBin, append(append(args, f.names...), specs)...)
	cmd.Env = append(os.Environ(), "HOME="+f.e.home, "SSH_AUTH_SOCK=")
	var stdout bytes.Buffer
	stderr := &lineWatch{want: "pausing 5s before looking at web1 again", seen: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-stderr.seen:
	case err := <-done:
		t.Fatalf("push ended (%v) before its pause:\n%s", err, stderr.String())
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("the pause never began:\n%s", stderr.String())
	}
	before := show(t, f.hosts[0], "InvocationID", "NRestarts")
	f.hosts[0].MustRun(t, "podman kill app >/dev/null")
	err := <-done
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	}
	t.Logf("$ syslet push … --batch 1,2 --pause 5s (the canary's container killed during the pause)\nexit %d after %s\n--- stdout\n%s--- stderr\n%s",
		code, time.Since(t0).Round(time.Millisecond), stdout.String(), stderr.String())
	if code != 1 {
		t.Errorf("exit %d; want 1 (a host failed after the pause)", code)
	}
	d := decodeDocument(t, stdout.String())
	web1 := d.Hosts[0]
	if web1.Outcome != "failed" || web1.Check == nil || len(web1.Check.Problems) == 0 ||
		!strings.Contains(web1.Reason, "after the 5s pause: app.service was restarted") {
		t.Errorf("web1: %+v (check %+v)", web1, web1.Check)
	}
	if st := d.Stopped; st == nil || st.Host != "web1" || !st.AfterPause || st.Batch != 1 {
		t.Errorf("stopped: %+v", d.Stopped)
	}
	for i, h := range d.Hosts[1:] {
		if h.Outcome != "not reached" || h.Batch != []int{2, 2, 3, 3}[i] {
			t.Errorf("%s: %+v; want not reached", h.Host, h)
		}
		if got := show(t, f.hosts[i+1], "InvocationID")[0]; got != others[h.Host] {
			t.Errorf("%s: app.service was started again although not reached", h.Host)
		}
	}
	mustContain(t, "push's progress", stderr.String(), "after the pause: web1 fell over", "rollout stopped: web1 failed after the pause that followed batch 1")
	after := show(t, f.hosts[0], "InvocationID", "NRestarts")
	t.Logf("web1 app.service InvocationID, NRestarts: %v during the pause → %v after", before, after)
}

// lineWatch collects a process's stderr and closes seen once a line
// containing want has been written.
type lineWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *lineWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
