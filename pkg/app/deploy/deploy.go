package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/app/planfile"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/pkg/generation"
	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/host/stage"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/pkg/verdict"
)

// Request is one run: where the specs come from, whether to apply, how
// long each host operation may take, and the view it is shown through.
type Request struct {
	// Path is a spec file or directory; "-" reads Stdin; "" reads the
	// stream stored by the last apply from stdin.
	Path  string
	Stdin io.Reader
	// Source is what the run journal and the lock record as where the
	// specs came from ("stdin", a path, "git infra@<commit>"). Default:
	// derived from Path.
	Source string
	// Signer is who signed the commit the specs come from (webhookd
	// checked it before checkout); the journal and the generation record
	// it. nil when no signature was checked.
	Signer *commitsig.Signer
	// Diff plans and prints, and changes nothing.
	Diff bool
	// AskProbes, with Diff, is the drift check's: each container that is
	// up is also asked its installed readiness probe once, from the host
	// (Outcome.Probes), so a container that runs but no longer serves is
	// seen between deploys.
	AskProbes bool
	// Update makes the run `syslet update`: besides the input's changes,
	// each running container whose image is a tag its registry now names
	// another digest for is pulled again and restarted (plan.TagReader).
	// Without it no registry is asked.
	Update bool
	// UpdateOnly narrows an update to these registry references
	// ("host/repository:tag", as a registry's push notification names
	// them); nil updates every tagged image.
	UpdateOnly []string
	// Root is the tree syslet manages; anything but "/" means no systemd
	// and no podman (only Diff is then allowed), unless Host is set.
	Root string
	// Host opens the running system's adapters (nil: OpenLive, the real
	// ones). Tests pass in-memory hosts; with Host set, Root is the
	// managed tree of that host.
	Host func(ctx context.Context, req *Request) (*Live, error)
	// View shows the run as it goes (pkg/app/view: Human, JSON, Log);
	// nil shows nothing. The run holds no writer of its own.
	View view.Operation
	// Confirm, when set, is asked once after the plan is shown and before
	// anything changes; false cancels the apply. Unattended runs (SSH
	// pipe, webhook, CI) leave it nil.
	Confirm func() bool
	// Stop ends the run gracefully when closed: a lock wait ends at once,
	// an apply finishes the action in progress and runs nothing after it.
	// Cancelling the context of Run aborts the action in progress too.
	Stop <-chan struct{}

	Quadlet string // the host's quadlet generator, for staging
	// Podman is the podman release the units are checked against when
	// there is no host (Root other than "/"); zero means the oldest
	// supported. On a host, the host's podman says (its API).
	Podman unit.Podman

	LockTimeout  time.Duration // 0: wait for ever
	DialTimeout  time.Duration
	StartTimeout time.Duration
	PullTimeout  time.Duration
	StopTimeout  time.Duration
	// ReloadTimeout bounds the daemon-reload.
	ReloadTimeout time.Duration
	// ReadTimeout bounds reading the host's state for the plan (files,
	// unit states, podman's stores), and each read of the health gate.
	ReadTimeout time.Duration

	// MaxInput bounds the spec input's total size (0: spec.DefaultMaxInput).
	MaxInput int64
	// AllowRemovals lets through a plan that removes all managed units,
	// or more than half of more than four (plan.GuardRemovals).
	AllowRemovals bool
	// Force overwrites managed files edited by hand (plan drift).
	Force bool
	// KeepStage keeps the staging directory of a staging that passed too
	// and prints its path; a failed staging's is always kept.
	KeepStage bool
	// ShowSecrets shows, with Diff, the values of the secrets the plan
	// creates (SYSLET_SHOW_SECRETS=true); only a person's view draws them.
	ShowSecrets bool

	// Soak is how long the containers a run started must stay up for the
	// health gate to pass (zero: they must only be up).
	Soak time.Duration
	// Rollback is what a failed health gate does (default RollbackAuto).
	Rollback RollbackPolicy
	// Generation makes the run a rollback by hand (syslet rollback): it
	// applies the kept generation of that run instead of Path, or with
	// "previous" the one before the host's current generation.
	Generation string
	// KeepGenerations bounds the generations kept (0: the store's default).
	KeepGenerations int
	// KeepBackups is how many backups of each volume are kept (0:
	// backup.DefaultKeep): a new one removes the oldest beyond it.
	KeepBackups int
	// MaxBackupBytes bounds the backups' total size (0: no bound): a new
	// backup removes the oldest of other runs until the rest fit.
	MaxBackupBytes int64
	// NoBackup says the data of the volumes the run deletes or recreates
	// may go: none is exported first, and the plan says so.
	NoBackup bool

	// SavePlan, with Diff, saves the plan there as a saved plan file
	// (0600; "-": into the Outcome's Saved, for the caller to print) for
	// a later apply of exactly it (saved.go).
	SavePlan string
	// Saved applies the saved plan instead of a plan made now: the host
	// and the input are read again, and any change since it was made
	// refuses the run (ErrStale) before anything changes; with Diff it
	// only says whether it still holds. SavedFile names it for people.
	Saved     *planfile.File
	SavedFile string
	// Version is this syslet's, recorded in the plans it saves.
	Version string

	// AfterStep is a test hook run after each step that had actions,
	// with the step's number (1–9) and the pass: PassApply, or
	// PassRollback in the rollback after a failed health gate.
	AfterStep func(step int, pass string)

	// Started, when set, hears the run's started event just before it
	// changes the host (a run with nothing to do has none; nor has the
	// rollback after a failed gate, which the run's own event reports).
	// It must not block: it is called on the run's path.
	Started func(notify.Event)
}

// Defaults are the values syslet's and webhookd's flags start from. A
// Request's zero Root, Quadlet, DialTimeout and ReadTimeout become these;
// its zero start, pull, stop and reload deadlines are the executor's
// defaults, the same values; a zero LockTimeout waits for ever.
var Defaults = Request{
	Root:            "/",
	Quadlet:         stage.DefaultGenerator,
	LockTimeout:     5 * time.Minute,
	DialTimeout:     30 * time.Second,
	ReadTimeout:     2 * time.Minute,
	StartTimeout:    executor.DefaultStartTimeout,
	PullTimeout:     executor.DefaultPullTimeout,
	StopTimeout:     executor.DefaultStopTimeout,
	ReloadTimeout:   executor.DefaultReloadTimeout,
	MaxInput:        spec.DefaultMaxInput,
	Soak:            gate.DefaultSoak,
	Rollback:        RollbackAuto,
	KeepGenerations: generation.DefaultKeep,
	KeepBackups:     backup.DefaultKeep,
}

// The passes of one run, as AfterStep hears them.
const (
	PassApply    = "apply"
	PassRollback = "rollback"
)

// RollbackPolicy is what a failed health gate does.
type RollbackPolicy string

const (
	// RollbackAuto applies the last good generation again, each container
	// pinned to the image it ran then.
	RollbackAuto RollbackPolicy = "auto"
	// RollbackNever leaves the host as the failed run left it.
	RollbackNever RollbackPolicy = "never"
)

// ParseRollback reads a --rollback value.
func ParseRollback(s string) (RollbackPolicy, error) {
	switch p := RollbackPolicy(s); p {
	case RollbackAuto, RollbackNever:
		return p, nil
	}
	return "", fmt.Errorf("want auto or never, got %q", s)
}

// The errors a run returns begin with one of these; how the run ended is
// its Outcome's Verdict, which callers branch on (pkg/verdict), not these.
var (
	ErrInvalid     = errors.New("the specs are invalid")
	ErrStaging     = errors.New("staging failed, nothing was changed")
	ErrDeclined    = errors.New("apply cancelled at the prompt")
	ErrInterrupted = executor.ErrInterrupted
	// ErrGate: a started container did not pass the health gate, and the
	// host was left as the run left it (RollbackNever, or no generation
	// to return to).
	ErrGate = errors.New("the health gate failed")
	// ErrRolledBack: the health gate failed and the last good generation
	// was applied again and passed it.
	ErrRolledBack = errors.New("rolled back")
	// ErrRollbackFailed: the health gate failed and so did the rollback.
	ErrRollbackFailed = errors.New("rollback failed")
)

// errNoHost refuses an apply to a tree without a running system.
var errNoHost = errors.New("an apply needs the running host: --root only supports --diff (use `syslet render --out DIR` to write files)")

// hostless reports whether the run has no running system: a tree of
// files only (--root), no systemd, no podman.
func (req *Request) hostless() bool { return req.Root != "/" && req.Host == nil }

func (req *Request) defaults() {
	if req.Root == "" {
		req.Root = Defaults.Root
	}
	if req.View == nil {
		req.View = view.NewHuman(io.Discard, io.Discard)
	}
	if req.Quadlet == "" {
		req.Quadlet = Defaults.Quadlet
	}
	if req.DialTimeout == 0 {
		req.DialTimeout = Defaults.DialTimeout
	}
	if req.KeepBackups == 0 {
		req.KeepBackups = Defaults.KeepBackups
	}
	if req.ReadTimeout == 0 {
		req.ReadTimeout = Defaults.ReadTimeout
	}
	if req.Rollback == "" {
		req.Rollback = RollbackAuto
	}
	if req.Saved != nil {
		// A saved plan brings the options that shaped it.
		req.Force, req.AllowRemovals = req.Saved.Options.Force, req.Saved.Options.AllowRemovals
	}
	if req.Source == "" {
		switch req.Path {
		case "-":
			req.Source = spec.StdinName
		case "":
			req.Source = layout.Under(req.Root, layout.StoredSpecs)
		default:
			if abs, err := filepath.Abs(req.Path); err == nil {
				req.Source = abs
			} else {
				req.Source = req.Path
			}
		}
	}
}

// sourceKind is where the run's specs come from, for its events.
func (req *Request) sourceKind() string {
	switch {
	case req.Generation != "":
		return view.SourceRollback
	case req.Path == "-":
		return view.SourceStdin
	case req.Path == "":
		return view.SourceStored
	}
	return view.SourcePath
}

// Run reads, validates, plans and — unless Diff — applies, under the
// host's apply lock; then it holds the containers the run started to the
// health gate and, when they fail it, rolls back to the last good
// generation. It returns the Outcome, whose Verdict says how the run
// ended, and with an error when it did not end well. The view hears the
// Outcome last (Done).
func Run(ctx context.Context, req Request) (*view.Outcome, error) {
	req.defaults()
	start := time.Now()
	out, err := run(ctx, &req)
	out.Took = time.Since(start)
	if err != nil {
		out.Error = err.Error()
		if out.Summary == "" {
			out.Summary = "error: " + err.Error()
		}
	}
	req.View.Done(out)
	return out, err
}

// run is Run but for what every ending shares: it reads the input, opens
// the host, starts podman's converter check, takes the lock (or, for a
// --diff, notes who holds it), and runs the passes.
func run(ctx context.Context, req *Request) (*view.Outcome, error) {
	out := &view.Outcome{Source: req.Source, SourceKind: req.sourceKind()}
	if req.hostless() && !req.Diff {
		// Without a running system there is nothing to apply to; refused
		// before anything is read, stored or journalled under the tree.
		return ended(out, verdict.Failed, errNoHost)
	}
	gens := generation.Open(req.Root)
	if req.KeepGenerations > 0 {
		gens.Keep = req.KeepGenerations
	}
	jr := runlog.Open(req.Root)
	in, err := readInput(req, gens, jr)
	if err != nil {
		return ended(out, failed(err), err)
	}
	out.Source, out.Specs, out.Sources, out.Findings = in.source, in.set.Count(), len(in.set.Sources), in.set.Report.Findings
	storedNotCurrent(in, gens, req.View)
	if in.set.Report.HasErrors() {
		req.View.Findings(in.set.Report)
		out.Summary = fmt.Sprintf("%d error(s) in the specs; nothing was changed", in.set.Report.Errors())
		return ended(out, verdict.Invalid, fmt.Errorf("%w: %d error(s)", ErrInvalid, in.set.Report.Errors()))
	}
	h, err := openHost(ctx, req)
	if err != nil {
		req.View.Findings(in.set.Report)
		return ended(out, failed(err), err)
	}
	defer h.Close()

	// Podman's quadlet converter, in-process, for the podman this host
	// runs: CPU work, done beside the wait for the lock. Its verdict is
	// awaited before the host is read (the check lets the specs go when
	// it is done, so they are never held with the host's tree), and so
	// before anything is staged, shown or changed; a run waiting for the
	// lock stops waiting when it finds errors.
	lockCtx, stopWaiting := context.WithCancel(ctx)
	defer stopWaiting()
	check := h.startCheck(ctx, req, in.set, stopWaiting)
	defer check.wait() // the set's report is the check's until it is done
	r := &runner{req: req, view: req.View, h: h, jr: jr, gens: gens, verdict: check.verdict(req.View, in.set)}

	in.runID = runlog.NewRunID(time.Now())
	in.resume = true
	if !req.Diff {
		lk, err := acquire(lockCtx, req.Stop, req.Root, req.LockTimeout,
			Holder{PID: os.Getpid(), Since: time.Now(), Source: in.source, Run: in.runID}, req.View)
		if err != nil {
			if c := r.verdict(); c.err != nil {
				return ended(c.outcome(out), c.ending, c.err) // the specs' errors, not the wait, are the news
			}
			return ended(out, failed(err), err)
		}
		defer lk.unlock()
	} else if who, busy, err := held(req.Root); err != nil {
		return ended(out, failed(err), err)
	} else if busy {
		// The journal's last run is the one in progress, not an unfinished one.
		req.View.Busy(who.String())
		out.Busy = who.String()
		in.resume = false
	}
	first, err := r.pass(ctx, in)
	if req.Diff && req.AskProbes && err == nil && out.Busy == "" {
		if out.Probes, err = h.askProbes(ctx, req.Root, in.set.Out); err != nil {
			err = fmt.Errorf("asking the readiness probes: %w", err)
			return ended(first.outcome(out), verdict.Failed, err)
		}
	}
	if first.gateFailed() && in.kind.rollsBack() {
		back, err := r.afterFailedGate(ctx, first, err)
		return ended(back.outcome(first.outcome(out)), back.verdict, err)
	}
	return ended(first.outcome(out), first.verdict, err)
}

// failed is the verdict of a run that could not go on: interrupted by a
// signal, refused before its first change, or failed.
func failed(err error) verdict.Verdict {
	if errors.Is(err, ErrInterrupted) {
		return verdict.Interrupted
	}
	if errors.Is(err, executor.ErrNoRoom) {
		// Stopped before anything changed: the next run has nothing of
		// it to resume.
		return verdict.Refused
	}
	return verdict.Failed
}

// ended gives the Outcome its verdict.
func ended(out *view.Outcome, v verdict.Verdict, err error) (*view.Outcome, error) {
	out.Verdict = v
	return out, err
}

// storeStdin keeps the validated stream of an apply from stdin (or a
// generation a rollback restored), so a later plain `syslet` applies the
// same specs.
func storeStdin(root string, stream []byte) error {
	if err := fsroot.New(root).WriteFile(layout.StoredSpecs, stream, 0o600); err != nil {
		return fmt.Errorf("storing the specs for later plain runs: %w", err)
	}
	return nil
}
