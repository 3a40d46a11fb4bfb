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

// Files prepares and removes files under the managed trees. Every file
// write of a plan is prepared before anything is stopped and swapped in by
// step 3 or 4 (pkg/host/fsroot says how).
type Files interface {
	// PrepareFile writes what a file write will install next to path,
	// fsynced, without changing what a reader of path sees.
	PrepareFile(path string, data []byte, mode uint32) (Prepared, error)
	// PrepareDir does the same for the next version of a config dir.
	PrepareDir(path string, files []host.DirFile) (Prepared, error)
	// PrepareLink does the same for making path a symlink to target, a
	// name beside it (a template instance's link to its template).
	PrepareLink(path, target string) (Prepared, error)
	Remove(path, stop string) error
}

// Prepared is one prepared file write.
type Prepared interface {
	// Swap puts the prepared bytes in place: renames only.
	Swap() error
	// Undo puts back what the target was before Swap (after Swap), or
	// removes what was prepared (before it).
	Undo() error
	// Settle makes the write final: it forgets what Undo would have put
	// back (after Swap), or removes what was prepared (before it).
	Settle() error
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
	// PullImageWith pulls as an image unit's service would, with the
	// unit's settings (plan.Action.Pull).
	PullImageWith(ctx context.Context, ref string, opts host.PullOptions, progress io.Writer) error
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

// UndoRecorder is a Recorder that is also told which applied file writes
// a failed run put back (Undo), so the journal no longer counts them as
// landed.
type UndoRecorder interface {
	Recorder
	ActionsUndone(ls []Landed) error
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
	// Undo is what a run that failed before step 5 did to leave the host
	// as it found it; nil when there was nothing to put back.
	Undo *Undo `json:"undo,omitempty"`
}

// Undo is what a run that failed while preparing or in steps 2 to 4 did so
// that the host keeps running what it ran: the files it had swapped in put
// back, the prepared ones removed, the services step 2 had stopped started
// again (on their old unit files: no daemon-reload ran). Podman secrets
// replaced in step 3 stay replaced.
type Undo struct {
	// Discarded counts the prepared file writes removed before they were
	// swapped in.
	Discarded int `json:"discarded,omitempty"`
	// Files are the file writes swapped in and then put back; they are no
	// longer in Applied.
	Files []plan.Action `json:"files,omitempty"`
	// Started are the services stopped by step 2 and started again.
	Started []string `json:"started,omitempty"`
	// Kept are the podman secrets step 3 had created or replaced: they
	// keep their new value (podman keeps no old one to put back).
	Kept []string `json:"kept,omitempty"`
	// Errors say what could not be put back or started again.
	Errors []string `json:"errors,omitempty"`
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
			if stopErr == nil && a.Step > plan.StepPull && e.prepared == nil {
				// Before anything is stopped, every byte the run will
				// install is written next to its target: steps 3 and 4
				// only rename.
				stopErr = e.prepare(p, idx)
			}
			if stopErr == nil && a.Step >= plan.StepPrune {
				// Steps 2 to 4 are done: what they replaced is not
				// needed to put the host back any more.
				e.settle()
			}
			step = a.Step
			if stopErr == nil && opts.Recorder != nil {
				if err := opts.Recorder.StepBegins(step); err != nil {
					stopErr = fmt.Errorf("%w: %w", ErrJournal, err)
				}
			}
		}
		if stopErr != nil {
			if !e.reported[i] {
				res.NotReached = append(res.NotReached, a)
			}
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
				if !e.reported[j] {
					res.NotReached = append(res.NotReached, p.Actions[j])
				}
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
			failed, err := e.jobs(ctx, p, idx[n:end], op)
			if err != nil && stopErr == nil {
				stopErr = err
			}
			if op == host.JobStart && stopErr == nil {
				if again := buildRetry(p, failed); len(again) > 0 {
					if stopErr = e.interrupted(ctx); stopErr == nil {
						stopErr = e.retryBuilds(ctx, p, again)
					}
				}
			}
			n = end - 1
			continue
		}
		t0 := time.Now()
		err := e.do(ctx, i, a)
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
	e.finish(ctx, p, stopErr)
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
