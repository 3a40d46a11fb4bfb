package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/backup"
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
	// LastLog is what a unit logged since a time (its older lines are not
	// this run's), the last n lines, for a failure's excerpt.
	LastLog(ctx context.Context, name string, since time.Time, n int) ([]string, error)
}

// Podman changes podman's image, volume, network and secret stores.
type Podman interface {
	PullImage(ctx context.Context, ref string, progress io.Writer) error
	// PullImageWith pulls as an image unit's service would, with the
	// unit's settings (plan.Action.Pull).
	PullImageWith(ctx context.Context, ref string, opts host.PullOptions, progress io.Writer) error
	RemoveImage(ctx context.Context, ref string) error
	RemoveVolume(ctx context.Context, name string) error
	// CreateVolume creates a volume with podman's defaults (one that
	// exists is left as it is); ImportVolume unpacks the tar read from r
	// into an existing volume, writing each file whole over what is there.
	CreateVolume(ctx context.Context, name string) error
	ImportVolume(ctx context.Context, name string, r io.Reader) error
	// ExportVolume streams the volume's content, as a tar, to w; a volume
	// that does not exist is an error wrapping host.ErrNotFound.
	ExportVolume(ctx context.Context, name string, w io.Writer) error
	// VolumeSizes is how many bytes each volume podman has holds.
	VolumeSizes(ctx context.Context) (map[string]int64, error)
	RemoveNetwork(ctx context.Context, name string) error
	CreateSecret(ctx context.Context, name string, data []byte, labels map[string]string) error
	RemoveSecret(ctx context.Context, name string) error
}

// Backups keeps the exports of the volumes step 6 deletes or recreates
// (pkg/backup), each named by the run that takes it, and gives back those
// step 9 imports.
type Backups interface {
	// Free is how many bytes the backups' filesystem has free.
	Free() (int64, error)
	// Save writes the volume's backup from what export writes, streamed,
	// and returns its file, size and sha256.
	Save(volume string, export func(io.Writer) error) (backup.Entry, error)
	// Open opens the backup of that file name for reading.
	Open(file string) (io.ReadCloser, backup.Entry, error)
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
	// Backups, when set, takes an export of every volume the plan deletes
	// (plan.Plan.BackedUp: not with --no-backup, nor those whose marker
	// says Backup=false) before it is deleted, and holds the backups the
	// plan imports; nil takes none and imports none (a test, a host
	// without podman data to keep).
	Backups Backups
	// Proxy switches start-first containers between their slots
	// (switch.go); nil on a host whose plans switch none.
	Proxy Switcher
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
	// Recorder, when set, is told as each step begins and as actions
	// land, before anything after them starts: the run journal.
	Recorder Recorder
	// AfterStep, when set, runs after each step that had actions (a test
	// hook: the integration tests pause or kill syslet there).
	AfterStep func(plan.Step)
}

// Recorder receives the progress of an apply as it happens: the run
// journal. Index is the action's position in the plan's Actions.
type Recorder interface {
	StepBegins(s plan.Step) error
	// ActionsLanded records actions that landed, in one write: an action
	// as it ends, or the file writes of a step together once they all have
	// (one fsync of the journal instead of one per file).
	ActionsLanded(ls []Landed) error
	// ActionsUndone records the applied file writes a failed run put back
	// (Undo), so the journal no longer counts them as landed.
	ActionsUndone(ls []Landed) error
}

// Landed is one action's outcome, for a Recorder.
type Landed struct {
	Index  int
	Action plan.Action
	Err    error
	Took   time.Duration
	// Backup is the export taken of a volume before it was deleted, or
	// the backup imported into a volume it filled.
	Backup *backup.Entry
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
	// Backups are the exports taken of the volumes the run deleted, in
	// the order they were taken; Restored the backups it imported into
	// the volumes it filled (their size and sha256 as read).
	Backups  []backup.Entry `json:"backups,omitempty"`
	Restored []backup.Entry `json:"restored,omitempty"`
	// Replaced says how each container the plan replaced was replaced,
	// and how long it took (replaced.go).
	Replaced []Replaced `json:"replaced,omitempty"`
	// Interrupted is set when a signal ended the run before its end.
	Interrupted bool `json:"interrupted,omitempty"`
	// Down are the services this run stopped and meant to start again,
	// and ended before starting: they are stopped on the host now, until
	// the next run resumes and starts them.
	Down []string `json:"down,omitempty"`
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

// down are the services the run stopped whose start (or restart) it did
// not reach: stopped on the host now. A service stopped to be removed is
// not down: stopped is what the plan wants of it.
func down(res *Result) []string {
	starts := map[string]bool{}
	for _, a := range res.NotReached {
		if a.Op == plan.OpStart || a.Op == plan.OpRestart {
			starts[a.Target] = true
		}
	}
	var out []string
	for _, a := range res.Applied {
		if a.Op == plan.OpStop && starts[a.Target] {
			out = append(out, a.Target)
		}
	}
	return out
}

// DownLine says which services an unfinished run left stopped: "web.service
// is stopped now (this run stopped it and ended before starting it again:
// re-run syslet to start it)".
func DownLine(down []string) string {
	if len(down) == 1 {
		return down[0] + " is stopped now (this run stopped it and ended before starting it again: re-run syslet to start it)"
	}
	return strings.Join(down, ", ") + " are stopped now (this run stopped them and ended before starting them again: re-run syslet to start them)"
}

// ErrInterrupted is wrapped by the error Apply returns when Options.Stop or
// the context ended the run early.
var ErrInterrupted = errors.New("apply interrupted")

// ErrNoRoom is wrapped by the error Apply returns, before anything
// changes, when the backups of the volumes the plan deletes cannot fit.
var ErrNoRoom = errors.New("no room for the volume backups")

// ErrJournal is wrapped when the run journal cannot be written: the run
// stops, because an unrecorded change could not be resumed exactly.
var ErrJournal = errors.New("run journal")

// Apply runs the plan's actions step by step (steps.go says how each step
// runs).
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
	if err := h.room(ctx, p); err != nil {
		res.NotReached = p.Actions
		return res, err
	}
	opts.defaults()
	e := &run{began: start, p: p, h: h, opts: opts, log: opts.Log, res: res, reached: make([]bool, len(p.Actions)), landed: make([]landing, len(p.Actions))}
	idx := byStep(p)
	stopErr := e.walk(ctx, idx)
	e.finish(ctx, stopErr)
	res.NotReached = e.notReached(idx)
	res.Replaced = e.replaced()
	res.Duration = time.Since(start)
	res.Down = down(res)
	if errors.Is(stopErr, ErrInterrupted) {
		res.Interrupted = true
		if len(res.Down) > 0 {
			// The run's last words say what is down now, not only that it stopped.
			stopErr = fmt.Errorf("%w; %s", stopErr, DownLine(res.Down))
		}
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
