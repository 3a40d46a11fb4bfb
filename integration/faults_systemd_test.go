//go:build integration

package integration

// systemd and podman misbehaving: a container whose ExecStop hangs, a
// unit that never leaves "activating", the system bus frozen (systemd
// slow to answer: every D-Bus call waits) before and in the middle of a
// run, and podman's API socket stopped, or its service frozen, while the
// run plans. Every run must end within its deadlines with a message that
// says what did not answer, and one plain run converges once the host
// answers again.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

// bounded runs syslet with args in the guest under a hard limit, so that
// a run that does not honour its own deadlines fails the test instead of
// hanging it; it returns the result and how long the run took.
func bounded(t *testing.T, h *testhost.Host, limit time.Duration, prefix string, args ...string) (testhost.Result, time.Duration) {
	t.Helper()
	t0 := time.Now()
	r := h.Run(fmt.Sprintf("%s timeout %d syslet %s", prefix, int(limit.Seconds()), testhost.QuoteArgs(args...)))
	took := time.Since(t0)
	if r.Code == 124 {
		t.Errorf("syslet %s did not end within %s: it waits without a deadline somewhere\n%s", strings.Join(args, " "), limit, r)
	}
	return r, took
}

func TestFaultSystemdAndPodman(t *testing.T) {
	t.Parallel()
	h := faultHost(t)

	t.Run("HungExecStop", func(t *testing.T) {
		// side.s installed unit stops for 6 s; the change restarts both.
		writeFaultSpecs(t, h, "/root/hang1", faultSpecs("localhost:5000/busybox:latest", "v1\n", nil, map[string]string{"ExecStop": "/bin/sleep 6"}))
		if r := syslet(h, "--soak", "0", "/root/hang1"); !r.OK() {
			t.Fatalf("installing the hanging ExecStop:\n%s", r)
		}
		writeFaultSpecs(t, h, "/root/hang2", faultSpecs("localhost:5000/busybox:latest", "v2\n", nil, map[string]string{"Environment": "V=2"}))
		before := contents(t, h, "/etc/containers")
		r, took := bounded(t, h, 120*time.Second, "", "--stop-timeout", "3s", "/root/hang2")
		t.Logf("exit %d after %s:\n%s", r.Code, took.Round(time.Millisecond), r.Stdout)
		if r.OK() || !strings.Contains(r.Stdout, "stopping side.service did not finish within 3s") {
			t.Errorf("want a failed stop naming side.service and the deadline:\n%s", r)
		}
		if !strings.Contains(r.Stdout, "Put the host back as it was") || !strings.Contains(r.Stdout, "side.service, web.service") {
			t.Errorf("the run must put the host back and start both again:\n%s", r.Stdout)
		}
		if _, s := serving(t, h); s != "v1" {
			t.Errorf("web serves %q after the failed run, want v1 again", s)
		}
		if st := prop(t, h, "side.service", "ActiveState"); st != "active" {
			t.Errorf("side.service is %s, want active again", st)
		}
		if after := contents(t, h, "/etc/containers"); after != before {
			t.Error("files under /etc/containers changed")
		}
		sane(t, h, true)
		// With the default stop timeout the next plain run waits the stop out.
		next := syslet(h, "--soak", testSoak, "/root/hang2")
		if !next.OK() {
			t.Fatalf("the next run:\n%s", next)
		}
		if _, s := serving(t, h); s != "v2" {
			t.Errorf("web serves %q, want v2", s)
		}
		recordFault(t, faultRow{Fault: "a container whose ExecStop hangs (6 s) against --stop-timeout 3s", Tries: 1, Survived: 1,
			DataLost: "none: web stopped for the batch was started again on its old files (serving v1 again); side started again once its stop ended",
			NextRun:  "this run: " + firstLine(r.Stdout, "FAILED 2.") + " / " + firstLine(r.Stdout, "Put the host back") + "; next run: " + nextRun(next.Stdout)})
	})

	t.Run("NeverActive", func(t *testing.T) {
		// A change after which web never leaves "activating": its
		// ExecStartPre never ends and systemd has no start timeout.
		writeFaultSpecs(t, h, "/root/stuck", faultSpecs("localhost:5000/busybox:latest", "stuck\n", map[string]string{"ExecStartPre": "/bin/sleep 3600", "TimeoutStartSec": "infinity"}, nil))
		r, took := bounded(t, h, 120*time.Second, "", "--timeout", "8s", "/root/stuck")
		t.Logf("exit %d after %s:\n%s", r.Code, took.Round(time.Millisecond), r.Stdout)
		if r.Code != 4 || !strings.Contains(r.Stdout, "web.service did not become active within 8s") || !strings.Contains(r.Stdout, "ROLLED BACK") {
			t.Errorf("want a start that times out, then a rollback (exit 4):\n%s", r)
		}
		if _, s := serving(t, h); s != "v2" {
			t.Errorf("web serves %q after the rollback, want v2", s)
		}
		if jobs := strings.TrimSpace(h.MustRun(t, "systemctl list-jobs --no-legend")); jobs != "" {
			t.Errorf("jobs left queued in systemd:\n%s", jobs)
		}
		if d := syslet(h, "--diff", "/root/hang2"); !strings.Contains(d.Stdout, "No changes") {
			t.Errorf("the host is not back at the last good generation:\n%s", d.Stdout)
		}
		sane(t, h, true)
		recordFault(t, faultRow{Fault: "a unit that never leaves activating (ExecStartPre that never ends) against --timeout 8s", Tries: 1, Survived: 1,
			DataLost: "none: rolled back to the last good generation (exit 4), serving v2 again", NextRun: "this run: " + firstLine(r.Stdout, "ROLLED BACK")})
	})

	dbus := strings.TrimSpace(h.MustRun(t, "systemctl show -P MainPID dbus.service"))
	t.Run("BusFrozenBeforeTheRun", func(t *testing.T) {
		writeFaultSpecs(t, h, "/root/bus1", faultSpecs("localhost:5000/busybox:latest", "bus1\n", nil, nil))
		before := contents(t, h, "/etc/containers")
		r, took := bounded(t, h, 60*time.Second, "kill -STOP "+dbus+"; trap 'kill -CONT "+dbus+"' EXIT;", "--dial-timeout", "3s", "--read-timeout", "3s", "/root/bus1")
		t.Logf("exit %d after %s: %s", r.Code, took.Round(time.Millisecond), r.Stderr)
		if r.OK() || !strings.Contains(r.Stderr, "connecting to systemd did not finish within 3s") || took > 20*time.Second {
			t.Errorf("want the dial deadline to end the run at once:\n%s", r)
		}
		if after := contents(t, h, "/etc/containers"); after != before {
			t.Error("files under /etc/containers changed")
		}
		next := syslet(h, "--soak", testSoak, "/root/bus1")
		if !next.OK() {
			t.Fatalf("the run with the bus back:\n%s", next)
		}
		if _, s := serving(t, h); s != "bus1" {
			t.Errorf("web serves %q, want bus1", s)
		}
		recordFault(t, faultRow{Fault: "systemd not answering: the system bus frozen (SIGSTOP) before the run", Tries: 1, Survived: 1,
			DataLost: "none: nothing changed", NextRun: "this run: " + firstLine(r.Stderr, "syslet:") + "; next run: " + nextRun(next.Stdout)})
	})

	t.Run("BusFrozenDuringTheRun", func(t *testing.T) {
		// The bus freezes for 15 s as soon as the run has written side's new
		// unit file: inside the apply, with the daemon-reload, the restarts
		// and the health gate still to come, however fast the machine is.
		// (A fixed delay once let a quick apply end before the freeze.)
		writeFaultSpecs(t, h, "/root/bus2", faultSpecs("localhost:5000/busybox:latest", "bus2\n", nil, map[string]string{"Environment": "V=bus2"}))
		freeze := fmt.Sprintf("(for i in $(seq 6000); do grep -qs V=bus2 /etc/containers/systemd/side.container && break; sleep 0.01; done; kill -STOP %[1]s; sleep 15; kill -CONT %[1]s) >/dev/null 2>&1 </dev/null & freezer=$!; trap 'kill $freezer 2>/dev/null; kill -CONT %[1]s' EXIT;", dbus)
		r, took := bounded(t, h, 90*time.Second, freeze, "--dial-timeout", "4s", "--read-timeout", "4s", "--stop-timeout", "4s", "--reload-timeout", "4s", "--timeout", "4s", "/root/bus2")
		t.Logf("exit %d after %s:\n%s\n%s", r.Code, took.Round(time.Millisecond), r.Stdout, r.Stderr)
		if r.OK() {
			t.Errorf("the run finished although the bus froze in the middle of it (it took %s)", took)
		} else if !strings.Contains(r.Stdout+r.Stderr, "within 4s") {
			t.Errorf("the failure must name the deadline that ended it:\n%s", r)
		}
		h.MustRun(t, "kill -CONT "+dbus)
		_, during := serving(t, h)
		next := syslet(h, "--soak", testSoak, "/root/bus2")
		if !next.OK() {
			t.Fatalf("the run with the bus back:\n%s", next)
		}
		if _, s := serving(t, h); s != "bus2" {
			t.Errorf("web serves %q, want bus2", s)
		}
		sane(t, h, true)
		lost := "none"
		if during != "bus1" {
			lost = fmt.Sprintf("none; web served %q (not bus1) until the next run: stopped by the run, it could not be started again while the bus did not answer", during)
		}
		recordFault(t, faultRow{Fault: "systemd slow to answer: the system bus frozen in the middle of an apply (once side's unit file is written), for 15 s (every deadline 4s)", Tries: 1, Survived: 1,
			DataLost: lost, NextRun: "this run: " + firstLine(r.Stdout+r.Stderr, "within 4s") + "; next run: " + nextRun(next.Stdout)})
	})

	t.Run("BusFrozenDuringTheGate", func(t *testing.T) {
		// Every change has landed: web serves the new page and side runs
		// again (a new invocation, active); the bus freezes while the
		// health gate soaks. Web alone is not enough: the two start side
		// by side, and a cold CI run once froze the bus while side was
		// still starting, so the gate soaked after the thaw and passed.
		// The gate's reads have a deadline of their own, so the run ends
		// naming it instead of waiting as long as the bus stays frozen.
		// Each probe has its own 1 s limit: while web restarts, a
		// connection to its published port can hang (CI once saw the
		// freeze never come).
		writeFaultSpecs(t, h, "/root/bus3", faultSpecs("localhost:5000/busybox:latest", "bus3\n", nil, map[string]string{"Environment": "V=bus3"}))
		landed := `[ "$(curl -sf --max-time 1 http://127.0.0.1:8080/)" = bus3 ] && [ "$(systemctl show -P InvocationID side.service)" != "$side" ] && systemctl -q is-active side.service`
		freeze := fmt.Sprintf("side=$(systemctl show -P InvocationID side.service); (for i in $(seq 3000); do %[2]s && break; sleep 0.02; done; kill -STOP %[1]s; sleep 15; kill -CONT %[1]s) >/dev/null 2>&1 </dev/null & freezer=$!; trap 'kill $freezer 2>/dev/null; kill -CONT %[1]s' EXIT;", dbus, landed)
		// Only the gate's reads meet the frozen bus, so only their deadline
		// is short: the stops and starts before it get room for a loaded
		// machine (at a load of 26 on two cores a stop once took over 4 s,
		// before any freeze).
		r, took := bounded(t, h, 90*time.Second, freeze, "--read-timeout", "4s", "--soak", "20s", "--dial-timeout", "4s", "--stop-timeout", "30s", "--reload-timeout", "30s", "--timeout", "30s", "/root/bus3")
		t.Logf("exit %d after %s:\n%s\n%s", r.Code, took.Round(time.Millisecond), r.Stdout, r.Stderr)
		if r.OK() {
			t.Errorf("the run passed its gate although the bus froze during it (it took %s)", took)
		} else if !strings.Contains(r.Stdout, "the gated units' state could not be read: the read did not finish within 4s") {
			t.Errorf("the gate's failure must name its read deadline:\n%s", r)
		}
		// Far sooner than the apply, the 20 s soak window and the 15 s
		// freeze together.
		if took > 45*time.Second {
			t.Errorf("the run took %s", took)
		}
		h.MustRun(t, "kill -CONT "+dbus)
		next := syslet(h, "--soak", testSoak, "/root/bus3")
		if !next.OK() {
			t.Fatalf("the run with the bus back:\n%s", next)
		}
		if _, s := serving(t, h); s != "bus3" {
			t.Errorf("web serves %q, want bus3", s)
		}
		sane(t, h, true)
		recordFault(t, faultRow{Fault: "systemd slow to answer while the health gate soaks: the system bus frozen once web serves the new page and side runs again, for 15 s (the reads' deadline 4s, soak 20s)", Tries: 1, Survived: 1,
			DataLost: "none", NextRun: "this run: " + firstLine(r.Stdout, "could not be read") + " (after " + took.Round(100*time.Millisecond).String() + "); next run: " + nextRun(next.Stdout)})
	})

	t.Run("PodmanSocketStopped", func(t *testing.T) {
		ref, err := h.MakeImage("busybox:v4", "marker-v4")
		must(t, err)
		writeFaultSpecs(t, h, "/root/pod1", faultSpecs(ref, "pod1\n", nil, nil))
		h.MustRun(t, "systemctl stop podman.socket podman.service")
		inv, was := serving(t, h)
		before := contents(t, h, "/etc/containers")
		r, took := bounded(t, h, 60*time.Second, "", "--read-timeout", "5s", "/root/pod1")
		t.Logf("exit %d after %s: %s", r.Code, took.Round(time.Millisecond), r.Stderr)
		if r.OK() || !strings.Contains(r.Stderr, "podman.socket") {
			t.Errorf("want a failure naming podman's API socket:\n%s", r)
		}
		if i, s := serving(t, h); i != inv || s != was {
			t.Errorf("web was touched: %s → %s, serves %q", inv, i, s)
		}
		if after := contents(t, h, "/etc/containers"); after != before {
			t.Error("files under /etc/containers changed")
		}
		h.MustRun(t, "systemctl start podman.socket")
		next := syslet(h, "--soak", testSoak, "/root/pod1")
		if !next.OK() {
			t.Fatalf("the run with the socket back:\n%s", next)
		}
		if _, s := serving(t, h); s != "pod1" {
			t.Errorf("web serves %q, want pod1", s)
		}
		recordFault(t, faultRow{Fault: "podman's API socket stopped while the run plans", Tries: 1, Survived: 1,
			DataLost: "none: nothing changed", NextRun: "this run: " + firstLine(r.Stderr, "podman") + "; next run: " + nextRun(next.Stdout)})
	})

	t.Run("PodmanFrozen", func(t *testing.T) {
		ref, err := h.MakeImage("busybox:v5", "marker-v5")
		must(t, err)
		writeFaultSpecs(t, h, "/root/pod2", faultSpecs(ref, "pod2\n", nil, nil))
		// podman's service, woken by its socket, freezes before the run asks it anything.
		freeze := `curl -sf --unix-socket /run/podman/podman.sock http://d/_ping >/dev/null && p=$(systemctl show -P MainPID podman.service) && kill -STOP $p && trap 'kill -CONT $p' EXIT &&`
		before := contents(t, h, "/etc/containers")
		r, took := bounded(t, h, 60*time.Second, freeze, "--read-timeout", "4s", "/root/pod2")
		t.Logf("exit %d after %s: %s", r.Code, took.Round(time.Millisecond), r.Stderr)
		if r.OK() || !strings.Contains(r.Stderr, "reading the host's state did not finish within 4s") {
			t.Errorf("want the read deadline to end the run:\n%s", r)
		}
		if after := contents(t, h, "/etc/containers"); after != before {
			t.Error("files under /etc/containers changed")
		}
		next := syslet(h, "--soak", testSoak, "/root/pod2")
		if !next.OK() {
			t.Fatalf("the run with podman back:\n%s", next)
		}
		if _, s := serving(t, h); s != "pod2" {
			t.Errorf("web serves %q, want pod2", s)
		}
		recordFault(t, faultRow{Fault: "podman's API service frozen (SIGSTOP) while the run plans", Tries: 1, Survived: 1,
			DataLost: "none: nothing changed", NextRun: "this run: " + firstLine(r.Stderr, "syslet:") + "; next run: " + nextRun(next.Stdout)})
	})
}
