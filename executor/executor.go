package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// Files writes and removes files under the managed trees.
type Files interface {
	WriteFile(path string, data []byte, mode uint32) error
	WriteDir(path string, files []host.DirFile) error
	Remove(path, stop string) error
}

// Systemd runs unit jobs and waits for their results.
type Systemd interface {
	DaemonReload(ctx context.Context) error
	// Jobs queues one job of kind op for every named unit at once, so
	// systemd runs them side by side in the order the units' After= and
	// Requires= give, and calls landed once per unit as its job ends (nil,
	// or why the unit did not reach the job's goal), from Jobs' own
	// goroutine. ctx bounds every unit's wait; Jobs returns when all have
	// landed. A stop of a unit systemd has not loaded lands with an error
	// wrapping host.ErrNotFound.
	Jobs(ctx context.Context, op host.JobOp, names []string, landed func(i int, err error))
	LastLog(ctx context.Context, name string, n int) ([]string, error)
}

// Podman changes podman's image, volume, network and secret stores.
type Podman interface {
	PullImage(ctx context.Context, ref string, progress io.Writer) error
	RemoveImage(ctx context.Context, ref string) error
	RemoveVolume(ctx context.Context, name string) error
	RemoveNetwork(ctx context.Context, name string) error
	CreateSecret(ctx context.Context, name string, data []byte, labels map[string]string) error
	RemoveSecret(ctx context.Context, name string) error
}

// Decrypter opens a secret spec's ciphertext into its key/value pairs.
type Decrypter interface {
	Decrypt(s *render.Secret) (map[string][]byte, error)
}

// Host is what the executor changes.
type Host struct {
	Files   Files
	Systemd Systemd
	Podman  Podman
	Secrets Decrypter
}

// Options tune an apply.
type Options struct {
	Log zerolog.Logger
	// Progress receives image pull progress (nil: quiet).
	Progress io.Writer
	// StartTimeout bounds each start and reload job, including the wait
	// until the unit is active (healthy, for Notify=healthy containers).
	// The jobs of one step are queued together, so it counts from then.
	StartTimeout time.Duration
	// PullTimeout, StopTimeout and ReloadTimeout bound one image pull, the
	// stop jobs (queued together, like starts) and the daemon-reload, so a
	// stalled registry or a unit that never stops cannot hold the apply
	// lock for ever. Zero: the defaults.
	PullTimeout, StopTimeout, ReloadTimeout time.Duration
	// LogLines is how many journal lines to attach to a unit that failed.
	LogLines int
	// Stop asks the run to end gracefully: the action in progress finishes,
	// nothing after it runs, and the rest is reported as not reached.
	// Cancelling ctx instead aborts the action in progress too.
	Stop <-chan struct{}
	// Recorder, when set, is told as each step begins and as each action
	// lands, before the next one starts: the run journal.
	Recorder Recorder
	// AfterStep, when set, runs after each step that had actions (a test
	// hook: the integration tests pause or kill syslet there).
	AfterStep func(plan.Step)
}

// Recorder receives the progress of an apply as it happens. Index is the
// action's position in the plan's Actions.
type Recorder interface {
	StepBegins(s plan.Step) error
	ActionLanded(index int, a plan.Action, err error, took time.Duration) error
}

// Landed is one action's outcome, for a BatchRecorder.
type Landed struct {
	Index  int
	Action plan.Action
	Err    error
	Took   time.Duration
}

// BatchRecorder is a Recorder that can also journal several landed actions
// at once. The file writes of a step run side by side, and a BatchRecorder
// hears them in one call when they have all landed (one fsync of the
// journal instead of one per file); a plain Recorder hears each as it
// lands.
type BatchRecorder interface {
	Recorder
	ActionsLanded(ls []Landed) error
}

// writeWorkers is how many file writes run at once: each waits for its
// fsyncs, which the disk serves together.
const writeWorkers = 8

// Default deadlines of host operations.
const (
	DefaultStartTimeout  = 2 * time.Minute
	DefaultPullTimeout   = 10 * time.Minute
	DefaultStopTimeout   = 2 * time.Minute
	DefaultReloadTimeout = 2 * time.Minute
)

// Failure is one action that failed, with the unit's last journal lines
// when it was a start or reload.
type Failure struct {
	Action plan.Action `json:"action"`
	Error  string      `json:"error"`
	Log    []string    `json:"log,omitempty"`
}

// Result says what an apply did.
type Result struct {
	Applied    []plan.Action `json:"applied"`
	Failed     []Failure     `json:"failed"`
	NotReached []plan.Action `json:"notReached"`
	Duration   time.Duration `json:"duration"`
	// Interrupted is set when a signal ended the run before its end.
	Interrupted bool `json:"interrupted,omitempty"`
}

// ErrFailed is wrapped by the error Apply returns when any action failed.
var ErrFailed = errors.New("apply failed")

// ErrInterrupted is wrapped by the error Apply returns when Options.Stop or
// the context ended the run early.
var ErrInterrupted = errors.New("apply interrupted")

// ErrJournal is wrapped when the run journal cannot be written: the run
// stops, because an unrecorded change could not be resumed exactly.
var ErrJournal = errors.New("run journal")

// Apply runs the plan's actions step by step.
func Apply(ctx context.Context, p *plan.Plan, h Host, opts Options) (*Result, error) {
	start := time.Now()
	res := &Result{}
	if !p.Appliable() {
		return res, fmt.Errorf("%w; nothing applied", plan.ErrRefused)
	}
	if err := h.check(p); err != nil {
		res.NotReached = p.Actions
		return res, err
	}
	opts.defaults()
	e := &run{h: h, opts: opts, log: opts.Log, res: res}
	var stopErr error
	step := plan.Step(0)
	idx := order(p)
	for n := 0; n < len(idx); n++ {
		i := idx[n]
		a := p.Actions[i]
		if stopErr == nil {
			stopErr = e.interrupted(ctx)
		}
		if stopErr == nil && a.Step != step {
			if step != 0 && opts.AfterStep != nil {
				opts.AfterStep(step)
				stopErr = e.interrupted(ctx)
			}
			step = a.Step
			if stopErr == nil && opts.Recorder != nil {
				if err := opts.Recorder.StepBegins(step); err != nil {
					stopErr = fmt.Errorf("%w: %w", ErrJournal, err)
				}
			}
		}
		if stopErr != nil {
			res.NotReached = append(res.NotReached, a)
			continue
		}
		if fileWrites[a.Op] {
			end := n + 1
			for end < len(idx) && fileWrites[p.Actions[idx[end]].Op] && p.Actions[idx[end]].Step == a.Step {
				end++
			}
			sent, err := e.writes(ctx, p, idx[n:end])
			if err != nil && stopErr == nil {
				stopErr = err
			}
			for _, j := range idx[n+sent : end] {
				res.NotReached = append(res.NotReached, p.Actions[j])
			}
			n = end - 1
			continue
		}
		if op, ok := jobOps[a.Op]; ok {
			// Every stop, reload or start of this step goes to systemd at
			// once and lands as it ends.
			end := n + 1
			for end < len(idx) && p.Actions[idx[end]].Op == a.Op {
				end++
			}
			if err := e.jobs(ctx, p, idx[n:end], op); err != nil && stopErr == nil {
				stopErr = err
			}
			n = end - 1
			continue
		}
		t0 := time.Now()
		err := e.do(ctx, a)
		if err := e.landed(i, a, err, time.Since(t0)); err != nil && stopErr == nil {
			stopErr = err
		}
		if err == nil {
			res.Applied = append(res.Applied, a)
			continue
		}
		// Only reloads and starts (batched above) act on independent
		// units; any other failure ends the run.
		res.Failed = append(res.Failed, Failure{Action: a, Error: err.Error()})
		if stopErr == nil {
			stopErr = err
		}
	}
	if stopErr == nil && step != 0 && opts.AfterStep != nil {
		opts.AfterStep(step)
	}
	res.Duration = time.Since(start)
	if errors.Is(stopErr, ErrInterrupted) {
		res.Interrupted = true
		return res, stopErr
	}
	if len(res.Failed) > 0 || stopErr != nil {
		if stopErr == nil {
			stopErr = fmt.Errorf("%d unit(s) failed", len(res.Failed))
		}
		return res, fmt.Errorf("%w: %w", ErrFailed, stopErr)
	}
	return res, nil
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

type run struct {
	h    Host
	opts Options
	log  zerolog.Logger
	res  *Result
	// opened caches decrypted secret specs for the run; values never leave
	// this map except into podman.
	opened map[*render.Secret]map[string][]byte
}

// jobOps are the actions the executor hands to systemd as one batch per
// step.
var jobOps = map[plan.Op]host.JobOp{plan.OpStop: host.JobStop, plan.OpReload: host.JobReload, plan.OpStart: host.JobStart}

// fileWrites are the actions that only write under the managed trees, each
// to its own path: independent of each other, so they run side by side.
var fileWrites = map[plan.Op]bool{plan.OpWriteFile: true, plan.OpWriteUnit: true, plan.OpWriteDir: true}

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
			err := e.do(ctx, p.Actions[i])
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
// returns what stops the run: a journal failure, or a failed stop (the
// steps after it need the units down).
func (e *run) jobs(ctx context.Context, p *plan.Plan, indexes []int, op host.JobOp) error {
	timeout := e.opts.StartTimeout
	if op == host.JobStop {
		timeout = e.opts.StopTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	names := make([]string, len(indexes))
	for k, i := range indexes {
		names[k] = p.Actions[i].Target
	}
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
	for k, i := range indexes {
		a := p.Actions[i]
		if errs[k] == nil {
			e.res.Applied = append(e.res.Applied, a)
			continue
		}
		f := Failure{Action: a, Error: errs[k].Error()}
		if op != host.JobStop {
			f.Log, _ = e.h.Systemd.LastLog(context.WithoutCancel(ctx), a.Target, e.opts.LogLines)
		} else if stopErr == nil {
			stopErr = errs[k]
		}
		e.res.Failed = append(e.res.Failed, f)
	}
	return stopErr
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

func (e *run) do(ctx context.Context, a plan.Action) error {
	h := e.h
	switch a.Op {
	case plan.OpPull:
		return deadline(ctx, e.opts.PullTimeout, "pulling "+a.Target, func(ctx context.Context) error {
			return h.Podman.PullImage(ctx, a.Target, e.opts.Progress)
		})
	case plan.OpWriteFile, plan.OpWriteUnit:
		return h.Files.WriteFile(a.Target, a.Content, a.Mode)
	case plan.OpWriteDir:
		return h.Files.WriteDir(a.Target, a.Files)
	case plan.OpCreateSecret:
		vals, err := e.open(a.Secret)
		if err != nil {
			return err
		}
		v, ok := vals[a.Key]
		if !ok {
			return fmt.Errorf("secret %s has no key %q after decryption", a.Secret.Name, a.Key)
		}
		return h.Podman.CreateSecret(ctx, a.Target, v, a.Labels)
	case plan.OpRemoveUnit:
		return h.Files.Remove(a.Target, "")
	case plan.OpRemoveFile:
		return h.Files.Remove(a.Target, a.Root)
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
