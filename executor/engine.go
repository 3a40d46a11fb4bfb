package executor

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// run is one Apply in progress: the host, the options with their defaults
// filled in, and the Result it builds as actions land.
type run struct {
	h    Host
	opts Options
	log  zerolog.Logger
	res  *Result
	// opened caches decrypted secret specs for the run; values never leave
	// this map except into podman.
	opened map[*render.Secret]map[string][]byte

	// prepared holds each file write's preparation by action index (nil
	// until the preparing ran); swapped lists the indexes whose Swap was
	// called, in order; settled is set once steps 2 to 4 are behind the
	// run.
	prepared map[int]Prepared
	mu       sync.Mutex // guards swapped: the writes of a step run side by side
	swapped  []int
	settled  bool
	// reported marks actions already reported (failed while preparing),
	// so they are not also listed as not reached.
	reported map[int]bool
}

// order lists the indexes of the plan's actions in execution order: by
// step, and in plan order inside a step. The plan already comes sorted; the
// executor does not rely on a caller having done so.
func order(p *plan.Plan) []int {
	idx := make([]int, len(p.Actions))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return int(p.Actions[a].Step) - int(p.Actions[b].Step) })
	return idx
}

// interrupted reports a graceful stop request or a cancelled context.
func (e *run) interrupted(ctx context.Context) error {
	select {
	case <-e.opts.Stop:
		return fmt.Errorf("%w: stop requested", ErrInterrupted)
	default:
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrInterrupted, err)
	}
	return nil
}

func (o *Options) defaults() {
	if o.LogLines == 0 {
		o.LogLines = 15
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.PullTimeout == 0 {
		o.PullTimeout = DefaultPullTimeout
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	if o.ReloadTimeout == 0 {
		o.ReloadTimeout = DefaultReloadTimeout
	}
}

// check refuses, before any change, a plan the host cannot carry out.
func (h Host) check(p *plan.Plan) error {
	for _, a := range p.Actions {
		switch a.Op {
		case plan.OpCreateSecret:
			if h.Secrets == nil {
				return fmt.Errorf("the plan creates podman secret %q, but no decryption identity is configured; nothing applied", a.Target)
			}
		}
	}
	return nil
}

// jobOps are the actions the executor hands to systemd as one batch per
// step.
var jobOps = map[plan.Op]host.JobOp{plan.OpStop: host.JobStop, plan.OpReload: host.JobReload, plan.OpStart: host.JobStart}

// fileWrites are the actions that only write under the managed trees, each
// to its own path: independent of each other, so they run side by side.
var fileWrites = map[plan.Op]bool{plan.OpWriteFile: true, plan.OpWriteUnit: true, plan.OpLinkUnit: true, plan.OpWriteDir: true}

// writeWorkers is how many file writes run at once: each waits for its
// fsyncs, which the disk serves together.
const writeWorkers = 8

// writes runs consecutive file writes (indexes into the plan) with up to
// writeWorkers at once. The first failure, or a stop request, stops new
// writes; those in flight finish. Every write that ran is journalled —
// all at once through a BatchRecorder, else each as it lands — and listed
// in the result in plan order. It returns how many writes were started
// (the rest were not reached) and what stops the run.
func (e *run) writes(ctx context.Context, p *plan.Plan, indexes []int) (int, error) {
	type out struct {
		k    int
		err  error
		took time.Duration
	}
	results := make(chan out, len(indexes))
	sem := make(chan struct{}, writeWorkers)
	batch, _ := e.opts.Recorder.(BatchRecorder)
	var landed []Landed
	var stopErr error
	received := 0
	receive := func(o out) {
		received++
		i := indexes[o.k]
		l := Landed{Index: i, Action: p.Actions[i], Err: o.err, Took: o.took}
		landed = append(landed, l)
		if batch == nil {
			if jerr := e.landed(i, l.Action, o.err, o.took); jerr != nil && stopErr == nil {
				stopErr = jerr
			}
		} else {
			e.logLanded(l.Action, o.err, o.took)
		}
		if o.err != nil && stopErr == nil {
			stopErr = o.err
		}
	}
	sent := 0
	for k, i := range indexes {
		if stopErr == nil && k > 0 {
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
			err := e.do(ctx, i, p.Actions[i])
			results <- out{k, err, time.Since(t0)}
		}()
		for more := true; more; {
			select {
			case o := <-results:
				receive(o)
			default:
				more = false
			}
		}
	}
	for received < sent {
		receive(<-results)
	}
	if batch != nil {
		if err := batch.ActionsLanded(landed); err != nil {
			if stopErr == nil {
				stopErr = fmt.Errorf("%w: %w", ErrJournal, err)
			}
		}
	}
	slices.SortFunc(landed, func(a, b Landed) int { return a.Index - b.Index })
	for _, l := range landed {
		if l.Err == nil {
			e.res.Applied = append(e.res.Applied, l.Action)
		} else {
			e.res.Failed = append(e.res.Failed, Failure{Action: l.Action, Error: l.Err.Error()})
		}
	}
	return sent, stopErr
}

// landed journals and logs one action as it ends. It returns the journal's
// error, which stops the run.
func (e *run) landed(i int, a plan.Action, err error, took time.Duration) error {
	var jerr error
	if e.opts.Recorder != nil {
		if rerr := e.opts.Recorder.ActionLanded(i, a, err, took); rerr != nil {
			jerr = fmt.Errorf("%w: %w", ErrJournal, rerr)
		}
	}
	e.logLanded(a, err, took)
	return jerr
}

func (e *run) logLanded(a plan.Action, err error, took time.Duration) {
	ev := e.log.With().Int("step", int(a.Step)).Str("op", string(a.Op)).Str("target", a.Target).Str("took", took.Round(time.Millisecond).String()).Logger()
	if err == nil {
		ev.Info().Msg("applied")
	} else {
		ev.Error().Err(err).Msg("failed")
	}
}

// jobs runs the stop, reload or start actions at indexes (all of one op)
// as one batch: queued together, each journalled as its job lands, under
// one deadline counted from the queueing. The result lists them in plan
// order; failed starts and reloads carry the unit's last log lines. It
// returns each failed action's error by its index, and what stops the
// run: a journal failure, or a failed stop (the steps after it need the
// units down).
func (e *run) jobs(ctx context.Context, p *plan.Plan, indexes []int, op host.JobOp) (map[int]error, error) {
	timeout := e.opts.StartTimeout
	if op == host.JobStop {
		timeout = e.opts.StopTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	names := targets(p, indexes)
	errs := make([]error, len(indexes))
	var stopErr error
	t0 := time.Now()
	e.h.Systemd.Jobs(cctx, op, names, func(k int, err error) {
		a := p.Actions[indexes[k]]
		err = e.jobError(ctx, cctx, op, a, timeout, err)
		errs[k] = err
		if jerr := e.landed(indexes[k], a, err, time.Since(t0)); jerr != nil && stopErr == nil {
			stopErr = jerr
		}
	})
	failed := map[int]error{}
	for k, i := range indexes {
		a := p.Actions[i]
		if errs[k] == nil {
			e.res.Applied = append(e.res.Applied, a)
			continue
		}
		failed[i] = errs[k]
		f := Failure{Action: a, Error: errs[k].Error()}
		if op != host.JobStop {
			f.Log, _ = e.h.Systemd.LastLog(context.WithoutCancel(ctx), a.Target, e.opts.LogLines)
		} else if stopErr == nil {
			stopErr = errs[k]
		}
		e.res.Failed = append(e.res.Failed, f)
	}
	return failed, stopErr
}

// buildRetry picks, of a start batch's failures (by action index), what
// is tried once more: each image build that failed, with the starts that
// failed only because they require it (their job's result "dependency").
// Nothing when no build failed.
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
func buildRetry(p *plan.Plan, failed map[int]error) []int {
	var builds, dependents []int
	for i, err := range failed {
		a := p.Actions[i]
		var je *host.JobError
		switch {
		case !errors.As(err, &je):
			// A deadline or a lost bus: another try would only wait as long.
		case path.Ext(a.Unit) == ".build" && je.Result == "failed":
			builds = append(builds, i)
		case je.Result == "dependency":
			dependents = append(dependents, i)
		}
	}
	if len(builds) == 0 {
		return nil
	}
	again := append(builds, dependents...)
	slices.Sort(again)
	return again
}

// retryBuilds starts again the builds (and their dependents) of a batch
// that failed, as one batch of their own: systemd runs each build before
// what requires it. What lands replaces the first try in the result; the
// journal holds both tries, the last one counting.
func (e *run) retryBuilds(ctx context.Context, p *plan.Plan, again []int) error {
	retried := map[string]bool{}
	for _, i := range again {
		retried[p.Actions[i].Target] = true
	}
	e.log.Warn().Strs("units", targets(p, again)).Msg("an image build failed; trying it once more, alone (a build beside other podman commands can lose its working container)")
	e.res.Failed = slices.DeleteFunc(e.res.Failed, func(f Failure) bool { return f.Action.Op == plan.OpStart && retried[f.Action.Target] })
	_, err := e.jobs(ctx, p, again, host.JobStart)
	return err
}

func targets(p *plan.Plan, indexes []int) []string {
	out := make([]string, len(indexes))
	for k, i := range indexes {
		out[k] = p.Actions[i].Target
	}
	return out
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

// do carries out action i of the plan, a.
func (e *run) do(ctx context.Context, i int, a plan.Action) error {
	h, d := e.h, a.Data()
	switch a.Op {
	case plan.OpPull:
		return deadline(ctx, e.opts.PullTimeout, "pulling "+a.Target, func(ctx context.Context) error {
			if d.Pull != nil {
				return h.Podman.PullImageWith(ctx, a.Target, *d.Pull, e.opts.Progress)
			}
			return h.Podman.PullImage(ctx, a.Target, e.opts.Progress)
		})
	case plan.OpWriteFile, plan.OpWriteUnit, plan.OpWriteDir, plan.OpLinkUnit:
		return e.swap(i, a)
	case plan.OpCreateSecret:
		vals, err := e.open(d.Secret)
		if err != nil {
			return err
		}
		v, ok := vals[d.Key]
		if !ok {
			return fmt.Errorf("secret %s has no key %q after decryption", d.Secret.Name, d.Key)
		}
		return h.Podman.CreateSecret(ctx, a.Target, v, d.Labels)
	case plan.OpRemoveUnit:
		return h.Files.Remove(a.Target, d.Root) // a drop-in's directory goes when it is left empty
	case plan.OpRemoveFile:
		return h.Files.Remove(a.Target, d.Root)
	case plan.OpRemoveSecret:
		return h.Podman.RemoveSecret(ctx, a.Target)
	case plan.OpDeleteVolume:
		return h.Podman.RemoveVolume(ctx, a.Target)
	case plan.OpDeleteNetwork:
		return h.Podman.RemoveNetwork(ctx, a.Target)
	case plan.OpDeleteImage:
		return h.Podman.RemoveImage(ctx, a.Target)
	case plan.OpDaemonReload:
		return deadline(ctx, e.opts.ReloadTimeout, "daemon-reload", h.Systemd.DaemonReload)
	}
	return fmt.Errorf("unknown action %q", a.Op)
}

// deadline runs op under a timeout and names the operation when the
// timeout, not the caller, ended it.
func deadline(ctx context.Context, d time.Duration, what string, op func(context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := op(cctx)
	if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s did not finish within %s: %w", what, d, err)
	}
	return err
}

func (e *run) open(s *render.Secret) (map[string][]byte, error) {
	if v, ok := e.opened[s]; ok {
		return v, nil
	}
	v, err := e.h.Secrets.Decrypt(s)
	if err != nil {
		return nil, fmt.Errorf("decrypting secret %s: %w", s.Name, err)
	}
	if e.opened == nil {
		e.opened = map[*render.Secret]map[string][]byte{}
	}
	e.opened[s] = v
	return v, nil
}
