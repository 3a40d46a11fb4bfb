package queue

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a settable clock for the windows.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(s string) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// TestWindowHoldsPushes: outside its window a repository's pushes are
// queued, coalesced, shown as waiting for the next opening (in /status and
// the metrics), and nothing is deployed, while a drift check still runs;
// once the window opens the newest commit is deployed, once. An override
// lets a commit through outside the window, and its deploy says who and why.
func TestWindowHoldsPushes(t *testing.T) {
	f, w := newFixture(t, "    drift: {interval: 1h}\n    windows:\n      - {calendar: \"Mon..Thu 02:00 Europe/Berlin\", duration: 3h}\n")
	w.overrideFile = OverrideFile(t.TempDir(), "infra")
	f.m.WatchWindow("infra", w.WindowState)
	c := &clock{}
	c.set("2026-12-11T09:00:00Z") // Friday: frozen until Monday 02:00 Berlin
	w.now = c.now
	f.run(w)

	for _, commit := range []string{"a", "b"} {
		f.branch.add(commit)
		w.Enqueue(commit, "github push "+commit)
	}
	st := f.wait(w, "b waiting", func(s RepoStatus) bool { return s.Queued == "b" && s.QueuedPushes == 2 })
	ws := st.Window
	if ws == nil || ws.Open || ws.Waiting != "waiting for window Mon 2026-12-14 02:00 CET" || ws.NextOpen == nil || ws.NextOpen.Location().String() != "Europe/Berlin" {
		t.Fatalf("window status %+v", ws)
	}
	monday := time.Date(2026, 12, 14, 1, 0, 0, 0, time.UTC) // 02:00 in Berlin
	if open, waiting, next := gauge(t, f, "webhookd_window_open"), gauge(t, f, "webhookd_window_waiting"), gauge(t, f, "webhookd_window_next_open_timestamp_seconds"); open != 0 || waiting != 1 || next != float64(monday.Unix()) {
		t.Errorf("metrics: open %v, waiting %v, next opening %v (want %d)", open, waiting, next, monday.Unix())
	}
	w.checkDrift() // reports at any time: nothing applied yet, so it says so
	if st := w.Status(); st.Drift == nil || st.Drift.CheckedAt == nil {
		t.Errorf("no drift check outside the window: %+v", st.Drift)
	}
	w.nudge()
	if deploys, _ := f.dep.requests(); len(deploys) != 0 {
		t.Fatalf("deployed outside the window: %+v", deploys)
	}

	c.set("2026-12-14T01:00:30Z") // Monday 02:00:30 in Berlin
	w.nudge()
	st = f.wait(w, "b applied in the window", func(s RepoStatus) bool { return s.LastApplied == "b" && s.State == "idle" })
	if deploys, _ := f.dep.requests(); len(deploys) != 1 || st.Last.Pushes != 2 || st.Queued != "" || st.Window.Waiting != "" || !st.Window.Open {
		t.Fatalf("deploys %+v, status %+v, window %+v", deploys, st.Last, st.Window)
	}

	// Friday again: an emergency opens the window for an hour.
	c.set("2026-12-18T09:00:00Z")
	f.branch.add("c")
	w.Enqueue("c", "github push c")
	f.wait(w, "c waiting", func(s RepoStatus) bool { return s.Window.Waiting != "" })
	must(t, WriteOverride(w.overrideFile, Override{Until: c.now().Add(time.Hour), By: "alice", At: c.now(), Reason: "CVE-2026-0001"}))
	w.nudge()
	st = f.wait(w, "c applied by the override", func(s RepoStatus) bool { return s.LastApplied == "c" && s.State == "idle" })
	if !strings.Contains(st.Last.Trigger, "opened by alice until 2026-12-18T10:00:00Z: CVE-2026-0001") || st.Window.Override == nil {
		t.Fatalf("trigger %q, window %+v", st.Last.Trigger, st.Window)
	}
	// Closed again: the override is removed, the next push waits.
	must(t, WriteOverride(w.overrideFile, Override{At: c.now()}))
	f.branch.add("d")
	w.Enqueue("d", "github push d")
	st = f.wait(w, "d waiting", func(s RepoStatus) bool { return s.Queued == "d" && s.Window.Waiting != "" })
	if st.Window.Override != nil || st.LastApplied != "c" {
		t.Fatalf("after the override: %+v applied %s", st.Window, st.LastApplied)
	}
	// An unreadable override opens nothing, and says why.
	must(t, os.WriteFile(w.overrideFile, []byte("{"), 0o600))
	if ws := w.Status().Window; ws.Open || ws.OverrideError == "" || ws.Waiting == "" {
		t.Fatalf("with a broken override file: %+v", ws)
	}
}

// gauge is the value of the repository's series name, as scraped.
func gauge(t *testing.T, f *fixture, name string) float64 {
	t.Helper()
	mfs, err := f.m.Reg.Gather()
	must(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no %s", name)
	return 0
}

// TestTakeOutsideWindow: a closed window keeps every push queued but the
// deploy a kill cut short, which began inside a window and is finished.
func TestTakeOutsideWindow(t *testing.T) {
	var q pushQueue
	q.add(push{commit: "a"})
	q.add(push{commit: "b", resumed: true})
	q.add(push{commit: "c"})
	if got := q.take(false); len(got) != 1 || got[0].commit != "b" {
		t.Fatalf("closed: took %+v", got)
	}
	q.done()
	if got := q.take(false); got != nil {
		t.Fatalf("closed again: took %+v", got)
	}
	if got := q.take(true); len(got) != 2 || got[1].commit != "c" {
		t.Fatalf("open: took %+v", got)
	}
}
