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
	mu      sync.Mutex // file writes run side by side
	calls   []string
	fail    map[string]error
	batches []string // one entry per Jobs call: "op unit unit..."
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
	return f.fail[s]
}

func (f *fake) WriteFile(p string, _ []byte, mode uint32) error { return f.call("write " + p) }
func (f *fake) WriteDir(p string, _ []host.DirFile) error       { return f.call("writedir " + p) }
func (f *fake) WriteLink(p, t string) error                     { return f.call("link " + p + " " + t) }
func (f *fake) Remove(p, _ string) error                        { return f.call("remove " + p) }
func (f *fake) DaemonReload(context.Context) error              { return f.call("daemon-reload") }

// Jobs runs the batch one unit after another, landing each at once.
func (f *fake) Jobs(_ context.Context, op host.JobOp, names []string, landed func(int, error)) {
	f.batches = append(f.batches, string(op)+" "+strings.Join(names, " "))
	for i, n := range names {
		landed(i, f.call(string(op)+" "+n))
	}
}
func (f *fake) LastLog(_ context.Context, n string, _ int) ([]string, error) {
	return []string{n + ": boom"}, nil
}
func (f *fake) PullImage(_ context.Context, r string, _ io.Writer) error { return f.call("pull " + r) }
func (f *fake) PullImageWith(_ context.Context, r string, _ host.PullOptions, _ io.Writer) error {
	return f.call("pull-with " + r)
}
func (f *fake) RemoveImage(_ context.Context, r string) error   { return f.call("rmi " + r) }
func (f *fake) RemoveVolume(_ context.Context, n string) error  { return f.call("rmvol " + n) }
func (f *fake) RemoveNetwork(_ context.Context, n string) error { return f.call("rmnet " + n) }
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

// A failed write stops the run: no write starts after it (those already in
// flight beside it finish), and nothing of a later step runs.
func TestWriteFailureStops(t *testing.T) {
	p := mk("stop a.service", "write-unit /u/a", "write-unit /u/b", "daemon-reload x", "start a.service")
	f := &fake{fail: map[string]error{"write /u/a": errors.New("disk full")}}
	res, _ := apply(t, p, f)
	if f.calls[0] != "stop a.service" || !slices.Contains(f.calls, "write /u/a") ||
		slices.Contains(f.calls, "daemon-reload") || slices.Contains(f.calls, "start a.service") {
		t.Errorf("calls %q", f.calls)
	}
	if len(res.Failed) != 1 || len(res.Applied)+len(res.Failed)+len(res.NotReached) != 5 || len(res.NotReached) < 2 {
		t.Errorf("applied %d failed %d not reached %d", len(res.Applied), len(res.Failed), len(res.NotReached))
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
	p.Actions = append(p.Actions, plan.Action{Op: plan.OpCreateSecret, Step: plan.StepWriteConfig, Target: "db-password", Secret: s, Key: "password"})
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
	lines []string
	fail  error
}

func (r *rec) StepBegins(s plan.Step) error {
	r.lines = append(r.lines, fmt.Sprintf("step %d", s))
	return nil
}

func (r *rec) ActionLanded(i int, a plan.Action, err error, _ time.Duration) error {
	res := "ok"
	if err != nil {
		res = "failed"
	}
	r.lines = append(r.lines, fmt.Sprintf("%d %s %s %s", i, a.Op, a.Target, res))
	return r.fail
}

// batchRec is a BatchRecorder: file writes reach it as one batch.
type batchRec struct {
	rec
	batches [][]string
}

func (r *batchRec) ActionsLanded(ls []executor.Landed) error {
	var b []string
	for _, l := range ls {
		b = append(b, fmt.Sprintf("%d %s %s", l.Index, l.Action.Op, l.Action.Target))
	}
	slices.Sort(b)
	r.batches = append(r.batches, b)
	return nil
}

// The file writes of a step run side by side and are journalled once, as
// a batch, with one record per write; other actions as they land.
func TestFileWritesLandAsOneBatch(t *testing.T) {
	p := mk("write-file /c/a", "write-config-dir /c/d", "write-unit /u/a", "write-unit /u/b", "daemon-reload systemd", "start a.service")
	f := &fake{}
	r := &batchRec{}
	res, err := executor.Apply(context.Background(), p, executor.Host{Files: f, Systemd: f, Podman: f}, executor.Options{Log: zerolog.Nop(), Recorder: r})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"0 write-file /c/a", "1 write-config-dir /c/d"}, {"2 write-unit /u/a", "3 write-unit /u/b"}}
	if !reflect.DeepEqual(r.batches, want) {
		t.Errorf("batches %q, want %q", r.batches, want)
	}
	if want := []string{"step 3", "step 4", "step 7", "4 daemon-reload systemd ok", "step 9", "5 start a.service ok"}; !slices.Equal(r.lines, want) {
		t.Errorf("records %q, want %q", r.lines, want)
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
	p := mk("write-unit /u/a", "write-unit /u/b", "daemon-reload systemd", "start a.service")
	stop := make(chan struct{})
	f := &fake{}
	opts := executor.Options{Log: zerolog.Nop(), Stop: stop, AfterStep: func(s plan.Step) {
		if s == plan.StepWriteUnits {
			close(stop)
		}
	}}
	res, err := executor.Apply(context.Background(), p, executor.Host{Files: f, Systemd: f, Podman: f}, opts)
	if !errors.Is(err, executor.ErrInterrupted) || !res.Interrupted {
		t.Fatalf("want an interrupted run, got err %v interrupted %v", err, res.Interrupted)
	}
	slices.Sort(f.calls)
	if !slices.Equal(f.calls, []string{"write /u/a", "write /u/b"}) || len(res.NotReached) != 2 || len(res.Applied) != 2 {
		t.Fatalf("calls %q applied %d not reached %d", f.calls, len(res.Applied), len(res.NotReached))
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
