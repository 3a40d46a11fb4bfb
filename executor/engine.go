package executor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// run is one Apply in progress: the plan, the host, the options with their
// defaults filled in, and the Result it builds as actions land.
type run struct {
	// began is when Apply began: a failed unit's log lines before it are
	// not this run's.
	began time.Time
	p     *plan.Plan
	h     Host
	opts  Options
	log   zerolog.Logger
	res   *Result
	// reached marks, by action index, the actions that landed (applied or
	// failed): the rest are reported as not reached.
	reached []bool
	// landed is, by action index, when each landed and how it went (the
	// last try of one tried twice).
	landed []landing
	// opened caches decrypted secret specs for the run; values never leave
	// this map except into podman.
	opened map[*render.Secret]map[string][]byte

	// prepared holds each file write's preparation by action index (nil
	// until the preparing ran); swapped lists the indexes whose Swap was
	// called, in order; settled is set once steps 2 to 4 are behind the
	// run.
	prepared map[int]Prepared
	mu       sync.Mutex // guards swapped and landed: the writes of a step run side by side
	swapped  []int
	settled  bool
}

// land is the one way a landed action is told: each is logged, and all
// are journalled in one record (one fsync) — one action as it ends, or
// the file writes of a step together. The journal's error stops the run.
func (e *run) land(ls ...Landed) error {
	now := time.Now()
	for _, l := range ls {
		e.mu.Lock()
		e.landed[l.Index] = landing{at: now, took: l.Took, ok: l.Err == nil}
		e.mu.Unlock()
		ev := e.log.With().Int("step", int(l.Action.Step)).Str("op", string(l.Action.Op)).Str("target", l.Action.Target).Str("took", l.Took.Round(time.Millisecond).String()).Logger()
		if l.Err == nil {
			ev.Info().Msg("applied")
		} else {
			ev.Error().Err(l.Err).Msg("failed")
		}
	}
	if e.opts.Recorder == nil || len(ls) == 0 {
		return nil
	}
	if err := e.opts.Recorder.ActionsLanded(ls); err != nil {
		return fmt.Errorf("%w: %w", ErrJournal, err)
	}
	return nil
}

// result adds action i's outcome to the Result: applied, or failed with
// err and the unit's last log lines.
func (e *run) result(i int, err error, log []string) {
	e.reached[i] = true
	a := e.p.Actions[i]
	if err == nil {
		e.res.Applied = append(e.res.Applied, a)
		return
	}
	e.res.Failed = append(e.res.Failed, Failure{Action: a, Error: err.Error(), Log: log})
}

// notReached lists, in execution order, the actions that never landed.
func (e *run) notReached(byStep [][]int) []plan.Action {
	var out []plan.Action
	for _, idx := range byStep {
		for _, i := range idx {
			if !e.reached[i] {
				out = append(out, e.p.Actions[i])
			}
		}
	}
	return out
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

// check refuses, before any change, a plan the host cannot carry out, or
// one with an action outside its step (the step says how it runs).
func (h Host) check(p *plan.Plan) error {
	for _, a := range p.Actions {
		if a.Step == 0 || a.Step != plan.StepOf(a.Op) {
			return fmt.Errorf("the plan puts %s %s in step %d, which is not that action's step; nothing applied", a.Op, a.Target, a.Step)
		}
		if a.Op == plan.OpCreateSecret && h.Secrets == nil {
			return fmt.Errorf("the plan creates podman secret %q, but no decryption identity is configured; nothing applied", a.Target)
		}
	}
	return nil
}

// do carries out action i of the plan, one that is neither a file write
// (swapped, prepare.go) nor a unit job (queued as a batch, steps.go), and
// returns the backup it took of a volume it deleted, or the one it
// imported into a volume (backups.go).
func (e *run) do(ctx context.Context, i int) (*backup.Entry, error) {
	switch a := e.p.Actions[i]; a.Op {
	case plan.OpDeleteVolume:
		return e.deleteVolume(ctx, a)
	case plan.OpImportVolume:
		return e.importVolume(ctx, a)
	}
	return nil, e.change(ctx, i)
}

// change carries out action i when it is not a volume's delete.
func (e *run) change(ctx context.Context, i int) error {
	h, a := e.h, e.p.Actions[i]
	d := a.Data()
	switch a.Op {
	case plan.OpPull:
		return deadline(ctx, e.opts.PullTimeout, "pulling "+a.Target, func(ctx context.Context) error {
			progress := pullProgress(e.opts.Progress, a.Target)
			defer progress.Close()
			if d.Pull != nil {
				return h.Podman.PullImageWith(ctx, a.Target, *d.Pull, progress.writer())
			}
			return h.Podman.PullImage(ctx, a.Target, progress.writer())
		})
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
	case plan.OpRemoveUnit, plan.OpRemoveFile:
		return h.Files.Remove(a.Target, d.Root) // a drop-in's directory goes when it is left empty
	case plan.OpRemoveSecret:
		return h.Podman.RemoveSecret(ctx, a.Target)
	case plan.OpDeleteNetwork:
		return h.Podman.RemoveNetwork(ctx, a.Target)
	case plan.OpDeleteImage:
		return h.Podman.RemoveImage(ctx, a.Target)
	case plan.OpDaemonReload:
		return deadline(ctx, e.opts.ReloadTimeout, "daemon-reload", h.Systemd.DaemonReload)
	case plan.OpCreateVolume:
		if d.Service == "" {
			return h.Podman.CreateVolume(ctx, a.Target)
		}
		return e.startOne(ctx, d.Service)
	}
	return fmt.Errorf("%s %s cannot run on its own", a.Op, a.Target)
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

// targets are the targets of the actions at indexes.
func (e *run) targets(indexes []int) []string {
	out := make([]string, len(indexes))
	for k, i := range indexes {
		out[k] = e.p.Actions[i].Target
	}
	return out
}

// byIndex orders landed actions as the plan does.
func byIndex(a, b Landed) int { return a.Index - b.Index }

// fileWrites are the actions that only write under the managed trees, each
// to its own path: prepared before anything stops, then swapped in side by
// side.
var fileWrites = map[plan.Op]bool{plan.OpWriteFile: true, plan.OpWriteUnit: true, plan.OpLinkUnit: true, plan.OpWriteDir: true}
