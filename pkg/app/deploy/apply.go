package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/generation"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/plan"
)

// runner is one run under the apply lock: the host, the journal, the kept
// generations, and where people read what happens.
type runner struct {
	req   *Request
	out   *Outcome
	human io.Writer
	h     *hostConn
	jr    *runlog.Journal
	gens  *generation.Store
	// verdict awaits podman's converter check of the run's own input.
	verdict func() error
	// lastGate is the health gate's verdict on the last pass.
	lastGate *gate.Report
	// pendingGate are the services of an earlier run whose changes all
	// landed but were never judged by the gate (makePlan finds them).
	pendingGate []string
	// release is the podman release the run's input was checked against;
	// state the host state its plan was derived from, kept when a saved
	// plan is written or checked (saved.go), and runs the journal's recent
	// runs read with it.
	release unit.Podman
	state   *SavedState
	runs    []*runlog.RunInfo
}

// restore is a rollback: the generation it applies again and the run it
// rolls back ("" for one by hand).
type restore struct {
	gen *generation.Generation
	of  string
}

// pass plans and applies one input — the run's own, or the generation a
// rollback restores — and holds what it started to the health gate.
func (r *runner) pass(ctx context.Context, l *load.Set, runID string, resumeOK bool, rs *restore) error {
	req, out := r.req, r.out
	opened, err := openSecrets(req, l.Out)
	if err != nil {
		return err
	}
	defer opened.Wipe() // zero every decrypted value once the pass is over
	r.h.secrets = opened

	rctx, cancel := context.WithTimeout(ctx, req.ReadTimeout)
	p, obs, err := r.plan(rctx, l, resumeOK, rs)
	cancel()
	if err != nil && errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		err = fmt.Errorf("reading the host's state did not finish within %s: %w", req.ReadTimeout, err)
	}
	if rs == nil || rs.of == "" {
		if verr := r.verdict(); verr != nil {
			return verr
		}
	}
	if err != nil {
		return err
	}
	if !req.AllowRemovals && rs == nil {
		p.GuardRemovals()
	}
	out.Plan, out.Digest = p, p.Digest()
	out.Summary = view.PlanSummary(p)
	if err := r.checkSaved(runID, l, p, rs); err != nil {
		return err
	}
	kept, err := r.h.stage(ctx, p, obs, l.Out, req.Stderr)
	out.StageDir = kept
	if err != nil {
		printPlan(r.human, req, l, p)
		fmt.Fprintln(req.Stderr, "syslet: staging failed, nothing was changed:")
		view.Lines(req.Stderr, err.Error())
		printKept(req.Stderr, kept)
		if !req.Diff {
			r.record(runID, l, p, rs, runlog.ResultRefused)
		}
		return fmt.Errorf("%w: %w", ErrStaging, err)
	}
	if rs != nil {
		view.RollbackHeader(r.human, rs.gen.Run, rs.of)
	}
	printPlan(r.human, req, l, p)
	printKept(req.Stderr, kept)
	printSecretValues(r.human, req, p, opened)
	if !p.Appliable() {
		if !req.Diff {
			r.record(runID, l, p, rs, runlog.ResultRefused)
		}
		return fmt.Errorf("%w: %d refusal(s); nothing was changed", plan.ErrRefused, len(p.Refusals))
	}
	if err := r.save(l, p); err != nil { // --diff --out (saved.go)
		return err
	}
	if req.Diff {
		if n := len(p.Leftovers); n > 0 {
			fmt.Fprintf(req.Stderr, "syslet: %d temporary file(s) an interrupted run left in the managed trees; the next apply removes them\n", n)
		}
		return nil
	}
	if req.Confirm != nil && !p.Empty() && (rs == nil || rs.of == "") && !req.Confirm() {
		return ErrDeclined
	}
	r.h.sweep(p.Leftovers, req.Stderr)
	// What a later plain `syslet` applies: the stream from stdin, or the
	// generation a rollback returns to (so a plain run after a killed
	// rollback finishes it, never the failed input again).
	var stored []byte
	switch {
	case rs != nil:
		stored = rs.gen.Input
	case req.Path == "-":
		stored = l.Stream()
	}
	out.RunID = runID
	if p.Empty() && len(r.pendingGate) > 0 && rs == nil && r.h.live != nil {
		return r.judgeEarlier(ctx, l, runID, p)
	}
	if p.Empty() {
		if stored != nil {
			if err := storeStdin(req.Root, stored); err != nil {
				return err
			}
		}
		r.record(runID, l, p, rs, resultOf(rs, runlog.ResultNoChanges))
		if rs == nil {
			r.remember(ctx, runID, l, p, false)
		}
		return nil
	}
	if req.Started != nil && (rs == nil || rs.of == "") {
		req.Started(r.started(p, runID))
	}
	run, err := r.jr.Begin(r.intent(runID, l, p, rs))
	if err != nil {
		return fmt.Errorf("%w: nothing was changed: %w", executor.ErrJournal, err)
	}
	if stored != nil {
		if err := storeStdin(req.Root, stored); err != nil {
			_ = run.End(runlog.Record{Result: runlog.ResultFailed, Error: err.Error(), NotReached: len(p.Actions)})
			return fmt.Errorf("%w; nothing was changed", err)
		}
	}
	res, err := r.execute(ctx, run, runID, p, rs)
	out.Result = res
	if res != nil {
		out.Summary = view.ResultLine(res)
	}
	if g := failedStarts(res, l); err != nil && g != nil && r.h.live != nil {
		// Containers that did not even start are a failed gate too: the
		// run got as far as starting them, so the host is what the
		// rollback can return from.
		r.lastGate = g
		if rs == nil {
			out.Gate = g
		}
		view.Gate(r.human, g)
		if jerr := r.end(run, res, runlog.ResultFailed, g); jerr != nil {
			view.Error(req.Stderr, "syslet: warning", jerr)
		}
		if rs != nil {
			return fmt.Errorf("%w: %s: %w", ErrRollbackFailed, failures(g), err)
		}
		return r.afterFailedGate(ctx, runID, res, g, err)
	}
	if err != nil {
		result := runlog.ResultFailed
		if res != nil && res.Interrupted {
			result = runlog.ResultInterrupted
		}
		if jerr := r.end(run, res, result, nil); jerr != nil {
			view.Error(req.Stderr, "syslet: warning", jerr)
		}
		return err
	}

	// The health gate: what the run started must come up and stay up.
	g := gate.Run(ctx, gateHost{r.h.live}, gate.Gated(res, l.Out, r.pendingGate...), gate.Limits{Start: req.StartTimeout, Soak: req.Soak, Read: req.ReadTimeout}, req.Stop)
	r.scrubGate(g)
	r.lastGate = g
	if rs == nil {
		out.Gate = g
	}
	view.Gate(r.human, g)
	switch {
	case g.Interrupted:
		if jerr := r.end(run, res, runlog.ResultInterrupted, g); jerr != nil {
			view.Error(req.Stderr, "syslet: warning", jerr)
		}
		return fmt.Errorf("%w during the health gate: the changes are applied but were not judged", ErrInterrupted)
	case g.Passed():
		if jerr := r.end(run, res, resultOf(rs, runlog.ResultOK), g); jerr != nil {
			return jerr
		}
		if rs == nil {
			r.remember(ctx, runID, l, p, true)
		}
		return nil
	}
	if jerr := r.end(run, res, runlog.ResultFailed, g); jerr != nil {
		view.Error(req.Stderr, "syslet: warning", jerr)
	}
	if rs != nil {
		return fmt.Errorf("%w: %s", ErrRollbackFailed, failures(g))
	}
	return r.afterFailedGate(ctx, runID, res, g, nil)
}

// resultOf is a run's result, a rollback's being rolled-back when it
// ended well.
func resultOf(rs *restore, result string) string {
	if rs != nil && (result == runlog.ResultOK || result == runlog.ResultNoChanges) {
		return runlog.ResultRolledBack
	}
	return result
}

// plan observes the host and builds the plan: with a rollback's pins,
// and carrying forward what the last run left unfinished.
func (r *runner) plan(ctx context.Context, l *load.Set, resume bool, rs *restore) (*plan.Plan, *plan.Observed, error) {
	opts := plan.Options{Force: r.req.Force, InputDigest: l.Digest()}
	gens, err := r.gens.List()
	if err != nil {
		view.Error(r.req.Stderr, "syslet: warning", err)
	}
	opts.KeepImages = keptImages(gens)
	if rs != nil {
		opts.Rollback = true
		opts.Pins = r.pins(ctx, rs.gen)
	}
	// The run's own input (not a generation a failed gate rolls back to)
	// waits for its converter check before the host is read.
	return makePlan(ctx, r, l, resume, rs == nil || rs.of == "", opts)
}

// execute runs the plan with the journal as its recorder.
func (r *runner) execute(ctx context.Context, run *runlog.Run, runID string, p *plan.Plan, rs *restore) (*executor.Result, error) {
	req := r.req
	eh, err := r.h.executor()
	if err != nil {
		return nil, err
	}
	opts := executor.Options{
		Log:          newLogger(req.Stderr, runID),
		StartTimeout: req.StartTimeout, PullTimeout: req.PullTimeout, StopTimeout: req.StopTimeout, ReloadTimeout: req.ReloadTimeout,
		Stop:     req.Stop,
		Recorder: recorder{run},
	}
	if req.AfterStep != nil {
		pass := PassApply
		if rs != nil && rs.of != "" {
			pass = PassRollback
		}
		opts.AfterStep = func(s plan.Step) { req.AfterStep(int(s), pass) }
	}
	if view.IsTerminal(req.Stderr) {
		opts.Progress = req.Stderr
	}
	view.Applying(r.human, runID)
	res, err := executor.Apply(ctx, p, eh, opts)
	r.scrubResult(res)
	view.ApplySummary(r.human, runID, res)
	return res, err
}

// end closes a run in the journal.
func (r *runner) end(run *runlog.Run, res *executor.Result, result string, g *gate.Report) error {
	rec := runlog.Record{Result: result}
	if res != nil {
		rec.Applied, rec.Failed, rec.NotReached, rec.Millis = len(res.Applied), len(res.Failed), len(res.NotReached), res.Duration.Milliseconds()
	}
	if g != nil && len(g.Failures) > 0 {
		rec.Error = "health gate: " + failures(g)
	} else if res != nil && res.Undo != nil {
		rec.Error = view.UndoLine(res.Undo)
		rec.PutBack = len(res.Undo.Errors) == 0
	}
	if err := run.End(rec); err != nil {
		return fmt.Errorf("%w: %w", executor.ErrJournal, err)
	}
	return nil
}

// record writes a run that executed nothing: its intent and its end, in
// one write.
func (r *runner) record(runID string, l *load.Set, p *plan.Plan, rs *restore, result string) {
	if _, err := r.jr.Record(r.intent(runID, l, p, rs), runlog.Record{Result: result}); err != nil {
		view.Error(r.req.Stderr, "syslet: warning", err)
	}
}

func (r *runner) intent(runID string, l *load.Set, p *plan.Plan, rs *restore) runlog.Record {
	rec := runlog.Record{Run: runID, PID: os.Getpid(), Source: r.req.Source, InputDigest: l.Digest(),
		PlanDigest: p.Digest(), Actions: journalActions(p)}
	if p.Resume != nil {
		rec.Resumes = p.Resume.Run
	}
	if rs != nil {
		rec.Rollback, rec.RollbackOf = rs.gen.Run, rs.of
	}
	return rec
}

// remember records the run as the host's newest generation: the input it
// applied and the image each container runs now. A run that changed
// nothing adds one only to a host that has none yet: the newest one still
// describes the host (its input may differ only in form), and a converged
// run must not wake podman.
func (r *runner) remember(ctx context.Context, runID string, l *load.Set, p *plan.Plan, changed bool) {
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
		view.Error(r.req.Stderr, "syslet: warning: no generation recorded (a rollback cannot return to this run)", err)
		return
	}
	g := generation.Generation{Run: runID, Time: time.Now(), Source: r.req.Source, InputDigest: l.Digest(),
		PlanDigest: p.Digest(), Images: containerImages(l, cs), Input: l.Stream()}
	if err := r.gens.Record(g); err != nil {
		view.Error(r.req.Stderr, "syslet: warning", err)
	}
}

// failedStarts turns a run whose only failures are the starts or reloads
// of containers (step 9: everything before it landed) into a failed
// health gate; nil for any other failure.
func failedStarts(res *executor.Result, l *load.Set) *gate.Report {
	if res == nil || res.Interrupted || len(res.Failed) == 0 || len(res.NotReached) > 0 {
		return nil
	}
	containers := map[string]bool{}
	for _, u := range l.Out.Units {
		if u.Kind == spec.Container {
			containers[u.FileName] = true
		}
	}
	g := &gate.Report{}
	for _, f := range res.Failed {
		if (f.Action.Op != plan.OpStart && f.Action.Op != plan.OpReload) || !containers[f.Action.Unit] {
			return nil
		}
		g.Units = append(g.Units, f.Action.Target)
		g.Failures = append(g.Failures, gate.Failure{Service: f.Action.Target, Reason: "did not " + string(f.Action.Op) + ": " + f.Error, Log: f.Log})
	}
	return g
}

// judgeEarlier is a run with nothing to change after one whose changes all
// landed but whose health gate never gave its verdict: it holds that run's
// containers to the gate now, with what follows from the verdict.
func (r *runner) judgeEarlier(ctx context.Context, l *load.Set, runID string, p *plan.Plan) error {
	req, out := r.req, r.out
	fmt.Fprintf(r.human, "The previous run's changes all landed, but its health gate gave no verdict; judging its containers now.\n")
	run, err := r.jr.Begin(r.intent(runID, l, p, nil))
	if err != nil {
		return fmt.Errorf("%w: %w", executor.ErrJournal, err)
	}
	g := gate.Run(ctx, gateHost{r.h.live}, gate.Gated(nil, l.Out, r.pendingGate...), gate.Limits{Start: req.StartTimeout, Soak: req.Soak, Read: req.ReadTimeout}, req.Stop)
	r.scrubGate(g)
	r.lastGate, out.Gate = g, g
	view.Gate(r.human, g)
	switch {
	case g.Interrupted:
		_ = r.end(run, nil, runlog.ResultInterrupted, g)
		return fmt.Errorf("%w during the health gate", ErrInterrupted)
	case g.Passed():
		if err := r.end(run, nil, runlog.ResultOK, g); err != nil {
			return err
		}
		r.remember(ctx, runID, l, p, true)
		return nil
	}
	if err := r.end(run, nil, runlog.ResultFailed, g); err != nil {
		fmt.Fprintln(req.Stderr, "syslet: warning:", err)
	}
	return r.afterFailedGate(ctx, runID, nil, g, nil)
}
