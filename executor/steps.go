package executor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/plan"
)

// steps is the nine steps in their order, a row each but for step 9,
// each row with the ops it takes (nil: every op of its step no row before
// took), how its actions run (indexes into the plan, in plan order) and
// what a failure in it leaves behind. How a row runs returns what ends the
// run; a failure that leaves the other actions of its row to run (a
// reload, a start) is only in the Result.
var steps = [...]struct {
	step   plan.Step
	takes  func(plan.Op) bool
	window window
	run    func(e *run, ctx context.Context, idx []int) error
}{
	{plan.StepPull, nil, untouched, (*run).oneByOne},
	{plan.StepStop, nil, undoable, jobBatch(host.JobStop)},
	{plan.StepWriteConfig, nil, undoable, (*run).swapBatch}, // and the secrets, one by one before it
	{plan.StepWriteUnits, nil, undoable, (*run).swapBatch},
	{plan.StepPrune, nil, final, (*run).oneByOne},
	{plan.StepDelete, nil, final, (*run).oneByOne},
	{plan.StepDaemonReload, nil, final, (*run).oneByOne}, // the plan holds one
	{plan.StepReload, nil, final, jobBatch(host.JobReload)},
	// Volumes filled from their backups (created again, then imported
	// into) before anything that mounts them starts.
	{plan.StepStart, plan.Op.Fills, final, (*run).oneByOne},
	{plan.StepStart, nil, final, (*run).starts},
}

// window is what a failure in a step leaves behind.
type window int

const (
	// untouched: nothing on the host changed yet (step 1 only adds images).
	untouched window = iota
	// undoable: a failure puts back the files swapped in and starts again
	// what was stopped (prepare.go); every file write is prepared before
	// the first such step.
	undoable
	// final: the writes are settled (what they replaced let go), and a
	// failure leaves the host as it is for the next run to resume.
	final
)

// walk runs the plan's steps in order, each as its rows of steps say, and
// returns what ended the run early (nil: it ran to its end).
func (e *run) walk(ctx context.Context, byStep [][]int) error {
	var last plan.Step
	for k, s := range steps {
		idx := byStep[k]
		if len(idx) == 0 {
			continue
		}
		// The rows of one step are one step to the journal and the hook.
		enter := e.interrupted(ctx)
		if s.step != last {
			enter = e.enter(ctx, s.step, s.window, last)
		}
		if enter != nil {
			return enter
		}
		if err := s.run(e, ctx, idx); err != nil {
			return err
		}
		last = s.step
	}
	if last != 0 && e.opts.AfterStep != nil {
		e.opts.AfterStep(last)
	}
	return nil
}

// enter is what comes before a step's actions: a stop request ends the
// run here, the test hook hears the step before, every file write is
// prepared before the first step that changes the host, the writes are
// settled once the steps that could put the host back are behind, and
// the journal records that the step begins.
func (e *run) enter(ctx context.Context, s plan.Step, w window, last plan.Step) error {
	if err := e.interrupted(ctx); err != nil {
		return err
	}
	if last != 0 && e.opts.AfterStep != nil {
		e.opts.AfterStep(last)
		if err := e.interrupted(ctx); err != nil {
			return err
		}
	}
	if w >= undoable && e.prepared == nil {
		if err := e.prepare(); err != nil {
			return err
		}
	}
	if w == final {
		e.settle()
	}
	if e.opts.Recorder != nil {
		if err := e.opts.Recorder.StepBegins(s); err != nil {
			return fmt.Errorf("%w: %w", ErrJournal, err)
		}
	}
	return nil
}

// byStep lists the indexes of the plan's actions per row of steps, in
// plan order: each in the first row of its step that takes its op. The
// plan comes sorted; the executor does not rely on it.
func byStep(p *plan.Plan) [][]int {
	out := make([][]int, len(steps))
	for i, a := range p.Actions {
		for k := range steps {
			if steps[k].step == a.Step && (steps[k].takes == nil || steps[k].takes(a.Op)) {
				out[k] = append(out[k], i)
				break
			}
		}
	}
	return out
}

// oneByOne runs each action after the one before has landed; any failure
// ends the run.
func (e *run) oneByOne(ctx context.Context, idx []int) error {
	for _, i := range idx {
		if err := e.interrupted(ctx); err != nil {
			return err
		}
		t0 := time.Now()
		b, err := e.do(ctx, i)
		jerr := e.land(Landed{Index: i, Action: e.p.Actions[i], Err: err, Took: time.Since(t0), Backup: b})
		switch {
		case b == nil:
		case e.p.Actions[i].Op == plan.OpImportVolume:
			e.res.Restored = append(e.res.Restored, *b)
		default:
			e.res.Backups = append(e.res.Backups, *b)
		}
		e.result(i, err, nil)
		if jerr != nil {
			return jerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// swapBatch runs a write step: its other actions (podman secrets) one by
// one, then its file writes, prepared before the run stopped anything,
// swapped in side by side.
func (e *run) swapBatch(ctx context.Context, idx []int) error {
	var writes, others []int
	for _, i := range idx {
		if fileWrites[e.p.Actions[i].Op] {
			writes = append(writes, i)
		} else {
			others = append(others, i)
		}
	}
	if err := e.oneByOne(ctx, others); err != nil {
		return err
	}
	return e.swaps(ctx, writes)
}

// writeWorkers is how many file writes run at once: each waits for its
// fsyncs, which the disk serves together.
const writeWorkers = 8

// swaps swaps in the prepared file writes at idx, up to writeWorkers at
// once. The first failure, or a stop request, stops new swaps; those in
// flight finish. Every swap that ran lands once all have (one journal
// record), and is listed in the result in plan order; the rest were not
// reached.
func (e *run) swaps(ctx context.Context, idx []int) error {
	results := make(chan Landed, len(idx))
	sem := make(chan struct{}, writeWorkers)
	var landed []Landed
	var stopErr error
	receive := func(l Landed) {
		landed = append(landed, l)
		if l.Err != nil && stopErr == nil {
			stopErr = l.Err
		}
	}
	sent := 0
	for _, i := range idx {
		if stopErr == nil {
			stopErr = e.interrupted(ctx)
		}
		if stopErr != nil {
			break
		}
		sem <- struct{}{}
		sent++
		go func() {
			defer func() { <-sem }()
			t0 := time.Now()
			err := e.swap(i)
			results <- Landed{Index: i, Action: e.p.Actions[i], Err: err, Took: time.Since(t0)}
		}()
		for more := true; more; {
			select {
			case l := <-results:
				receive(l)
			default:
				more = false
			}
		}
	}
	for len(landed) < sent {
		receive(<-results)
	}
	if err := e.land(landed...); err != nil && stopErr == nil {
		stopErr = err
	}
	slices.SortFunc(landed, byIndex)
	for _, l := range landed {
		e.result(l.Index, l.Err, nil)
	}
	return stopErr
}

// jobBatch runs a step of unit jobs of kind op as one batch (jobs).
func jobBatch(op host.JobOp) func(e *run, ctx context.Context, idx []int) error {
	return func(e *run, ctx context.Context, idx []int) error {
		_, err := e.jobs(ctx, idx, op)
		return err
	}
}

// starts runs the start step: its starts as one batch, then the restarts
// of socket-held containers as another (what the starts bring up, a
// network, a build, is up before the containers restarted over it), then
// once more, alone, the image builds that failed in them (buildRetry),
// and last the switches of start-first containers to the slots just
// started (switches).
func (e *run) starts(ctx context.Context, idx []int) error {
	var starts, restarts, switches []int
	for _, i := range idx {
		switch op := e.p.Actions[i].Op; {
		case op == plan.OpRestart:
			restarts = append(restarts, i)
		case isSwitchOp(op):
			switches = append(switches, i)
		default:
			starts = append(starts, i)
		}
	}
	if err := e.startsAndRestarts(ctx, starts, restarts); err != nil {
		return err
	}
	if len(switches) == 0 {
		return nil
	}
	if err := e.interrupted(ctx); err != nil {
		return err
	}
	startFailed := map[string]error{}
	for _, f := range e.res.Failed {
		if f.Action.Op == plan.OpStart {
			startFailed[f.Action.Target] = errors.New(f.Error)
		}
	}
	return e.switches(ctx, switches, startFailed)
}

// startsAndRestarts runs the starts and the restarts of step 9, and the
// builds that failed in them once more.
func (e *run) startsAndRestarts(ctx context.Context, starts, restarts []int) error {
	failed, err := e.jobs(ctx, starts, host.JobStart)
	if err != nil {
		return err
	}
	if len(restarts) > 0 {
		if err := e.interrupted(ctx); err != nil {
			return err
		}
		again, err := e.jobs(ctx, restarts, host.JobRestart)
		if err != nil {
			return err
		}
		maps.Copy(failed, again)
	}
	again := buildRetry(e.p, failed)
	if len(again) == 0 {
		return nil
	}
	if err := e.interrupted(ctx); err != nil {
		return err
	}
	return e.retryBuilds(ctx, again)
}

// jobs runs the stop, reload, start or restart actions at idx (all of one
// op) as one batch: queued together, each landing as its job ends, under
// one deadline counted from the queueing. The result lists them in plan
// order; failed starts and reloads carry the unit's last log lines. It
// returns each failed action's error by its index, and what stops the run:
// a journal failure, or a failed stop (the steps after it need the units
// down).
func (e *run) jobs(ctx context.Context, idx []int, op host.JobOp) (map[int]error, error) {
	failed := map[int]error{}
	if len(idx) == 0 {
		return failed, nil
	}
	timeout := e.opts.StartTimeout
	switch op {
	case host.JobStop:
		timeout = e.opts.StopTimeout
	case host.JobRestart:
		// The old container gets its stop timeout to finish what it
		// serves, then the new one its start timeout.
		timeout = e.opts.StopTimeout + e.opts.StartTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	errs := make([]error, len(idx))
	var stopErr error
	t0 := time.Now()
	e.h.Systemd.Jobs(cctx, op, e.targets(idx), func(k int, err error) {
		a := e.p.Actions[idx[k]]
		errs[k] = e.jobError(ctx, cctx, op, a, timeout, err)
		if jerr := e.land(Landed{Index: idx[k], Action: a, Err: errs[k], Took: time.Since(t0)}); jerr != nil && stopErr == nil {
			stopErr = jerr
		}
	})
	for k, i := range idx {
		if errs[k] == nil {
			e.result(i, nil, nil)
			continue
		}
		failed[i] = errs[k]
		var log []string
		if op != host.JobStop {
			log, _ = e.h.Systemd.LastLog(context.WithoutCancel(ctx), e.p.Actions[i].Target, e.began, e.opts.LogLines)
		} else if stopErr == nil {
			stopErr = errs[k]
		}
		e.result(i, errs[k], log)
	}
	return failed, stopErr
}

// buildRetry picks, of a start batch's failures (by action index), what
// is tried once more: each image build that failed, with the starts that
// failed only because they require something (their job's result
// "dependency"). Nothing when no build failed, or could have.
//
// Podman's storage is not safe for a build beside other podman commands:
// a volume or network created, or a container started, while the build
// mounts its working container can delete that container and its layer
// under it ("unmounting build container: layer not known", "identifier is
// not a container"; upstream buildah#5674, podman#23671). A first deploy
// starts everything at once and so met it on fresh hosts. Tried again
// alone, once the batch is over, the build has nothing beside it. A
// build that fails for its own reasons fails again, and is reported as
// the second try failed.
//
// A build need not be in the batch to run in it: quadlet's build service
// is a oneshot that does not stay active, so every start of a container
// built by it runs the build again, as the container's dependency (a
// network recreated under three containers restarts them, and the build
// of one runs beside the others' starts). Its failure then shows only as
// the container's "dependency" result, so when the plan holds a build at
// all, those starts are tried once more too; systemd runs the build
// before them again.
func buildRetry(p *plan.Plan, failed map[int]error) []int {
	var builds, dependents []int
	for i, err := range failed {
		a := p.Actions[i]
		var je *host.JobError
		switch {
		case !errors.As(err, &je):
			// A deadline or a lost bus: another try would only wait as long.
		case unit.Builds(a.Unit) && je.Result == "failed":
			builds = append(builds, i)
		case je.Result == "dependency":
			dependents = append(dependents, i)
		}
	}
	if len(builds) == 0 && (len(dependents) == 0 || !holdsBuild(p)) {
		return nil
	}
	again := append(builds, dependents...)
	slices.Sort(again)
	return again
}

// holdsBuild reports whether any of the plan's units is an image build,
// changed or not.
func holdsBuild(p *plan.Plan) bool {
	return slices.ContainsFunc(p.Units, func(u plan.UnitChange) bool { return unit.Builds(u.FileName) })
}

// retryBuilds starts again the builds (and their dependents) of a batch
// that failed, as one batch of their own: systemd runs each build before
// what requires it. What lands replaces the first try in the result; the
// journal holds both tries, the last one counting.
func (e *run) retryBuilds(ctx context.Context, again []int) error {
	retried := map[string]bool{}
	for _, i := range again {
		retried[e.p.Actions[i].Target] = true
	}
	e.log.Warn().Strs("units", e.targets(again)).Msg("an image build, or what a start requires, failed; trying it once more, alone (a build beside other podman commands can lose its working container)")
	e.res.Failed = slices.DeleteFunc(e.res.Failed, func(f Failure) bool {
		return (f.Action.Op == plan.OpStart || f.Action.Op == plan.OpRestart) && retried[f.Action.Target]
	})
	_, err := e.jobs(ctx, again, host.JobStart)
	return err
}

// jobError words a unit's job error: a stop of a unit systemd has not
// loaded reached its goal; a wait the batch deadline (not the caller)
// ended says so plainly (for a Notify=healthy container: its health check
// never passed).
func (e *run) jobError(ctx, cctx context.Context, op host.JobOp, a plan.Action, timeout time.Duration, err error) error {
	if err == nil || op == host.JobStop && errors.Is(err, host.ErrNotFound) {
		return nil
	}
	if ctx.Err() != nil || !errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return err
	}
	if op == host.JobStop {
		return fmt.Errorf("stopping %s did not finish within %s: %w", a.Target, timeout, err)
	}
	return fmt.Errorf("%s did not become active within %s (the job is still queued in systemd; see the log below): %w", a.Target, timeout, err)
}

// startOne starts one service on its own and waits for its job, under the
// start deadline: a volume's, whose start creates the volume before
// anything else of step 9 runs.
func (e *run) startOne(ctx context.Context, service string) error {
	cctx, cancel := context.WithTimeout(ctx, e.opts.StartTimeout)
	defer cancel()
	var err error
	e.h.Systemd.Jobs(cctx, host.JobStart, []string{service}, func(_ int, jerr error) { err = jerr })
	return e.jobError(ctx, cctx, host.JobStart, plan.Action{Target: service}, e.opts.StartTimeout, err)
}
