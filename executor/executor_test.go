package executor_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// fake records every host call in order and fails the ones named in fail.
type fake struct {
	mu        sync.Mutex // file writes run side by side
	calls     []string
	fail      map[string]error
	batches   []string // one entry per Jobs call: "op unit unit..."
	preparing []string // prepare, discard and settle events, in order
	seq       []string // every call and preparing event, in order
	sizes     map[string]int64
}

var (
	_ executor.Files   = (*fake)(nil)
	_ executor.Systemd = (*fake)(nil)
	_ executor.Podman  = (*fake)(nil)
)

func (f *fake) call(s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, s)
	f.seq = append(f.seq, s)
	return f.fail[s]
}

// PrepareFile, PrepareDir and PrepareLink record the preparing apart from
// the host's calls: nothing a reader sees changes until Swap, which
// records "write PATH" ("writedir PATH", "link PATH TARGET"); failing
// "prepare PATH" fails the preparing. Undo after a Swap records "put back
// PATH".
func (f *fake) PrepareFile(p string, _ []byte, _ uint32) (executor.Prepared, error) {
	return f.prepare(p, "write "+p)
}
func (f *fake) PrepareDir(p string, _ []host.DirFile) (executor.Prepared, error) {
	return f.prepare(p, "writedir "+p)
}
func (f *fake) PrepareLink(p, t string) (executor.Prepared, error) {
	return f.prepare(p, "link "+p+" "+t)
}

func (f *fake) prepare(p, call string) (executor.Prepared, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.preparing = append(f.preparing, "prepare "+p)
	f.seq = append(f.seq, "prepare "+p)
	if err := f.fail["prepare "+p]; err != nil {
		return nil, err
	}
	return &fakePrepared{f: f, call: call, path: p}, nil
}

// fakePrepared is one prepared write of a fake.
type fakePrepared struct {
	f          *fake
	call, path string
	swapped    bool
	done       bool
}

func (s *fakePrepared) Swap() error {
	err := s.f.call(s.call)
	s.swapped = err == nil
	return err
}

func (s *fakePrepared) Undo() error {
	if s.done {
		return nil
	}
	s.done = true
	if !s.swapped {
		s.f.record("discard " + s.path)
		return nil
	}
	return s.f.call("put back " + s.path)
}

func (s *fakePrepared) Settle() error {
	if !s.swapped {
		return s.Undo()
	}
	s.done = true
	s.f.record("settle " + s.path)
	return nil
}

// record notes a preparing event that changes nothing a reader sees.
func (f *fake) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.preparing = append(f.preparing, s)
	f.seq = append(f.seq, s)
}

func (f *fake) Remove(p, _ string) error           { return f.call("remove " + p) }
func (f *fake) DaemonReload(context.Context) error { return f.call("daemon-reload") }

// Jobs runs the batch one unit after another, landing each at once.
func (f *fake) Jobs(_ context.Context, op host.JobOp, names []string, landed func(int, error)) {
	f.batches = append(f.batches, string(op)+" "+strings.Join(names, " "))
	for i, n := range names {
		landed(i, f.call(string(op)+" "+n))
	}
}
func (f *fake) LastLog(_ context.Context, n string, _ time.Time, _ int) ([]string, error) {
	return []string{n + ": boom"}, nil
}
func (f *fake) PullImage(_ context.Context, r string, progress io.Writer) error {
	if progress != nil {
		// What podman's pull API writes.
		_, _ = io.WriteString(progress, "Trying to pull "+r+"...\nGetting image source signatures\nCopying blob sha256:12ab\nWriting manifest to image destination\n")
	}
	return f.call("pull " + r)
}
func (f *fake) PullImageWith(_ context.Context, r string, _ host.PullOptions, _ io.Writer) error {
	return f.call("pull-with " + r)
}
func (f *fake) RemoveImage(_ context.Context, r string) error  { return f.call("rmi " + r) }
func (f *fake) RemoveVolume(_ context.Context, n string) error { return f.call("rmvol " + n) }
func (f *fake) CreateVolume(_ context.Context, n string) error { return f.call("mkvol " + n) }
func (f *fake) ImportVolume(_ context.Context, n string, r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	return f.call("import " + n + " < " + string(b))
}
func (f *fake) RemoveNetwork(_ context.Context, n string) error { return f.call("rmnet " + n) }
func (f *fake) ExportVolume(_ context.Context, n string, w io.Writer) error {
	if err := f.call("export " + n); err != nil {
		return err
	}
	_, err := io.WriteString(w, "tar of "+n)
	return err
}
func (f *fake) VolumeSizes(context.Context) (map[string]int64, error) {
	f.call("df")
	return f.sizes, nil
}
func (f *fake) CreateSecret(_ context.Context, n string, d []byte, _ map[string]string) error {
	return f.call("secret " + n + "=" + string(d))
}
func (f *fake) RemoveSecret(_ context.Context, n string) error { return f.call("rmsecret " + n) }

type decrypter map[string][]byte

func (d decrypter) Decrypt(*render.Secret) (map[string][]byte, error) { return d, nil }

func mk(ops ...string) *plan.Plan {
	p := &plan.Plan{}
	for _, s := range ops {
		op, target, _ := strings.Cut(s, " ")
		p.Actions = append(p.Actions, plan.Action{Op: plan.Op(op), Step: plan.StepOf(plan.Op(op)), Target: target})
	}
	return p
}

func apply(t *testing.T, p *plan.Plan, f *fake) (*executor.Result, error) {
	t.Helper()
	h := executor.Host{Files: f, Systemd: f, Podman: f}
	return executor.Apply(context.Background(), p, h, executor.Options{Log: zerolog.Nop()})
}

func TestRunsStepsInFixedOrder(t *testing.T) {
	// Given out of order, the executor still runs the nine steps in order.
	p := mk("start web.service", "daemon-reload x", "delete-volume v", "remove-unit /u/old", "write-unit /u/web",
		"write-file /c/web", "stop web.service", "pull-image img", "reload app.service")
	f := &fake{}
	res, err := apply(t, p, f)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pull img", "stop web.service", "write /c/web", "write /u/web", "remove /u/old", "rmvol v", "daemon-reload", "reload app.service", "start web.service"}
	if !slices.Equal(f.calls, want) {
		t.Errorf("calls:\n got %q\nwant %q", f.calls, want)
	}
	if len(res.Applied) != len(want) || len(res.Failed)+len(res.NotReached) != 0 {
		t.Errorf("result: %+v", res)
	}
}

func TestPullFailureChangesNothing(t *testing.T) {
	p := mk("pull-image bad", "stop web.service", "write-unit /u/web", "daemon-reload x", "start web.service")
	f := &fake{fail: map[string]error{"pull bad": errors.New("manifest unknown")}}
	res, err := apply(t, p, f)
	if !errors.Is(err, executor.ErrFailed) {
		t.Fatalf("err = %v", err)
	}
	if !slices.Equal(f.calls, []string{"pull bad"}) {
		t.Errorf("after a failed pull nothing else may run: %q", f.calls)
	}
	if len(res.Failed) != 1 || len(res.NotReached) != 4 || len(res.Applied) != 0 {
		t.Errorf("result: applied %d failed %d not reached %d", len(res.Applied), len(res.Failed), len(res.NotReached))
	}
}

// A failed swap stops the run: no write starts after it (those already in
// flight beside it finish), nothing of a later step runs, and what was
// swapped in is put back.
func TestWriteFailureStops(t *testing.T) {
	p := mk("stop a.service", "write-unit /u/a", "write-unit /u/b", "daemon-reload x", "start a.service")
	f := &fake{fail: map[string]error{"write /u/a": errors.New("disk full")}}
	res, _ := apply(t, p, f)
	if f.calls[0] != "stop a.service" || !slices.Contains(f.calls, "write /u/a") ||
		slices.Contains(f.calls, "daemon-reload") || slices.Contains(f.calls, "start a.service") {
		t.Errorf("calls %q", f.calls)
	}
	if slices.Contains(f.calls, "write /u/b") != slices.Contains(f.calls, "put back /u/b") {
		t.Errorf("a write swapped in beside the failed one must be put back: %q", f.calls)
	}
	if res.Undo == nil || len(res.Failed) != 1 || len(res.Applied)+len(res.Failed)+len(res.NotReached)+len(res.Undo.Files) != 5 || len(res.NotReached) < 2 {
		t.Errorf("applied %d failed %d not reached %d undo %+v", len(res.Applied), len(res.Failed), len(res.NotReached), res.Undo)
	}
}

// Every file write is prepared before the first stop; the swaps come in
// their steps; a run that ends well settles each.
func TestWritesArePreparedBeforeAnyStop(t *testing.T) {
	p := mk("pull-image img", "stop web.service", "write-file /c/web", "write-config-dir /c/app", "write-unit /u/web", "link-unit /u/web@2", "daemon-reload x", "start web.service")
	p.Actions[5].Payload = &plan.Payload{Link: "web@.container"} // an instance's link is prepared like a file
	f := &fake{}
	if _, err := apply(t, p, f); err != nil {
		t.Fatal(err)
	}
	want := []string{"pull img", "prepare /c/web", "prepare /c/app", "prepare /u/web", "prepare /u/web@2", "stop web.service", "write /c/web", "writedir /c/app", "write /u/web", "link /u/web@2 web@.container",
		"settle /c/web", "settle /c/app", "settle /u/web", "settle /u/web@2", "daemon-reload", "start web.service"}
	got := slices.Clone(f.seq)
	// The preparings, the writes of one step and the settles run in any order.
	for _, r := range [][2]int{{1, 5}, {6, 8}, {8, 10}, {10, 14}} {
		slices.Sort(got[r[0]:r[1]])
		slices.Sort(want[r[0]:r[1]])
	}
	if !slices.Equal(got, want) {
		t.Errorf("sequence\n got %q\nwant %q", got, want)
	}
}

// A write that cannot be prepared (a full disk) ends the run before
// anything is stopped: the pulls are all that happened, what was prepared
// is removed, the write is reported failed with its error and the rest not
// reached.
func TestPreparingFailureChangesNothing(t *testing.T) {
	p := mk("pull-image img", "stop web.service", "write-file /c/a", "write-file /c/big", "write-unit /u/web", "daemon-reload x", "start web.service")
	f := &fake{fail: map[string]error{"prepare /c/big": errors.New("writing /c/big: no space left on device")}}
	r := &rec{}
	res, err := executor.Apply(context.Background(), p, executor.Host{Files: f, Systemd: f, Podman: f}, executor.Options{Log: zerolog.Nop(), Recorder: r})
	if !errors.Is(err, executor.ErrFailed) || !strings.Contains(err.Error(), "/c/big: no space left on device") {
		t.Fatalf("err %v", err)
	}
	if !slices.Equal(f.calls, []string{"pull img"}) {
		t.Errorf("only the pull may have happened: %q", f.calls)
	}
	for _, e := range f.preparing {
		if strings.HasPrefix(e, "prepare ") && e != "prepare /c/big" && !slices.Contains(f.preparing, "discard "+strings.TrimPrefix(e, "prepare ")) {
			t.Errorf("%s was not removed again: %q", e, f.preparing)
		}
	}
	if len(res.Applied) != 1 || len(res.Failed) != 1 || res.Failed[0].Action.Target != "/c/big" || len(res.NotReached) != 5 {
		t.Errorf("applied %d failed %+v not reached %d", len(res.Applied), res.Failed, len(res.NotReached))
	}
	if res.Undo == nil || len(res.Undo.Files) != 0 || len(res.Undo.Started) != 0 {
		t.Errorf("undo %+v", res.Undo)
	}
	if want := []string{"step 1", "0 pull-image img ok", "3 write-file /c/big failed"}; !slices.Equal(r.lines, want) {
		t.Errorf("journal %q, want %q", r.lines, want)
	}
}

// running gives the plan the unit changes the executor reads the
// services' states before the run from.
func running(p *plan.Plan, services ...string) *plan.Plan {
	for _, s := range services {
		p.Units = append(p.Units, plan.UnitChange{Service: s, Before: "active"})
	}
	return p
}

// A run that fails before step 5 puts back what it swapped in and starts
// again what step 2 stopped (what was running before), on the old files.
func TestFailureBeforeStep5PutsTheHostBack(t *testing.T) {
	p := running(mk("stop web.service", "stop old.service", "write-file /c/web", "write-unit /u/web", "write-unit /u/new",
		"remove-unit /u/old", "daemon-reload x", "start web.service"), "web.service", "old.service")
	p.Units = append(p.Units, plan.UnitChange{Service: "new.service", Before: "-"})
	f := &fake{fail: map[string]error{"write /u/web": errors.New("rename: device or resource busy")}}
	r := &rec{}
	res, err := executor.Apply(context.Background(), p, executor.Host{Files: f, Systemd: f, Podman: f}, executor.Options{Log: zerolog.Nop(), Recorder: r})
	if !errors.Is(err, executor.ErrFailed) {
		t.Fatalf("err %v", err)
	}
	if slices.Contains(f.calls, "remove /u/old") || slices.Contains(f.calls, "daemon-reload") {
		t.Errorf("nothing after the failed step may run: %q", f.calls)
	}
	if !slices.Contains(f.calls, "put back /c/web") || slices.Contains(f.calls, "put back /u/web") {
		t.Errorf("the swapped config file (only) must be put back: %q", f.calls)
	}
	if slices.Contains(f.calls, "write /u/new") != slices.Contains(f.calls, "put back /u/new") {
		t.Errorf("a unit swapped in beside the failed one must be put back: %q", f.calls)
	}
	if last := f.batches[len(f.batches)-1]; last != "start web.service old.service" {
		t.Errorf("the stopped services must be started again, the new one not: batches %q", f.batches)
	}
	u := res.Undo
	if u == nil || !slices.Equal(u.Started, []string{"old.service", "web.service"}) || len(u.Errors) != 0 || !slices.ContainsFunc(u.Files, func(a plan.Action) bool { return a.Target == "/c/web" }) {
		t.Fatalf("undo %+v", u)
	}
	if slices.ContainsFunc(res.Applied, func(a plan.Action) bool { return a.Target == "/c/web" }) {
		t.Errorf("a write put back is no longer applied: %+v", res.Applied)
	}
	if !slices.Contains(r.undone, "2 write-file /c/web") {
		t.Errorf("the journal must hear what was put back: %q", r.undone)
	}
}

// A stop that does not finish ends the run after its batch; what the batch
// did stop (and the unit still stopping) is started again.
func TestFailedStopStartsTheOthersAgain(t *testing.T) {
	p := running(mk("stop a.service", "stop b.service", "write-unit /u/a", "start a.service"), "a.service", "b.service")
	f := &fake{fail: map[string]error{"stop a.service": &host.JobError{Unit: "a.service", Op: "stop", Result: "timeout"}}}
	res, err := apply(t, p, f)
	if !errors.Is(err, executor.ErrFailed) || slices.Contains(f.calls, "write /u/a") {
		t.Fatalf("err %v calls %q", err, f.calls)
	}
	if res.Undo == nil || !slices.Equal(res.Undo.Started, []string{"a.service", "b.service"}) || res.Undo.Discarded != 1 {
		t.Errorf("undo %+v", res.Undo)
	}
}

// From step 5 on nothing is put back: a failed daemon-reload leaves the
// swapped files in place (settled) for the next run to resume.
func TestFailureFromStep5KeepsTheSwaps(t *testing.T) {
	p := running(mk("stop web.service", "write-unit /u/web", "daemon-reload x", "start web.service"), "web.service")
	f := &fake{fail: map[string]error{"daemon-reload": errors.New("timeout")}}
	res, err := apply(t, p, f)
	if !errors.Is(err, executor.ErrFailed) || res.Undo != nil {
		t.Fatalf("err %v undo %+v", err, res.Undo)
	}
	if slices.Contains(f.calls, "put back /u/web") || !slices.Contains(f.preparing, "settle /u/web") || slices.Contains(f.calls, "start web.service") {
		t.Errorf("calls %q preparing %q", f.calls, f.preparing)
	}
}

func TestStartFailuresAreIndependent(t *testing.T) {
	p := mk("start a.service", "start b.service", "start c.service")
	f := &fake{fail: map[string]error{"start b.service": &host.JobError{Unit: "b.service", Op: "start", Result: "failed"}}}
	res, err := apply(t, p, f)
	if err == nil {
		t.Fatal("want an error")
	}
	if !slices.Equal(f.calls, []string{"start a.service", "start b.service", "start c.service"}) {
		t.Errorf("every start must be attempted: %q", f.calls)
	}
	if len(res.Failed) != 1 || res.Failed[0].Log[0] != "b.service: boom" || len(res.Applied) != 2 {
		t.Errorf("result %+v", res)
	}
	var je *host.JobError
	if !strings.Contains(err.Error(), "1 unit(s) failed") || errors.As(err, &je) {
		t.Errorf("err = %v", err)
	}
}

func TestRefusedPlanRunsNothing(t *testing.T) {
	p := mk("start a.service")
	p.Refusals = []plan.Refusal{{Unit: "x", Message: "no"}}
	f := &fake{}
	if _, err := apply(t, p, f); !errors.Is(err, plan.ErrRefused) || len(f.calls) != 0 {
		t.Fatalf("err %v calls %q", err, f.calls)
	}
}

func TestSecretsNeedADecrypter(t *testing.T) {
	s := &render.Secret{Name: "db", Keys: []string{"password"}}
	p := mk("write-unit /u/a")
	p.Actions = append(p.Actions, plan.Action{Op: plan.OpCreateSecret, Step: plan.StepWriteConfig, Target: "db-password", Payload: &plan.Payload{Secret: s, Key: "password"}})
	f := &fake{}
	if _, err := apply(t, p, f); err == nil || len(f.calls) != 0 {
		t.Fatalf("without a decrypter nothing may run: err %v calls %q", err, f.calls)
	}
	h := executor.Host{Files: f, Systemd: f, Podman: f, Secrets: decrypter{"password": []byte("s3cret")}}
	var logbuf strings.Builder
	res, err := executor.Apply(context.Background(), p, h, executor.Options{Log: zerolog.New(&logbuf)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(f.calls, "secret db-password=s3cret") {
		t.Errorf("calls %q", f.calls)
	}
	if strings.Contains(logbuf.String(), "s3cret") || strings.Contains(fmt.Sprintf("%+v", res), "s3cret") {
		t.Errorf("secret value leaked into the log or result")
	}
}

func TestInterruptStopsBeforeNextAction(t *testing.T) {
	p := mk("write-unit /u/a", "write-unit /u/b")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &fake{}
	res, err := executor.Apply(ctx, p, executor.Host{Files: f, Systemd: f, Podman: f}, executor.Options{Log: zerolog.Nop()})
	if err == nil || len(f.calls) != 0 || len(res.NotReached) != 2 {
		t.Fatalf("err %v calls %q res %+v", err, f.calls, res)
	}
}

// rec is a Recorder that keeps what it was told.
type rec struct {
	lines   []string   // "step N", and a line per landed action in order
	records [][]string // the landed actions of each record, sorted
	undone  []string
	fail    error // what recording a landed action returns
}

func (r *rec) StepBegins(s plan.Step) error {
	r.lines = append(r.lines, fmt.Sprintf("step %d", s))
	return nil
}

func (r *rec) ActionsLanded(ls []executor.Landed) error {
	var b []string
	for _, l := range ls {
		res := "ok"
		if l.Err != nil {
			res = "failed"
		}
		b = append(b, fmt.Sprintf("%d %s %s %s", l.Index, l.Action.Op, l.Action.Target, res))
	}
	r.lines = append(r.lines, b...)
	r.records = append(r.records, slices.Sorted(slices.Values(b)))
	return r.fail
}

func (r *rec) ActionsUndone(ls []executor.Landed) error {
	for _, l := range ls {
		r.undone = append(r.undone, fmt.Sprintf("%d %s %s", l.Index, l.Action.Op, l.Action.Target))
	}
	return nil
}

// The file writes of a step run side by side and are journalled once, as
// a batch, with one record per write; other actions as they land.
func TestFileWritesLandAsOneBatch(t *testing.T) {
	p := mk("write-file /c/a", "write-config-dir /c/d", "write-unit /u/a", "write-unit /u/b", "daemon-reload systemd", "start a.service")
	f := &fake{}
	r := &rec{}
	res, err := executor.Apply(context.Background(), p, executor.Host{Files: f, Systemd: f, Podman: f}, executor.Options{Log: zerolog.Nop(), Recorder: r})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"0 write-file /c/a ok", "1 write-config-dir /c/d ok"}, {"2 write-unit /u/a ok", "3 write-unit /u/b ok"},
		{"4 daemon-reload systemd ok"}, {"5 start a.service ok"}}
	if !reflect.DeepEqual(r.records, want) {
		t.Errorf("records %q, want %q", r.records, want)
	}
	if len(res.Applied) != 6 || res.Applied[2].Target != "/u/a" {
		t.Errorf("applied %+v", res.Applied)
	}
}

func TestRecorderHearsEveryActionAsItLands(t *testing.T) {
	p := mk("write-unit /u/a", "daemon-reload systemd", "start a.service", "start b.service")
	f := &fake{fail: map[string]error{"start b.service": errors.New("boom")}}
	r := &rec{}
	_, err := executor.Apply(context.Background(), p, executor.Host{Files: f, Systemd: f, Podman: f}, executor.Options{Log: zerolog.Nop(), Recorder: r})
	if !errors.Is(err, executor.ErrFailed) {
		t.Fatalf("want ErrFailed, got %v", err)
	}
	want := []string{"step 4", "0 write-unit /u/a ok", "step 7", "1 daemon-reload systemd ok", "step 9", "2 start a.service ok", "3 start b.service failed"}
	if !slices.Equal(r.lines, want) {
		t.Fatalf("recorded\n%q\nwant\n%q", r.lines, want)
	}
}

func TestJournalFailureStopsTheRun(t *testing.T) {
	p := mk("write-unit /u/a", "write-unit /u/b", "daemon-reload systemd")
	f := &fake{}
	res, err := executor.Apply(context.Background(), p, executor.Host{Files: f, Systemd: f, Podman: f},
		executor.Options{Log: zerolog.Nop(), Recorder: &rec{fail: errors.New("disk full")}})
	if !errors.Is(err, executor.ErrJournal) || slices.Contains(f.calls, "daemon-reload") || len(res.NotReached) == 0 {
		t.Fatalf("an unrecordable change must stop the run: err %v calls %q not reached %d", err, f.calls, len(res.NotReached))
	}
}

// A graceful stop lets the action in progress finish and runs nothing
// after it; the result says interrupted and lists what was not reached.
func TestGracefulStopFinishesTheActionInProgress(t *testing.T) {
	p := running(mk("stop a.service", "write-file /c/a", "write-unit /u/a", "write-unit /u/b", "daemon-reload systemd", "start a.service"), "a.service")
	stop := make(chan struct{})
	f := &fake{}
	opts := executor.Options{Log: zerolog.Nop(), Stop: stop, AfterStep: func(s plan.Step) {
		if s == plan.StepWriteConfig {
			close(stop)
		}
	}}
	res, err := executor.Apply(context.Background(), p, executor.Host{Files: f, Systemd: f, Podman: f}, opts)
	if !errors.Is(err, executor.ErrInterrupted) || !res.Interrupted {
		t.Fatalf("want an interrupted run, got err %v interrupted %v", err, res.Interrupted)
	}
	// Interrupted on purpose: nothing is put back (the next run resumes),
	// what was swapped is settled, what was only prepared removed.
	if !slices.Equal(f.calls, []string{"stop a.service", "write /c/a"}) || len(res.NotReached) != 4 || len(res.Applied) != 2 || res.Undo != nil {
		t.Fatalf("calls %q applied %d not reached %d undo %+v", f.calls, len(res.Applied), len(res.NotReached), res.Undo)
	}
	if !slices.Contains(f.preparing, "settle /c/a") || !slices.Contains(f.preparing, "discard /u/a") || !slices.Contains(f.preparing, "discard /u/b") {
		t.Errorf("preparing %q", f.preparing)
	}
}

// A run interrupted between a service's stop and its start says, last,
// that the service is stopped now (issue 55: it said only "apply
// interrupted"); a service stopped to be removed is not down.
func TestInterruptAfterStopNamesWhatIsStopped(t *testing.T) {
	f := &fake{}
	p := running(mk("stop a.service", "stop gone.service", "write-unit /u/a", "remove-unit /u/gone", "daemon-reload systemd", "start a.service"), "a.service")
	stop := make(chan struct{})
	opts := executor.Options{Log: zerolog.Nop(), Stop: stop, AfterStep: func(s plan.Step) {
		if s == plan.StepStop {
			close(stop)
		}
	}}
	res, err := executor.Apply(context.Background(), p, executor.Host{Files: f, Systemd: f, Podman: f}, opts)
	if !errors.Is(err, executor.ErrInterrupted) || !slices.Equal(res.Down, []string{"a.service"}) {
		t.Fatalf("err %v, down %q; want interrupted with a.service down", err, res.Down)
	}
	if !strings.HasSuffix(err.Error(), "a.service is stopped now (this run stopped it and ended before starting it again: re-run syslet to start it)") {
		t.Errorf("the run's last words do not say a.service is stopped now: %v", err)
	}
}

// podman's pull progress is shown under the pull it belongs to, each line
// marked as podman's, not mixed into the apply's own lines (issue 55);
// without a progress writer the pull is quiet.
func TestPullProgressIsMarkedAsThePulls(t *testing.T) {
	var progress strings.Builder
	f := &fake{}
	_, err := executor.Apply(context.Background(), mk("pull-image localhost:5000/web:v2"), executor.Host{Files: f, Systemd: f, Podman: f},
		executor.Options{Log: zerolog.Nop(), Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	want := "  podman pull localhost:5000/web:v2 | Trying to pull localhost:5000/web:v2...\n" +
		"  podman pull localhost:5000/web:v2 | Getting image source signatures\n" +
		"  podman pull localhost:5000/web:v2 | Copying blob sha256:12ab\n" +
		"  podman pull localhost:5000/web:v2 | Writing manifest to image destination\n"
	if progress.String() != want {
		t.Errorf("pull progress:\n%s\nwant:\n%s", progress.String(), want)
	}
	if _, err := executor.Apply(context.Background(), mk("pull-image localhost:5000/web:v2"), executor.Host{Files: f, Systemd: f, Podman: f},
		executor.Options{Log: zerolog.Nop()}); err != nil {
		t.Fatal(err)
	}
}

// slowSystemd blocks a daemon-reload until its context ends.
type slowSystemd struct{ *fake }

func (s slowSystemd) DaemonReload(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

func TestHostOperationsHaveDeadlines(t *testing.T) {
	p := mk("daemon-reload systemd", "start a.service")
	f := &fake{}
	t0 := time.Now()
	res, err := executor.Apply(context.Background(), p, executor.Host{Files: f, Systemd: slowSystemd{f}, Podman: f},
		executor.Options{Log: zerolog.Nop(), ReloadTimeout: 50 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "daemon-reload did not finish within 50ms") {
		t.Fatalf("want a deadline error naming the operation, got %v", err)
	}
	if time.Since(t0) > 5*time.Second || len(res.NotReached) != 1 {
		t.Fatalf("took %s, not reached %d", time.Since(t0), len(res.NotReached))
	}
}

// The stops, reloads and starts of a step go to systemd as one batch
// each, in plan order.
func TestJobsOfAStepAreQueuedTogether(t *testing.T) {
	p := mk("stop a.service", "stop b.service", "write-unit /u/a", "daemon-reload x",
		"reload c.service", "reload d.service", "start a.service", "start b.service", "start e.service")
	f := &fake{}
	res, err := apply(t, p, f)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"stop a.service b.service", "reload c.service d.service", "start a.service b.service e.service"}
	if !slices.Equal(f.batches, want) {
		t.Errorf("batches\n got %q\nwant %q", f.batches, want)
	}
	if len(res.Applied) != len(p.Actions) {
		t.Errorf("applied %d of %d", len(res.Applied), len(p.Actions))
	}
}

// onceFailing fails a build's start (and, as systemd does, the starts
// that require it) in its first batch only: podman's storage race.
type onceFailing struct {
	*fake
	build, dependent string
	tries            int
}

func (o *onceFailing) Jobs(ctx context.Context, op host.JobOp, names []string, landed func(int, error)) {
	o.batches = append(o.batches, string(op)+" "+strings.Join(names, " "))
	first := o.tries == 0
	o.tries++
	for i, n := range names {
		switch {
		case first && n == o.build:
			landed(i, &host.JobError{Unit: n, Op: "start", Result: "failed"})
		case first && n == o.dependent:
			landed(i, &host.JobError{Unit: n, Op: "start", Result: "dependency"})
		default:
			landed(i, o.call(string(op)+" "+n))
		}
	}
}

// apply runs p on a host whose systemd is o, with opts (a quiet log when
// none is set).
func (o *onceFailing) apply(p *plan.Plan, opts executor.Options) (*executor.Result, error) {
	opts.Log = zerolog.Nop()
	return executor.Apply(context.Background(), p, executor.Host{Files: o.fake, Systemd: o, Podman: o.fake}, opts)
}

// TestFailedBuildIsTriedOnceMoreAlone: a build that failed in the batch of
// every start is started once more after it, with what failed because it
// requires the build, in a batch of their own; the result holds the
// second try, the journal both.
func TestFailedBuildIsTriedOnceMoreAlone(t *testing.T) {
	p := mk("start net-network.service", "start app-build.service", "start app.service", "start web.service")
	for i, u := range []string{"net.network", "app.build", "app.container", "web.container"} {
		p.Actions[i].Unit = u
	}
	o := &onceFailing{fake: &fake{}, build: "app-build.service", dependent: "app.service"}
	r := &rec{}
	res, err := o.apply(p, executor.Options{Recorder: r})
	if err != nil {
		t.Fatalf("err %v", err)
	}
	want := []string{"start net-network.service app-build.service app.service web.service", "start app-build.service app.service"}
	if !slices.Equal(o.batches, want) {
		t.Errorf("batches\n got %q\nwant %q", o.batches, want)
	}
	if len(res.Applied) != 4 || len(res.Failed) != 0 {
		t.Errorf("applied %d, failed %+v", len(res.Applied), res.Failed)
	}
	journal := []string{"step 9", "0 start net-network.service ok", "1 start app-build.service failed", "2 start app.service failed", "3 start web.service ok",
		"1 start app-build.service ok", "2 start app.service ok"}
	if !slices.Equal(r.lines, journal) {
		t.Errorf("journal\n got %q\nwant %q", r.lines, journal)
	}

	// A build that fails again is reported once, as its second try; one
	// that is not a build is never tried again.
	o = &onceFailing{fake: &fake{fail: map[string]error{"start app-build.service": &host.JobError{Unit: "app-build.service", Op: "start", Result: "failed"}}}, build: "app-build.service"}
	res, err = o.apply(p, executor.Options{})
	if !errors.Is(err, executor.ErrFailed) || len(res.Failed) != 1 || res.Failed[0].Action.Target != "app-build.service" || len(o.batches) != 2 {
		t.Errorf("err %v, failed %+v, batches %q", err, res.Failed, o.batches)
	}
	f := &fake{fail: map[string]error{"start web.service": &host.JobError{Unit: "web.service", Op: "start", Result: "failed"}}}
	if _, err := apply(t, p, f); !errors.Is(err, executor.ErrFailed) || len(f.batches) != 1 {
		t.Errorf("a failed container start was tried again: batches %q, err %v", f.batches, err)
	}
}

// TestBuildRunAsADependencyIsTriedOnceMore: a container whose unchanged
// build runs again as its dependency (quadlet's build service does not
// stay active) fails with "dependency" when that build fails; it is
// started once more, alone, when the plan holds a build. Without one, a
// start that failed on what it requires is not tried again.
func TestBuildRunAsADependencyIsTriedOnceMore(t *testing.T) {
	p := mk("start app.service", "start web.service")
	p.Actions[0].Unit, p.Actions[1].Unit = "app.container", "web.container"
	p.Units = []plan.UnitChange{{FileName: "app.build", Effect: plan.EffectNone}, {FileName: "app.container", Effect: plan.EffectRestart}}
	o := &onceFailing{fake: &fake{}, dependent: "app.service"}
	res, err := o.apply(p, executor.Options{})
	if err != nil || len(res.Applied) != 2 || len(res.Failed) != 0 {
		t.Errorf("err %v, applied %d, failed %+v", err, len(res.Applied), res.Failed)
	}
	if want := []string{"start app.service web.service", "start app.service"}; !slices.Equal(o.batches, want) {
		t.Errorf("batches\n got %q\nwant %q", o.batches, want)
	}

	p.Units = p.Units[1:]
	o = &onceFailing{fake: &fake{}, dependent: "app.service"}
	res, err = o.apply(p, executor.Options{})
	if !errors.Is(err, executor.ErrFailed) || len(res.Failed) != 1 || len(o.batches) != 1 {
		t.Errorf("with no build in the plan: err %v, failed %+v, batches %q", err, res.Failed, o.batches)
	}
}

// reverseSystemd lands a batch's jobs last to first, failing those named.
type reverseSystemd struct {
	*fake
	slow string // a unit whose job never ends before the deadline
}

func (r reverseSystemd) Jobs(ctx context.Context, op host.JobOp, names []string, landed func(int, error)) {
	for i := len(names) - 1; i >= 0; i-- {
		if names[i] == r.slow {
			<-ctx.Done()
			landed(i, fmt.Errorf("waiting for %s job of unit %q: %w", op, names[i], ctx.Err()))
			continue
		}
		landed(i, r.call(string(op)+" "+names[i]))
	}
}

// Each unit of a batch is journalled as its job lands, whatever the order;
// the result keeps plan order and a failed start still carries its log.
func TestBatchLandsInAnyOrder(t *testing.T) {
	p := mk("start a.service", "start b.service", "start c.service")
	f := &fake{fail: map[string]error{"start b.service": &host.JobError{Unit: "b.service", Op: "start", Result: "failed"}}}
	r := &rec{}
	res, err := executor.Apply(context.Background(), p, executor.Host{Files: f, Systemd: reverseSystemd{fake: f}, Podman: f},
		executor.Options{Log: zerolog.Nop(), Recorder: r})
	if !errors.Is(err, executor.ErrFailed) {
		t.Fatalf("err %v", err)
	}
	want := []string{"step 9", "2 start c.service ok", "1 start b.service failed", "0 start a.service ok"}
	if !slices.Equal(r.lines, want) {
		t.Errorf("journal\n got %q\nwant %q", r.lines, want)
	}
	if len(res.Applied) != 2 || res.Applied[0].Target != "a.service" || res.Applied[1].Target != "c.service" {
		t.Errorf("applied %+v", res.Applied)
	}
	if len(res.Failed) != 1 || res.Failed[0].Action.Target != "b.service" || len(res.Failed[0].Log) == 0 {
		t.Errorf("failed %+v", res.Failed)
	}
}

// The start deadline counts from the batch: a unit that never comes up
// fails with a plain message, the others of its batch are applied.
func TestStartDeadlineOfABatch(t *testing.T) {
	p := mk("start a.service", "start slow.service", "start c.service")
	f := &fake{}
	res, err := executor.Apply(context.Background(), p, executor.Host{Files: f, Systemd: reverseSystemd{fake: f, slow: "slow.service"}, Podman: f},
		executor.Options{Log: zerolog.Nop(), StartTimeout: 50 * time.Millisecond})
	if err == nil || len(res.Failed) != 1 || len(res.Applied) != 2 {
		t.Fatalf("err %v result %+v", err, res)
	}
	if msg := res.Failed[0].Error; !strings.Contains(msg, "slow.service did not become active within 50ms") {
		t.Errorf("message %q", msg)
	}
}

// A failed stop ends the run after its batch: the other stops of the batch
// were already queued and are reported applied, nothing after runs.
func TestFailedStopEndsTheRunAfterItsBatch(t *testing.T) {
	p := mk("stop a.service", "stop b.service", "stop gone.service", "write-unit /u/a", "start a.service")
	f := &fake{fail: map[string]error{
		"stop a.service":    &host.JobError{Unit: "a.service", Op: "stop", Result: "timeout"},
		"stop gone.service": fmt.Errorf("stopping unit: %w", host.ErrNotFound),
	}}
	res, err := apply(t, p, f)
	if !errors.Is(err, executor.ErrFailed) {
		t.Fatalf("err %v", err)
	}
	if len(res.Applied) != 2 || len(res.Failed) != 1 || len(res.NotReached) != 2 || res.Failed[0].Log != nil {
		t.Errorf("applied %d failed %+v not reached %d", len(res.Applied), res.Failed, len(res.NotReached))
	}
}

// A secret step 3 created stays when the run fails in step 4 and puts the
// rest back: podman keeps no old value to restore, and Undo says so.
func TestPutBackKeepsTheSecretsItCreated(t *testing.T) {
	s := &render.Secret{Name: "db", Keys: []string{"password"}}
	p := mk("write-unit /u/a")
	p.Actions = append(p.Actions, plan.Action{Op: plan.OpCreateSecret, Step: plan.StepWriteConfig, Target: "db-password", Payload: &plan.Payload{Secret: s, Key: "password"}})
	f := &fake{fail: map[string]error{"write /u/a": errors.New("rename: device or resource busy")}}
	h := executor.Host{Files: f, Systemd: f, Podman: f, Secrets: decrypter{"password": []byte("s3cret")}}
	res, err := executor.Apply(context.Background(), p, h, executor.Options{Log: zerolog.Nop()})
	if !errors.Is(err, executor.ErrFailed) || !slices.Contains(f.calls, "secret db-password=s3cret") {
		t.Fatalf("err %v calls %q", err, f.calls)
	}
	if res.Undo == nil || !slices.Equal(res.Undo.Kept, []string{"db-password"}) {
		t.Errorf("undo %+v, want the secret kept", res.Undo)
	}
}

// An action outside its own step would run as that step runs (a start
// among the writes): the plan is refused before anything changes.
func TestActionOutsideItsStepIsRefused(t *testing.T) {
	p := mk("write-unit /u/a", "start a.service")
	p.Actions[1].Step = plan.StepWriteUnits
	f := &fake{}
	res, err := apply(t, p, f)
	if err == nil || !strings.Contains(err.Error(), "start a.service in step 4") || len(f.calls)+len(f.preparing) != 0 || len(res.NotReached) != 2 {
		t.Fatalf("err %v calls %q preparing %q res %+v", err, f.calls, f.preparing, res)
	}
}

// A write step creates its podman secrets one by one, then swaps its file
// writes in side by side: a failed secret leaves every file unswapped.
func TestSecretsOfAWriteStepComeBeforeItsFiles(t *testing.T) {
	s := &render.Secret{Name: "db", Keys: []string{"password"}}
	p := mk("write-file /c/a", "write-file /c/b")
	p.Actions = append(p.Actions, plan.Action{Op: plan.OpCreateSecret, Step: plan.StepWriteConfig, Target: "db-password", Payload: &plan.Payload{Secret: s, Key: "password"}})
	f := &fake{fail: map[string]error{"secret db-password=s3cret": errors.New("podman: no space")}}
	h := executor.Host{Files: f, Systemd: f, Podman: f, Secrets: decrypter{"password": []byte("s3cret")}}
	res, err := executor.Apply(context.Background(), p, h, executor.Options{Log: zerolog.Nop()})
	if !errors.Is(err, executor.ErrFailed) || !slices.Equal(f.calls, []string{"secret db-password=s3cret"}) {
		t.Fatalf("err %v calls %q", err, f.calls)
	}
	if len(res.Failed) != 1 || len(res.NotReached) != 2 || res.Undo == nil || res.Undo.Discarded != 2 {
		t.Errorf("failed %+v not reached %d undo %+v", res.Failed, len(res.NotReached), res.Undo)
	}
}
