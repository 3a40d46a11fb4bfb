//go:build guest

// These tests run as root inside a disposable test host with systemd as PID
// 1 and podman with quadlet (see integration/ and the testhost recipe). They
// install fixture units under /run/systemd/system and remove them again.
package systemd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/host"
)

const runtimeUnits = "/run/systemd/system"

func dial(t *testing.T) *Manager {
	t.Helper()
	m, err := Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// installUnit writes a fixture unit into dir and reloads systemd; cleanup
// stops it, removes the file, clears its failed state and reloads again.
func installUnit(t *testing.T, m *Manager, dir, file, content string) {
	t.Helper()
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	unit := strings.TrimSuffix(file, ".container") + ".service"
	t.Cleanup(func() {
		ctx := context.Background()
		_ = m.Stop(ctx, unit)
		os.Remove(path)
		_ = m.conn.ResetFailedUnitContext(ctx, unit)
		if err := m.DaemonReload(ctx); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	if err := m.DaemonReload(context.Background()); err != nil {
		t.Fatal(err)
	}
}

const (
	simpleUnit = `[Service]
ExecStart=/bin/sleep infinity
ExecReload=/bin/true
`
	onceUnit = `[Service]
Type=oneshot
ExecStart=/bin/true
`
	failUnit = `[Service]
Type=oneshot
ExecStart=/bin/sh -c 'echo syslet-fixture-boom; exit 3'
`
	slowUnit = `[Service]
Type=oneshot
ExecStart=/bin/sleep 3
`
	noReloadUnit = `[Service]
ExecStart=/bin/sleep infinity
`
)

func timed(t *testing.T, what string, f func() error) error {
	t.Helper()
	start := time.Now()
	err := f()
	t.Logf("timing: %s took %v", what, time.Since(start).Round(10*time.Microsecond))
	return err
}

func TestUnitStatesOneCall(t *testing.T) {
	m := dial(t)
	ctx := context.Background()
	installUnit(t, m, runtimeUnits, "syslet-t-simple.service", simpleUnit)
	installUnit(t, m, runtimeUnits, "syslet-t-once.service", onceUnit)
	if err := m.Start(ctx, "syslet-t-simple.service"); err != nil {
		t.Fatal(err)
	}
	names := []string{"syslet-t-simple.service", "syslet-t-once.service", "syslet-t-missing.service"}
	var states map[string]host.UnitState
	err := timed(t, "UnitStates(3 units)", func() (err error) {
		states, err = m.UnitStates(ctx, names)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("states: %+v", states)
	want := map[string][2]string{
		"syslet-t-simple.service":  {"loaded", "active"},
		"syslet-t-once.service":    {"loaded", "inactive"},
		"syslet-t-missing.service": {"not-found", "inactive"},
	}
	for name, w := range want {
		st := states[name]
		if st.Name != name || st.LoadState != w[0] || st.ActiveState != w[1] {
			t.Errorf("%s = %+v, want load %s active %s", name, st, w[0], w[1])
		}
	}
	if empty, err := m.UnitStates(ctx, nil); err != nil || len(empty) != 0 {
		t.Errorf("UnitStates(nil) = %v, %v", empty, err)
	}
}

func TestDaemonReloadTiming(t *testing.T) {
	m := dial(t)
	for i := range 3 {
		if err := timed(t, "DaemonReload #"+string(rune('1'+i)), func() error { return m.DaemonReload(context.Background()) }); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLifecycle(t *testing.T) {
	m := dial(t)
	ctx := context.Background()
	const u = "syslet-t-life.service"
	installUnit(t, m, runtimeUnits, u, simpleUnit)

	if err := timed(t, "Start(simple service)", func() error { return m.Start(ctx, u) }); err != nil {
		t.Fatal(err)
	}
	pid, err := m.MainPID(ctx, u)
	if err != nil || pid == 0 {
		t.Fatalf("MainPID after start = %d, %v", pid, err)
	}
	if err := timed(t, "Start(already active)", func() error { return m.Start(ctx, u) }); err != nil {
		t.Fatalf("starting an active unit: %v", err)
	}

	if err := timed(t, "Reload", func() error { return m.Reload(ctx, u) }); err != nil {
		t.Fatal(err)
	}
	if after, _ := m.MainPID(ctx, u); after != pid {
		t.Errorf("MainPID changed across Reload: %d -> %d", pid, after)
	}

	if err := timed(t, "Restart", func() error { return m.Restart(ctx, u) }); err != nil {
		t.Fatal(err)
	}
	restarted, _ := m.MainPID(ctx, u)
	if restarted == 0 || restarted == pid {
		t.Errorf("MainPID across Restart: %d -> %d, want a new process", pid, restarted)
	}

	if err := timed(t, "Stop", func() error { return m.Stop(ctx, u) }); err != nil {
		t.Fatal(err)
	}
	if p, _ := m.MainPID(ctx, u); p != 0 {
		t.Errorf("MainPID after Stop = %d", p)
	}
	st, _ := m.UnitStates(ctx, []string{u})
	if st[u].ActiveState != "inactive" {
		t.Errorf("after Stop: %+v", st[u])
	}
	if err := m.Stop(ctx, u); err != nil {
		t.Errorf("stopping a stopped unit: %v", err)
	}
}

// A deploy may restart the same unit many times in a row; systemd's start
// rate limit (5 in 10 s by default) must not turn that into a failure.
func TestRestartBurstIsNotRateLimited(t *testing.T) {
	m := dial(t)
	ctx := context.Background()
	const u = "syslet-t-burst.service"
	installUnit(t, m, runtimeUnits, u, simpleUnit)
	for i := range 10 {
		if err := m.Restart(ctx, u); err != nil {
			t.Fatalf("restart #%d: %v", i+1, err)
		}
	}
}

func TestOneshotFinishedIsStarted(t *testing.T) {
	m := dial(t)
	const u = "syslet-t-oneshot.service"
	installUnit(t, m, runtimeUnits, u, onceUnit)
	if err := m.Start(context.Background(), u); err != nil {
		t.Fatalf("a oneshot that ran to completion: %v", err)
	}
	if err := m.Restart(context.Background(), u); err != nil {
		t.Fatalf("restarting a finished oneshot: %v", err)
	}
}

func TestFailingStartIsJobErrorWithLog(t *testing.T) {
	m := dial(t)
	ctx := context.Background()
	const u = "syslet-t-fail.service"
	installUnit(t, m, runtimeUnits, u, failUnit)
	err := m.Start(ctx, u)
	var je *host.JobError
	if !errors.As(err, &je) || je.Result != "failed" || je.Op != "start" || je.Unit != u {
		t.Fatalf("Start of a failing unit = %#v (%v), want JobError start/failed", err, err)
	}
	t.Logf("error: %v", err)
	st, _ := m.UnitStates(ctx, []string{u})
	if !st[u].Failed() {
		t.Errorf("state after failed start: %+v", st[u])
	}
	// Restart resets the failed state first and fails the same way again.
	if err := m.Restart(ctx, u); !errors.As(err, &je) || je.Result != "failed" {
		t.Errorf("Restart of a failing unit = %v", err)
	}

	var lines []string
	// journald may take a moment to index the lines it just received.
	for range 20 {
		if lines, err = m.LastLog(ctx, u, time.Time{}, 20); err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "syslet-fixture-boom") }) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("LastLog:\n  %s", strings.Join(lines, "\n  "))
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "syslet-fixture-boom") }) {
		t.Errorf("LastLog does not show the unit's output")
	}
	if short, _ := m.LastLog(ctx, u, time.Time{}, 2); len(short) != 2 {
		t.Errorf("LastLog(n=2) returned %d lines", len(short))
	}
	if none, err := m.LastLog(ctx, "syslet-t-never-ran.service", time.Time{}, 5); err != nil || len(none) != 0 {
		t.Errorf("LastLog of a unit without entries = %q, %v", none, err)
	}
}

func TestMissingUnitIsNotFound(t *testing.T) {
	m := dial(t)
	ctx := context.Background()
	const u = "syslet-t-nonexistent.service"
	for op, f := range map[string]func(context.Context, string) error{
		"start": m.Start, "restart": m.Restart, "stop": m.Stop, "reload": m.Reload,
	} {
		err := f(ctx, u)
		t.Logf("%s missing unit: %v", op, err)
		if !errors.Is(err, host.ErrNotFound) {
			t.Errorf("%s of a missing unit = %v, want ErrNotFound", op, err)
		}
	}
}

func TestReloadWithoutExecReloadFails(t *testing.T) {
	m := dial(t)
	ctx := context.Background()
	const u = "syslet-t-noreload.service"
	installUnit(t, m, runtimeUnits, u, noReloadUnit)
	if err := m.Start(ctx, u); err != nil {
		t.Fatal(err)
	}
	err := m.Reload(ctx, u)
	t.Logf("reload without ExecReload: %v", err)
	if err == nil {
		t.Fatal("Reload of a unit without ExecReload= succeeded")
	}
}

// Abandoning a wait must not stall the connection for later jobs.
func TestCancelledWaitLeavesConnectionUsable(t *testing.T) {
	m := dial(t)
	installUnit(t, m, runtimeUnits, "syslet-t-slow.service", slowUnit)
	installUnit(t, m, runtimeUnits, "syslet-t-after.service", simpleUnit)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := m.Start(ctx, "syslet-t-slow.service")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start past its deadline = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancelled wait returned after %v", d)
	}
	// The slow job finishes meanwhile and its result lands in the buffered
	// channel nobody reads; the next jobs must still complete.
	time.Sleep(3 * time.Second)
	if err := m.Start(context.Background(), "syslet-t-after.service"); err != nil {
		t.Fatalf("job after an abandoned wait: %v", err)
	}
	if err := m.Stop(context.Background(), "syslet-t-after.service"); err != nil {
		t.Fatal(err)
	}
}

// A quadlet container logs exit 143 when stopped; Stop must accept that, and
// Start/Restart must see the container up.
func TestQuadletContainer(t *testing.T) {
	if out, err := exec.Command("systemctl", "start", "docker-registry.service").CombinedOutput(); err != nil {
		t.Fatalf("the test host's local registry did not start: %v %s", err, out)
	}
	m := dial(t)
	ctx := context.Background()
	const u = "syslet-t-web.service"
	installUnit(t, m, "/etc/containers/systemd", "syslet-t-web.container", `[Container]
ContainerName=syslet-t-web
Image=localhost:5000/busybox:latest
Exec=sleep 100000
RunInit=true
`)
	if err := timed(t, "Start(quadlet container incl. pull)", func() error { return m.Start(ctx, u) }); err != nil {
		logs, _ := m.LastLog(ctx, u, time.Time{}, 20)
		t.Fatalf("%v\n%s", err, strings.Join(logs, "\n"))
	}
	pid, _ := m.MainPID(ctx, u)
	if err := timed(t, "Restart(quadlet container)", func() error { return m.Restart(ctx, u) }); err != nil {
		t.Fatal(err)
	}
	if p, _ := m.MainPID(ctx, u); p == pid {
		t.Errorf("container not restarted: MainPID still %d", p)
	}
	if err := timed(t, "Stop(quadlet container)", func() error { return m.Stop(ctx, u) }); err != nil {
		t.Fatal(err)
	}
	st, _ := m.UnitStates(ctx, []string{u})
	t.Logf("after stop: %+v", st[u])
	logs, _ := m.LastLog(ctx, u, time.Time{}, 4)
	t.Logf("LastLog:\n  %s", strings.Join(logs, "\n  "))
}

// TestJobsBatch queues starts of several units at once: a unit ordered
// after a slow one (After=, Requires=) still lands after it, a failing
// unit lands with its own JobError, and every unit lands exactly once.
// The units run side by side, not one after another.
func TestJobsBatch(t *testing.T) {
	m := dial(t)
	ctx := context.Background()
	installUnit(t, m, runtimeUnits, "syslet-t-b-slow.service", "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sleep 2\n")
	installUnit(t, m, runtimeUnits, "syslet-t-b-after.service", "[Unit]\nRequires=syslet-t-b-slow.service\nAfter=syslet-t-b-slow.service\n"+simpleUnit)
	installUnit(t, m, runtimeUnits, "syslet-t-b-fail.service", failUnit)
	var names []string
	for i := range 3 {
		n := "syslet-t-b-" + string(rune('a'+i)) + ".service"
		installUnit(t, m, runtimeUnits, n, "[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sleep 2\n")
		names = append(names, n)
	}
	names = append(names, "syslet-t-b-after.service", "syslet-t-b-fail.service", "syslet-t-b-slow.service")
	t0 := time.Now()
	var order []string
	errs := map[string]error{}
	m.Jobs(ctx, host.JobStart, names, func(i int, err error) {
		order = append(order, names[i])
		if _, dup := errs[names[i]]; dup {
			t.Errorf("%s landed twice", names[i])
		}
		errs[names[i]] = err
	})
	took := time.Since(t0)
	t.Logf("landed in order %q after %s", order, took)
	if len(order) != len(names) {
		t.Fatalf("%d of %d units landed", len(order), len(names))
	}
	var je *host.JobError
	for n, err := range errs {
		switch {
		case n == "syslet-t-b-fail.service":
			if !errors.As(err, &je) || je.Result != "failed" {
				t.Errorf("%s: %v, want a failed JobError", n, err)
			}
		case err != nil:
			t.Errorf("%s: %v", n, err)
		}
	}
	// systemd's own clock says whether the ordered unit waited: it left
	// inactive only once the slow one was up. (The order of the callbacks
	// cannot say it: two jobs ending a few microseconds apart reach Jobs
	// through two goroutines, in either order.)
	slowUp := m.monotonic(t, "syslet-t-b-slow.service", "ActiveEnterTimestampMonotonic")
	afterBegan := m.monotonic(t, "syslet-t-b-after.service", "InactiveExitTimestampMonotonic")
	if afterBegan < slowUp {
		t.Errorf("the unit ordered after the slow one began %dµs before the slow one was up", slowUp-afterBegan)
	}
	// The four 2 s units ran side by side, by systemd's clock again: each
	// began before any of them was up (one after another, each would
	// begin only once the one before it was up).
	var lastBegan, firstUp uint64
	for _, n := range []string{"syslet-t-b-a.service", "syslet-t-b-b.service", "syslet-t-b-c.service", "syslet-t-b-slow.service"} {
		lastBegan = max(lastBegan, m.monotonic(t, n, "InactiveExitTimestampMonotonic"))
		if up := m.monotonic(t, n, "ActiveEnterTimestampMonotonic"); firstUp == 0 || up < firstUp {
			firstUp = up
		}
	}
	if lastBegan >= firstUp {
		t.Errorf("the last of the four 2 s units began %dµs after the first was up: the jobs did not run side by side", lastBegan-firstUp)
	}
	// Stopping the batch lands every unit too, the failed one included.
	n := 0
	m.Jobs(ctx, host.JobStop, names, func(i int, err error) {
		n++
		if err != nil {
			t.Errorf("stop %s: %v", names[i], err)
		}
	})
	if n != len(names) {
		t.Errorf("%d of %d stops landed", n, len(names))
	}
}

// TestJobsManyUnits starts and stops 300 units in one batch each: more
// jobs than the bus allows pending calls on one connection, so the checks
// after the jobs must not all be in flight at once.
func TestJobsManyUnits(t *testing.T) {
	m := dial(t)
	ctx := context.Background()
	var names []string
	for i := range 300 {
		n := fmt.Sprintf("syslet-t-many-%03d.service", i)
		if err := os.WriteFile(filepath.Join(runtimeUnits, n), []byte(simpleUnit), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	t.Cleanup(func() {
		for _, n := range names {
			os.Remove(filepath.Join(runtimeUnits, n))
		}
		m.DaemonReload(context.Background())
	})
	if err := m.DaemonReload(ctx); err != nil {
		t.Fatal(err)
	}
	for _, op := range []host.JobOp{host.JobStart, host.JobStop} {
		landed := 0
		t0 := time.Now()
		m.Jobs(ctx, op, names, func(i int, err error) {
			landed++
			if err != nil {
				t.Errorf("%s %s: %v", op, names[i], err)
			}
		})
		t.Logf("%s of %d units: %s", op, len(names), time.Since(t0))
		if landed != len(names) {
			t.Errorf("%s: %d of %d landed", op, landed, len(names))
		}
	}
}

// LastStarted says a oneshot was started from the moment its start job
// begins — while it still runs, once it ended, and while its job is still
// queued behind a dependency — so a resumed run never runs it twice; a
// oneshot never started since boot reads as zero.
func TestLastStartedCountsRunningAndQueuedStarts(t *testing.T) {
	m := dial(t)
	ctx := context.Background()
	const (
		gate = "syslet-t-gate.service"
		once = "syslet-t-once.service"
	)
	installUnit(t, m, runtimeUnits, gate, slowUnit)
	installUnit(t, m, runtimeUnits, once, "[Unit]\nAfter="+gate+"\n"+slowUnit)
	got, err := m.LastStarted(ctx, []string{once})
	if err != nil || !got[once].IsZero() {
		t.Fatalf("never started: %v %v", got, err)
	}
	t0 := time.Now()
	for _, u := range []string{gate, once} {
		if _, err := m.conn.StartUnitContext(ctx, u, "replace", nil); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		got, err := m.LastStarted(ctx, []string{once})
		if err != nil || got[once].Before(t0.Add(-time.Second)) {
			t.Errorf("%s: LastStarted = %v %v, want at or after %v", when, got[once], err, t0)
		}
	}
	check("queued behind its dependency")
	time.Sleep(4 * time.Second) // gate done, once running
	if st, _ := m.state(ctx, once); st.ActiveState != "activating" {
		t.Errorf("once is %s, want activating", st.ActiveState)
	}
	check("running")
	time.Sleep(3 * time.Second)
	check("finished")
}
