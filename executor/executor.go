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
	Start(ctx context.Context, name string) error
	Stop(ctx context.Context, name string) error
	Reload(ctx context.Context, name string) error
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
	StartTimeout time.Duration
	// PullTimeout, StopTimeout and ReloadTimeout bound one image pull, one
	// stop job and the daemon-reload, so a stalled registry or a unit that
	// never stops cannot hold the apply lock for ever. Zero: the defaults.
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

// ErrRefused is returned, before anything changes, for a plan that has
// refusals.
var ErrRefused = errors.New("plan has refusals; nothing applied")

// ErrFailed is wrapped by the error Apply returns when any action failed.
var ErrFailed = errors.New("apply failed")

// ErrInterrupted is wrapped by the error Apply returns when Options.Stop or
// the context ended the run early.
var ErrInterrupted = errors.New("apply interrupted")

// ErrJournal is wrapped when the run journal cannot be written: the run
// stops, because an unrecorded change could not be resumed exactly.
var ErrJournal = errors.New("run journal")

// continueOnError lists the steps whose actions are independent of each
// other: a failed reload or start does not stop the others.
var continueOnError = map[plan.Step]bool{plan.StepReload: true, plan.StepStart: true}

// Apply runs the plan's actions step by step.
func Apply(ctx context.Context, p *plan.Plan, h Host, opts Options) (*Result, error) {
	start := time.Now()
	res := &Result{}
	if !p.Appliable() {
		return res, ErrRefused
	}
	if err := h.check(p); err != nil {
		res.NotReached = p.Actions
		return res, err
	}
	opts.defaults()
	e := &run{h: h, opts: opts, log: opts.Log}
	var stopErr error
	step := plan.Step(0)
	for _, i := range order(p) {
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
		ev := e.log.With().Int("step", int(a.Step)).Str("op", string(a.Op)).Str("target", a.Target).Logger()
		t0 := time.Now()
		err := e.do(ctx, a)
		took := time.Since(t0)
		if opts.Recorder != nil {
			if jerr := opts.Recorder.ActionLanded(i, a, err, took); jerr != nil && stopErr == nil {
				stopErr = fmt.Errorf("%w: %w", ErrJournal, jerr)
			}
		}
		if err == nil {
			res.Applied = append(res.Applied, a)
			ev.Info().Str("took", took.Round(time.Millisecond).String()).Msg("applied")
			continue
		}
		f := Failure{Action: a, Error: err.Error()}
		if a.Op == plan.OpStart || a.Op == plan.OpReload {
			f.Log, _ = h.Systemd.LastLog(context.WithoutCancel(ctx), a.Target, opts.LogLines)
		}
		res.Failed = append(res.Failed, f)
		ev.Error().Err(err).Str("took", took.Round(time.Millisecond).String()).Msg("failed")
		if !continueOnError[a.Step] && stopErr == nil {
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
	// opened caches decrypted secret specs for the run; values never leave
	// this map except into podman.
	opened map[*render.Secret]map[string][]byte
}

func (e *run) do(ctx context.Context, a plan.Action) error {
	h := e.h
	switch a.Op {
	case plan.OpPull:
		return deadline(ctx, e.opts.PullTimeout, "pulling "+a.Target, func(ctx context.Context) error {
			return h.Podman.PullImage(ctx, a.Target, e.opts.Progress)
		})
	case plan.OpStop:
		// A unit systemd has not loaded is not running: the stop's goal
		// already holds.
		err := deadline(ctx, e.opts.StopTimeout, "stopping "+a.Target, func(ctx context.Context) error {
			return h.Systemd.Stop(ctx, a.Target)
		})
		if err != nil && !errors.Is(err, host.ErrNotFound) {
			return err
		}
		return nil
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
	case plan.OpReload:
		return e.bounded(ctx, a, h.Systemd.Reload)
	case plan.OpStart:
		return e.bounded(ctx, a, h.Systemd.Start)
	}
	return fmt.Errorf("unknown action %q", a.Op)
}

// bounded runs a start or reload job under the start timeout and says so
// plainly when the unit did not come up in time (for a Notify=healthy
// container: its health check never passed).
func (e *run) bounded(ctx context.Context, a plan.Action, job func(context.Context, string) error) error {
	cctx, cancel := context.WithTimeout(ctx, e.opts.StartTimeout)
	defer cancel()
	err := job(cctx, a.Target)
	if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s did not become active within %s (the job is still queued in systemd; see the log below): %w", a.Target, e.opts.StartTimeout, err)
	}
	return err
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
