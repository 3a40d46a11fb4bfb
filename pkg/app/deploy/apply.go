package deploy

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/generation"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/probe"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/secrets"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
)

// pid is this process's, as the journal records it.
func pid() int { return os.Getpid() }

// apply executes a pass's plan under the journal, then holds what it
// started to the health gate.
func (r *runner) apply(ctx context.Context, in passInput, res passResult, pl planned, opened *secrets.Opened) (passResult, error) {
	p := pl.plan
	if r.req.Started != nil && in.kind.asks() {
		r.req.Started(view.Started(p, in.runID, r.req.sourceKind(), in.source, res.summary))
	}
	run, err := r.jr.Begin(r.intent(in, p))
	if err != nil {
		return res.end(verdict.Failed, fmt.Errorf("%w: nothing was changed: %w", executor.ErrJournal, err))
	}
	if stored := r.stored(in); stored != nil {
		if err := storeStdin(r.req.Root, stored); err != nil {
			_ = run.End(runlog.Record{Result: verdict.Failed.Journal(), Error: err.Error(), NotReached: len(p.Actions)})
			return res.end(verdict.Failed, fmt.Errorf("%w; nothing was changed", err))
		}
	}
	began := time.Now()
	xres, err := r.execute(ctx, run, in, p, opened)
	res.result = xres
	if xres != nil {
		res.summary = view.ResultLine(xres)
	}
	if g := failedStarts(xres, in.set); err != nil && g != nil && r.h.live != nil {
		// Containers that did not even start are a failed gate too: the
		// run got as far as starting them, so the host is what the
		// rollback can return from.
		res.gate = g
		r.view.Gate(g)
		r.endRun(run, xres, verdict.GateFailed, g)
		return r.failedGate(in, res, err)
	}
	if err != nil {
		v := failed(err)
		r.endRun(run, xres, v, nil)
		return res.end(v, err)
	}
	return r.judge(ctx, in, res, run, gate.Gated(xres, in.set.Out), began, opened)
}

// judge holds the units a pass started to the health gate and ends the
// pass with its verdict. since is when the pass began changing the host
// (zero when it changed nothing): the units' log lines before it are not
// its.
func (r *runner) judge(ctx context.Context, in passInput, res passResult, run *runlog.Run, units []gate.Unit, since time.Time, opened *secrets.Opened) (passResult, error) {
	req := r.req
	g := gate.Run(ctx, gateHost{r.h.live}, units, gate.Limits{Start: req.StartTimeout, Soak: req.Soak, Read: req.ReadTimeout, Since: since}, req.Stop)
	scrubGate(g, opened)
	res.gate = g
	r.view.Gate(g)
	switch {
	case g.Interrupted:
		r.endRun(run, res.result, verdict.Interrupted, g)
		return res.end(verdict.Interrupted, fmt.Errorf("%w during the health gate: the changes are applied but were not judged", ErrInterrupted))
	case g.Passed():
		v := verdict.Applied
		switch {
		case in.kind == handRollback:
			v = verdict.Restored
		case in.kind == gateRollback:
			v = verdict.RolledBack
		case res.result == nil:
			v = verdict.Judged
		}
		if err := r.endRun(run, res.result, v, g); err != nil {
			return res.end(failed(err), err)
		}
		if in.kind.owns() {
			r.remember(ctx, in, res.plan, true)
		}
		return res.end(v, nil)
	}
	r.endRun(run, res.result, verdict.GateFailed, g)
	return r.failedGate(in, res, nil)
}

// failedGate ends a pass whose started containers failed the health gate.
// The run's own input then rolls back (Run decides how; cause, the
// executor's error when starts failed, goes with it); a rollback that
// fails the gate is a failed rollback.
func (r *runner) failedGate(in passInput, res passResult, cause error) (passResult, error) {
	why := failures(res.gate)
	if in.kind.rollsBack() {
		res.summary = "failed the health gate: " + why
		return res.end(verdict.GateFailed, cause)
	}
	if cause != nil {
		return res.end(verdict.RollbackFailed, fmt.Errorf("%w: %s: %w", ErrRollbackFailed, why, cause))
	}
	return res.end(verdict.RollbackFailed, fmt.Errorf("%w: %s", ErrRollbackFailed, why))
}

// judgeEarlier is a pass with nothing to change after a run whose changes
// all landed but whose health gate never gave its verdict: it holds that
// run's containers to the gate now, with what follows from the verdict.
func (r *runner) judgeEarlier(ctx context.Context, in passInput, res passResult, services []string, opened *secrets.Opened) (passResult, error) {
	r.view.JudgingEarlier()
	run, err := r.jr.Begin(r.intent(in, res.plan))
	if err != nil {
		return res.end(verdict.Failed, fmt.Errorf("%w: %w", executor.ErrJournal, err))
	}
	return r.judge(ctx, in, res, run, gate.Gated(nil, in.set.Out, services...), time.Time{}, opened)
}

// execute runs the plan with the journal as its recorder.
func (r *runner) execute(ctx context.Context, run *runlog.Run, in passInput, p *plan.Plan, opened *secrets.Opened) (*executor.Result, error) {
	req := r.req
	eh, err := r.h.executor(opened, in.runID, p)
	if err != nil {
		return nil, err
	}
	opts := req.executorOptions(r.view, in.runID, run)
	if req.AfterStep != nil {
		name := in.kind.name()
		opts.AfterStep = func(s plan.Step) { req.AfterStep(int(s), name) }
	}
	r.view.Applying(in.runID)
	res, err := executor.Apply(ctx, p, eh, opts)
	scrubResult(res, opened)
	r.view.Applied(in.runID, res)
	return res, err
}

// executorOptions are the executor's options for a run journalled as
// run: the request's deadlines and stop request, the per-action log lines
// on the view, the journal as recorder, and the view's pull progress.
func (req *Request) executorOptions(v view.Operation, runID string, run *runlog.Run) executor.Options {
	return executor.Options{
		Log:          newLogger(v.Actions(), runID),
		StartTimeout: req.StartTimeout, PullTimeout: req.PullTimeout, StopTimeout: req.StopTimeout, ReloadTimeout: req.ReloadTimeout,
		Stop:     req.Stop,
		Recorder: recorder{run},
		Progress: v.Progress(),
	}
}

// endRecord is the journal's closing record of a run that executed res
// and ended with v; g is its health gate, when it got that far.
func endRecord(res *executor.Result, v verdict.Verdict, g *gate.Report) runlog.Record {
	rec := runlog.Record{Result: v.Journal()}
	if res != nil {
		rec.Applied, rec.Failed, rec.NotReached, rec.Millis = len(res.Applied), len(res.Failed), len(res.NotReached), res.Duration.Milliseconds()
		rec.Restored = res.Restored
	}
	if g != nil && len(g.Failures) > 0 {
		rec.Error, rec.GateFailed = "health gate: "+failures(g), len(g.Failures)
	} else if res != nil && res.Undo != nil {
		rec.Error = view.UndoLine(res.Undo)
		rec.PutBack = len(res.Undo.Errors) == 0
	}
	return rec
}

// endRun closes a pass in the journal with its verdict. A failure to
// write it is a warning: the pass's verdict stands, and the next run
// reads the journal as unfinished.
func (r *runner) endRun(run *runlog.Run, res *executor.Result, v verdict.Verdict, g *gate.Report) error {
	if err := run.End(endRecord(res, v, g)); err != nil {
		err = fmt.Errorf("%w: %w", executor.ErrJournal, err)
		if v != verdict.Applied && v != verdict.Judged && v != verdict.Restored && v != verdict.RolledBack {
			r.view.Warning(err.Error())
		}
		return err
	}
	return nil
}

// remember records the pass as the host's newest generation: the input it
// applied and the image each container runs now. A pass that changed
// nothing adds one only to a host that has none yet: the newest one still
// describes the host (its input may differ only in form), and a converged
// run must not wake podman.
func (r *runner) remember(ctx context.Context, in passInput, p *plan.Plan, changed bool) {
	if r.h.live == nil {
		return
	}
	if !changed {
		if latest, err := r.gens.Latest(); err != nil || latest != nil {
			return
		}
	}
	cs, err := r.h.live.Podman.Containers(ctx)
	if err != nil {
		r.view.Warning("no generation recorded (a rollback cannot return to this run): " + err.Error())
		return
	}
	images := containerImages(in.set, cs)
	r.imageDigests(ctx, images)
	g := generation.Generation{Run: in.runID, Time: time.Now(), Source: in.source, Signer: in.signer, InputDigest: in.set.Digest(),
		PlanDigest: p.Digest(), Images: images, Input: in.set.Stream()}
	if err := r.gens.Record(g); err != nil {
		r.view.Warning(err.Error())
	}
}

// failedStarts turns a run whose only failures are the starts, restarts or reloads
// of containers (step 9: everything before it landed) into a failed
// health gate; nil for any other failure.
func failedStarts(res *executor.Result, l *load.Set) *gate.Report {
	if res == nil || res.Interrupted || len(res.Failed) == 0 {
		return nil
	}
	// A start-first slot not ready is a failed start too; the rest of its
	// switch is called off (not reached) and the old slot keeps serving.
	calledOff := map[string]bool{}
	for _, f := range res.Failed {
		if f.Action.Op == plan.OpAwaitReady {
			calledOff[f.Action.Data().Switch.Site] = true
		}
	}
	for _, a := range res.NotReached {
		if sw := a.Data().Switch; sw == nil || !calledOff[sw.Site] {
			return nil
		}
	}
	containers := map[string]bool{}
	for _, u := range l.Out.Units {
		if u.Kind == spec.Container {
			containers[u.FileName] = true
		}
	}
	g := &gate.Report{}
	for _, f := range res.Failed {
		if (f.Action.Op != plan.OpStart && f.Action.Op != plan.OpRestart && f.Action.Op != plan.OpReload && f.Action.Op != plan.OpAwaitReady) || !containers[f.Action.Unit] {
			return nil
		}
		g.Units = append(g.Units, f.Action.Target)
		reason := "did not " + string(f.Action.Op) + ": " + f.Error
		if f.Action.Op == plan.OpAwaitReady {
			reason = "not ready: " + f.Error
		}
		g.Failures = append(g.Failures, gate.Failure{Service: f.Action.Target, Reason: reason, Log: f.Log})
	}
	return g
}

// gateHost is the running system as the health gate reads it.
type gateHost struct{ live *Live }

func (g gateHost) Health(ctx context.Context, names []string) (map[string]host.UnitHealth, error) {
	return g.live.Systemd.Health(ctx, names)
}

func (g gateHost) LastLog(ctx context.Context, name string, since time.Time, n int) ([]string, error) {
	return g.live.Systemd.LastLog(ctx, name, since, n)
}

func (g gateHost) ContainerHealth(ctx context.Context, name string) (string, error) {
	return g.live.Podman.ContainerHealth(ctx, name)
}

func (g gateHost) Containers(ctx context.Context) (map[string]host.Container, error) {
	return g.live.Podman.Containers(ctx)
}

func (g gateHost) Probe(ctx context.Context, container string, p *probe.Probe) probe.Answer {
	return g.live.Podman.Probe(ctx, container, p)
}

// failures says in one line which units failed the gate and why.
func failures(g *gate.Report) string {
	var parts []string
	for _, f := range g.Failures {
		if f.Service == "" {
			parts = append(parts, f.Reason) // the gate's own
			continue
		}
		parts = append(parts, f.Service+" "+f.Reason)
	}
	return strings.Join(parts, "; ")
}
