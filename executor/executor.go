package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	// LogLines is how many journal lines to attach to a unit that failed.
	LogLines int
}

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
}

// ErrRefused is returned, before anything changes, for a plan that has
// refusals.
var ErrRefused = errors.New("plan has refusals; nothing applied")

// ErrFailed is wrapped by the error Apply returns when any action failed.
var ErrFailed = errors.New("apply failed")

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
	if opts.LogLines == 0 {
		opts.LogLines = 15
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 2 * time.Minute
	}
	// Group by step in the fixed order; the plan already sorted them, but
	// the executor does not rely on a caller having done so.
	var ordered []plan.Action
	for _, s := range plan.Steps {
		for _, a := range p.Actions {
			if a.Step == s {
				ordered = append(ordered, a)
			}
		}
	}
	e := &run{h: h, opts: opts, log: opts.Log}
	var stopErr error
	for i, a := range ordered {
		if stopErr != nil {
			res.NotReached = append(res.NotReached, a)
			continue
		}
		if err := ctx.Err(); err != nil {
			stopErr = fmt.Errorf("interrupted: %w", err)
			res.NotReached = append(res.NotReached, ordered[i:]...)
			break
		}
		ev := e.log.With().Int("step", int(a.Step)).Str("op", string(a.Op)).Str("target", a.Target).Logger()
		t0 := time.Now()
		err := e.do(ctx, a)
		if err == nil {
			res.Applied = append(res.Applied, a)
			ev.Info().Str("took", time.Since(t0).Round(time.Millisecond).String()).Msg("applied")
			continue
		}
		f := Failure{Action: a, Error: err.Error()}
		if a.Op == plan.OpStart || a.Op == plan.OpReload {
			f.Log, _ = h.Systemd.LastLog(context.WithoutCancel(ctx), a.Target, opts.LogLines)
		}
		res.Failed = append(res.Failed, f)
		ev.Error().Err(err).Str("took", time.Since(t0).Round(time.Millisecond).String()).Msg("failed")
		if !continueOnError[a.Step] {
			stopErr = err
		}
	}
	res.Duration = time.Since(start)
	if len(res.Failed) > 0 || stopErr != nil {
		if stopErr == nil {
			stopErr = fmt.Errorf("%d unit(s) failed", len(res.Failed))
		}
		return res, fmt.Errorf("%w: %w", ErrFailed, stopErr)
	}
	return res, nil
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
		return h.Podman.PullImage(ctx, a.Target, e.opts.Progress)
	case plan.OpStop:
		// A unit systemd has not loaded is not running: the stop's goal
		// already holds.
		if err := h.Systemd.Stop(ctx, a.Target); err != nil && !errors.Is(err, host.ErrNotFound) {
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
		return h.Systemd.DaemonReload(ctx)
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
