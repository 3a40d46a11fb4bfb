package queue

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/webhookd/clone"
	"github.com/syslet/syslet/webhookd/config"
	"github.com/syslet/syslet/webhookd/metrics"
)

// The worker's own tests run it on a branch of made-up commits, each
// checked out as a directory of its own, and a Deployer that answers as
// the real one does; the daemon's tests (package webhookd) run it behind
// the HTTP hooks on a real git repository.

// branch is a clone.Checkout of a branch whose commits the test adds.
type branch struct {
	dir     string
	mu      sync.Mutex
	commits []string // oldest first
	fetches int
}

func (b *branch) add(commit string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.commits = append(b.commits, commit)
}

func (b *branch) Fetch(context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fetches++
	if len(b.commits) == 0 {
		return "", fmt.Errorf("the branch is empty")
	}
	return b.commits[len(b.commits)-1], nil
}

func (b *branch) Contains(from, commit string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i, j := slices.Index(b.commits, from), slices.Index(b.commits, commit)
	return i >= 0 && j >= 0 && j <= i, nil
}

func (b *branch) RawCommit(string) ([]byte, error) { return nil, fmt.Errorf("no commit objects here") }

func (b *branch) Checkout(commit string) (string, error) {
	dir := filepath.Join(b.dir, commit)
	return dir, os.MkdirAll(filepath.Join(dir, "hosts", "web1"), 0o755)
}

func (b *branch) Repack(context.Context) (clone.Repacked, error) { return clone.Repacked{}, nil }

// deployer applies every commit, and finds what drift says when checked;
// busy makes a check find another apply holding the lock.
type deployer struct {
	mu      sync.Mutex
	deploys []DeployRequest
	checks  []DeployRequest
	drift   []notify.DriftUnit
	busy    string
}

func (d *deployer) Deploy(_ context.Context, req DeployRequest) (DeployReport, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deploys = append(d.deploys, req)
	run := fmt.Sprintf("run-%d", len(d.deploys))
	req.Started(notify.Event{Event: notify.Started, Run: run, Summary: "1 to change"})
	return DeployReport{RunID: run, Summary: "1 to change", Verdict: verdict.Applied,
		Event: &notify.Event{Event: notify.Succeeded, Run: run, Summary: "1 to change"}}, nil
}

func (d *deployer) Check(_ context.Context, req DeployRequest) (CheckReport, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.checks = append(d.checks, req)
	ev := notify.Event{Event: notify.Drift, Host: "web1", Summary: fmt.Sprintf("%d unit(s) differ", len(d.drift)), Drift: d.drift}
	return CheckReport{Units: slices.Clone(d.drift), Busy: d.busy, Event: &ev}, nil
}

func (d *deployer) set(f func(d *deployer)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f(d)
}

func (d *deployer) requests() (deploys, checks []DeployRequest) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.deploys), slices.Clone(d.checks)
}

// fixture is one worker, its branch, its Deployer and what it told.
type fixture struct {
	t      *testing.T
	cfg    *config.Repo
	branch *branch
	dep    *deployer
	m      *metrics.Set
	file   string // the status file
	mu     sync.Mutex
	told   []notify.Event
}

// newFixture makes the worker of a repository configured with extra
// (lines of repos[0]).
func newFixture(t *testing.T, extra string) (*fixture, *Worker) {
	t.Helper()
	secret := filepath.Join(t.TempDir(), "secret")
	must(t, os.WriteFile(secret, []byte("0123456789abcdef0123456789abcdef\n"), 0o600))
	c, err := config.Parse("test.yaml", []byte("repos:\n  - name: infra\n    url: /srv/git/infra\n    path: hosts/{hostname}\n    secretFile: "+secret+"\n"+extra), "web1")
	must(t, err)
	f := &fixture{t: t, cfg: &c.Repos[0], branch: &branch{dir: t.TempDir()}, dep: &deployer{},
		m: metrics.New(c.Repos, nil, Results), file: filepath.Join(t.TempDir(), ".status", "infra.json")}
	return f, f.worker()
}

// worker makes a worker of the fixture's repository, as a (re)started
// daemon does.
func (f *fixture) worker() *Worker {
	return New(f.cfg, Options{Checkout: f.branch, Deployer: f.dep, Log: zerolog.New(zerolog.NewTestWriter(f.t)),
		Metrics: f.m, StatusFile: f.file, Hostname: "web1", Notify: func(ev notify.Event) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.told = append(f.told, ev)
		}})
}

// run runs w until the test ends.
func (f *fixture) run(w *Worker) {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		w.Run(stop)
	}()
	f.t.Cleanup(func() {
		close(stop)
		<-done
	})
}

// events are the kinds of the events told so far, and the events.
func (f *fixture) events() ([]string, []notify.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var kinds []string
	for _, ev := range f.told {
		kinds = append(kinds, string(ev.Event))
	}
	return kinds, slices.Clone(f.told)
}

// wait polls w's status until ok holds.
func (f *fixture) wait(w *Worker, what string, ok func(RepoStatus) bool) RepoStatus {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := w.Status()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s; status %+v", what, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestPollSpread: a polling repository's first poll after a start waits
// the delay drawn within its spread (here an hour: no poll fetches at
// all), /status says when it is due, and a push still deploys meanwhile.
func TestPollSpread(t *testing.T) {
	f, w := newFixture(t, "    poll: 10m\n    pollSpread: 5m\n")
	if f.cfg.PollInterval != 10*time.Minute || f.cfg.PollDelay != 5*time.Minute {
		t.Fatalf("interval %s, spread %s", f.cfg.PollInterval, f.cfg.PollDelay)
	}
	var asked time.Duration
	w.pollDelay = func(max time.Duration) time.Duration { asked = max; return time.Hour }
	f.branch.add("a")
	t0 := time.Now()
	f.run(w)
	st := f.wait(w, "next poll shown", func(s RepoStatus) bool { return s.NextPoll != nil })
	if asked != 5*time.Minute || st.NextPoll.Before(t0.Add(59*time.Minute)) || st.LastPoll != nil {
		t.Fatalf("delay drawn within %s; status %+v", asked, st)
	}
	w.Enqueue("a", "github push 1")
	f.wait(w, "a applied by its push", func(s RepoStatus) bool { return s.LastApplied == "a" })
	f.branch.mu.Lock()
	n := f.branch.fetches
	f.branch.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d fetches, want the push's one: the first poll is an hour away", n)
	}
	for range 1000 {
		if d := randomDelay(time.Minute); d < 0 || d >= time.Minute {
			t.Fatalf("randomDelay(1m) = %s", d)
		}
	}
	if d := randomDelay(0); d != 0 {
		t.Fatalf("randomDelay(0) = %s", d)
	}
}

// TestDriftCheck: a check finds a hand edit: /status and the gauges show
// it, one drift notification is sent however often it is found again,
// nothing is deployed; once it is gone, the gauges return to zero. With
// reconcile, a difference deploys the applied commit again with force.
func TestDriftCheck(t *testing.T) {
	f, w := newFixture(t, "    drift: {interval: 1h}\n")
	f.run(w)

	w.checkDrift() // nothing applied yet: an error, no check of the host
	if st := w.Status(); st.Drift == nil || !strings.Contains(st.Drift.Error, "no commit is applied yet") {
		t.Fatalf("before any deploy: %+v", st.Drift)
	}
	if _, checks := f.dep.requests(); len(checks) != 0 {
		t.Fatalf("checked %+v", checks)
	}

	f.branch.add("a")
	w.Enqueue("a", "github push 1")
	f.wait(w, "a applied", func(s RepoStatus) bool { return s.LastApplied == "a" && s.State == "idle" })

	f.dep.set(func(d *deployer) {
		d.drift = []notify.DriftUnit{{Unit: "web.container", Kind: notify.DriftEdited, Effect: "drift", Reasons: []string{"edited by hand"}}}
	})
	for range 3 {
		w.checkDrift()
	}
	st := w.Status()
	if d := st.Drift; d == nil || d.Drift != 1 || d.Change != 0 || d.Commit != "a" || d.Since == nil || d.CheckedAt == nil || d.Error != "" || len(d.Units) != 1 {
		t.Fatalf("drift status %+v", st.Drift)
	}
	_, checks := f.dep.requests()
	if st.DriftInterval != 3600 || len(checks) != 3 || checks[0].Dir != filepath.Join(f.branch.dir, "a", "hosts", "web1") {
		t.Fatalf("status %+v, checks %+v", st, checks)
	}
	if testutil.ToFloat64(f.m.DriftUnits.WithLabelValues("infra", notify.DriftEdited)) != 1 ||
		testutil.ToFloat64(f.m.DriftChecks.WithLabelValues("infra", "ok")) != 3 ||
		testutil.ToFloat64(f.m.DriftChecked.WithLabelValues("infra")) < 1e9 {
		t.Errorf("drift metrics")
	}
	kinds, evs := f.events()
	if strings.Join(kinds, " ") != "started succeeded drift" || evs[2].Source.Trigger != "drift check" || evs[2].Source.Commit != "a" || len(evs[2].Drift) != 1 {
		t.Fatalf("events %v %+v", kinds, evs)
	}
	if deploys, _ := f.dep.requests(); len(deploys) != 1 {
		t.Fatalf("a check deployed: %+v", deploys)
	}

	// A restarted worker remembers the drift it told: the same drift found
	// again is not told again.
	w2 := f.worker()
	if d := w2.Status().Drift; d == nil || d.Drift != 1 || len(d.Units) != 1 {
		t.Fatalf("drift not restored: %+v", d)
	}
	w2.checkDrift()
	if kinds, _ := f.events(); strings.Join(kinds, " ") != "started succeeded drift" {
		t.Fatalf("after a restart: events %v", kinds)
	}

	// Another apply holds the lock: the check counts for nothing.
	f.dep.set(func(d *deployer) { d.busy, d.drift = "pid 1 (source stdin)", nil })
	w.checkDrift()
	if w.Status().Drift.Drift != 1 {
		t.Fatalf("a busy check changed the status")
	}
	f.dep.set(func(d *deployer) { d.busy = "" })
	w.checkDrift()
	if d := w.Status().Drift; d.Drift != 0 || d.Since != nil || len(d.Units) != 0 {
		t.Fatalf("after the fix: %+v", d)
	}
	if testutil.ToFloat64(f.m.DriftUnits.WithLabelValues("infra", notify.DriftEdited)) != 0 {
		t.Errorf("gauge not back to zero")
	}

	// Reconcile: a failing probe alone deploys nothing (an apply of the
	// same commit would not mend it); what an apply mends is deployed
	// again, with force.
	f.cfg.Reconcile = true
	f.dep.set(func(d *deployer) {
		d.drift = []notify.DriftUnit{{Unit: "web.container", Kind: notify.DriftProbe, Reasons: []string{`probe GET :8080/up answered 503 "db unreachable"`}}}
	})
	w.checkDrift()
	if d := w.Status().Drift; d.Probe != 1 || d.Drift+d.Change+d.Start != 0 || testutil.ToFloat64(f.m.DriftUnits.WithLabelValues("infra", notify.DriftProbe)) != 1 {
		t.Fatalf("a failing probe: %+v", d)
	}
	if deploys, _ := f.dep.requests(); len(deploys) != 1 {
		t.Fatalf("a failing probe alone was reconciled: %+v", deploys)
	}
	f.dep.set(func(d *deployer) {
		d.drift = []notify.DriftUnit{{Unit: "api.container", Kind: notify.DriftStart, Effect: "start"}}
	})
	w.checkDrift()
	f.wait(w, "reconciled", func(s RepoStatus) bool {
		return s.Last != nil && s.Last.Trigger == "reconcile (replacing hand edits)" && s.State == "idle"
	})
	if deploys, _ := f.dep.requests(); len(deploys) != 2 || deploys[1].Commit != "a" || !deploys[1].Force {
		t.Fatalf("reconcile deploys %+v", deploys)
	}
}
