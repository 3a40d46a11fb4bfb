package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/generation"
	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/host/stage"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/plan"
)

// Request is one run: where the specs come from, whether to apply, and how
// long each host operation may take.
type Request struct {
	// Path is a spec file or directory; "-" reads Stdin; "" reads the
	// stream stored by the last apply from stdin.
	Path  string
	Stdin io.Reader
	// Source is what the run journal and the lock record as where the
	// specs came from ("stdin", a path, "git infra@<commit>"). Default:
	// derived from Path.
	Source string
	// Diff plans and prints, and changes nothing.
	Diff bool
	// Root is the tree syslet manages; anything but "/" means no systemd
	// and no podman (only Diff is then allowed), unless Host is set.
	Root string
	// Host opens the running system's adapters (nil: OpenLive, the real
	// ones). Tests pass in-memory hosts; with Host set, Root is the
	// managed tree of that host.
	Host func(ctx context.Context, req *Request) (*Live, error)
	// JSON leaves stdout to the caller (which prints the Outcome as one
	// JSON document) and writes the human plan and summary to Stderr.
	JSON bool
	// Confirm, when set, is asked once after the plan is printed and
	// before anything changes; false cancels the apply. Unattended runs
	// (SSH pipe, webhook, CI) leave it nil.
	Confirm func() bool
	// Stop ends the run gracefully when closed: a lock wait ends at once,
	// an apply finishes the action in progress and runs nothing after it.
	// Cancelling the context of Run aborts the action in progress too.
	Stop <-chan struct{}

	Stdout, Stderr io.Writer

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

	// SavePlan, with Diff, saves the plan there as a saved plan file
	// (0600; "-": on Stdout, the human plan then going to Stderr) for a
	// later apply of exactly it (saved.go).
	SavePlan string
	// Saved applies the saved plan instead of a plan made now: the host
	// and the input are read again, and any change since it was made
	// refuses the run (ErrStale) before anything changes; with Diff it
	// only says whether it still holds. SavedFile names it for people.
	Saved     *SavedPlan
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

// Outcome is everything a run produced: what the CLI prints as JSON, what
// webhookd reports.
type Outcome struct {
	RunID    string           `json:"run,omitempty"`
	Source   string           `json:"source"`
	Specs    int              `json:"specs"`
	Sources  int              `json:"sources"`
	Findings []report.Finding `json:"findings,omitempty"`
	Plan     *plan.Plan       `json:"plan,omitempty"`
	Digest   string           `json:"planDigest,omitempty"`
	Result   *executor.Result `json:"result,omitempty"`
	// Gate is the health gate's verdict on the containers the run started.
	Gate *gate.Report `json:"gate,omitempty"`
	// Rollback is what the rollback after a failed gate did.
	Rollback *RollbackReport `json:"rollback,omitempty"`
	Summary  string          `json:"summary"`
	Error    string          `json:"error,omitempty"`
	// StageDir is the staging directory kept for inspection (a failed
	// staging, or --keep-stage).
	StageDir string `json:"stageDir,omitempty"`
	// SavedPlan is the digest of the saved plan the run wrote, or applied
	// (or found still holding); Stale lists what changed since a saved
	// plan was made, when it was refused.
	SavedPlan string   `json:"savedPlan,omitempty"`
	Stale     []string `json:"stale,omitempty"`
	// Busy names the apply that held the lock while a --diff planned (its
	// plan may show what that apply has not done yet).
	Busy string `json:"applyInProgress,omitempty"`
	// Took is how long the run took.
	Took time.Duration `json:"-"`

	sourceKind string
}

// Pending reports whether the plan has changes (for --detailed-exitcode).
func (o *Outcome) Pending() bool { return o.Plan != nil && (!o.Plan.Empty() || o.Plan.Drifted()) }

// Errors a caller branches on. Apply failures wrap executor.ErrFailed,
// interruptions ErrInterrupted (the executor's, under deploy's name, since
// a lock wait ends the same way), lock timeouts ErrLockTimeout, a plan
// with refusals plan.ErrRefused.
var (
	ErrInvalid     = errors.New("the specs are invalid")
	ErrStaging     = errors.New("staging failed")
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
	if req.Stdout == nil {
		req.Stdout = io.Discard
	}
	if req.Stderr == nil {
		req.Stderr = io.Discard
	}
	if req.Quadlet == "" {
		req.Quadlet = Defaults.Quadlet
	}
	if req.DialTimeout == 0 {
		req.DialTimeout = Defaults.DialTimeout
	}
	if req.ReadTimeout == 0 {
		req.ReadTimeout = Defaults.ReadTimeout
	}
	if req.Rollback == "" {
		req.Rollback = RollbackAuto
	}
	req.useSaved()
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

// Run reads, validates, plans and — unless Diff — applies, under the
// host's apply lock; then it holds the containers the run started to the
// health gate and, when they fail it, rolls back to the last good
// generation. It returns an Outcome whenever the specs could be read,
// also together with an error.
func Run(ctx context.Context, req Request) (*Outcome, error) {
	req.defaults()
	r := &runner{req: &req, out: &Outcome{Source: req.Source, sourceKind: req.sourceKind()}, human: req.Stdout,
		gens: generation.Open(req.Root), jr: runlog.Open(req.Root)}
	if req.JSON || req.SavePlan == "-" {
		r.human = req.Stderr
	}
	if req.KeepGenerations > 0 {
		r.gens.Keep = req.KeepGenerations
	}
	out := r.out
	start := time.Now()
	defer func() { out.Took = time.Since(start) }()
	if req.hostless() && !req.Diff {
		// Without a running system there is nothing to apply to; refused
		// before anything is read, stored or journalled under the tree.
		return r.fail(errNoHost)
	}
	var rs *restore
	var l *load.Set
	if req.Generation != "" {
		gen, err := r.pickGeneration(req.Generation)
		if err != nil {
			return r.fail(err)
		}
		rs = &restore{gen: gen}
		req.Source = "rollback to run " + gen.Run
		out.Source = req.Source
		l = load.Bytes("generation "+gen.Run, gen.Input)
	} else {
		var err error
		if l, err = load.Path(req.Path, load.Options{Root: req.Root, Stdin: req.Stdin, MaxInput: req.MaxInput}); err != nil {
			return r.fail(err)
		}
	}
	out.Specs, out.Sources, out.Findings = l.Count(), len(l.Sources), l.Report.Findings
	if l.Report.HasErrors() {
		view.Findings(req.Stderr, l.Report)
		out.Summary = fmt.Sprintf("%d error(s) in the specs; nothing was changed", l.Report.Errors())
		return r.fail(fmt.Errorf("%w: %d error(s)", ErrInvalid, l.Report.Errors()))
	}

	h, err := openHost(ctx, &req)
	if err != nil {
		view.Findings(req.Stderr, l.Report)
		return r.fail(err)
	}
	defer h.Close()
	r.h = h

	// Podman's quadlet converter, in-process, for the podman this host
	// runs: CPU work, done beside the wait for the lock. Its verdict is
	// awaited before the host is read (the check lets the specs go when
	// it is done, so they are never held with the host's tree), and so
	// before anything is staged, printed or changed; a run waiting for
	// the lock stops waiting when it finds errors.
	lockCtx, stopWaiting := context.WithCancel(ctx)
	defer stopWaiting()
	check := h.startCheck(ctx, &req, l, stopWaiting)
	defer check.wait() // l.Report is the check's until it is done
	// The verdict is asked for before the host is read and again before
	// the plan is printed: it is reached once.
	r.verdict = sync.OnceValue(func() error {
		release, err := check.wait()
		r.release = release
		if err != nil {
			view.Findings(req.Stderr, l.Report)
			return err
		}
		out.Findings = l.Report.Findings
		view.Findings(req.Stderr, l.Report)
		if l.Report.HasErrors() {
			out.Summary = fmt.Sprintf("%d error(s) in the specs for podman %s; nothing was changed", l.Report.Errors(), release)
			return fmt.Errorf("%w: %d error(s)", ErrInvalid, l.Report.Errors())
		}
		return nil
	})

	runID := runlog.NewRunID(time.Now())
	resumeOK := true
	if !req.Diff {
		lk, err := acquire(lockCtx, req.Stop, req.Root, req.LockTimeout,
			Holder{PID: os.Getpid(), Since: time.Now(), Source: req.Source, Run: runID}, req.Stderr)
		if err != nil {
			if verr := r.verdict(); verr != nil {
				return r.fail(verr) // the specs' errors, not the wait, are the news
			}
			return r.fail(err)
		}
		defer lk.release()
	} else if who, busy, err := held(req.Root); err != nil {
		return r.fail(err)
	} else if busy {
		// The journal's last run is the one in progress, not an unfinished one.
		view.Printf(req.Stderr, "syslet: an apply is in progress (%s); this plan does not include what it has not done yet\n", who)
		out.Busy = who.String()
		resumeOK = false
	}
	if err := r.pass(ctx, l, runID, resumeOK, rs); err != nil {
		return r.fail(err)
	}
	return out, nil
}

// fail puts err in the Outcome and returns both.
func (r *runner) fail(err error) (*Outcome, error) {
	r.out.Error = err.Error()
	if r.out.Summary == "" {
		r.out.Summary = "error: " + err.Error()
	}
	return r.out, err
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

// printKept says where the staging directory was kept, and what it holds.
func printKept(w io.Writer, dir string) {
	if dir != "" {
		view.Printf(w, "syslet: the staged units are kept in %s (0700; units/: the unit files as staged, generated/: what podman's generator made of them; %s says how to rerun it)\n", dir, stage.KeptNote)
	}
}

// printPlan writes the plan for people, with what it was made against.
func printPlan(w io.Writer, req *Request, l *load.Set, p *plan.Plan) {
	view.PlanWithHeader(w, view.Against{Specs: l.Count(), Sources: len(l.Sources), Root: req.Root, NoHost: req.hostless()}, p)
}
