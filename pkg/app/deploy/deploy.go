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
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/host/stage"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
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
	// unit states, podman's stores).
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

	// AfterStep is a test hook run after each step that had actions,
	// with the step's number (1–9).
	AfterStep func(step int)
}

// Defaults are the values syslet's and webhookd's flags start from. A
// Request's zero Root, Quadlet, DialTimeout and ReadTimeout become these;
// its zero start, pull, stop and reload deadlines are the executor's
// defaults, the same values; a zero LockTimeout waits for ever.
var Defaults = Request{
	Root:          "/",
	Quadlet:       stage.DefaultGenerator,
	LockTimeout:   5 * time.Minute,
	DialTimeout:   30 * time.Second,
	ReadTimeout:   2 * time.Minute,
	StartTimeout:  executor.DefaultStartTimeout,
	PullTimeout:   executor.DefaultPullTimeout,
	StopTimeout:   executor.DefaultStopTimeout,
	ReloadTimeout: executor.DefaultReloadTimeout,
	MaxInput:      spec.DefaultMaxInput,
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
	Summary  string           `json:"summary"`
	Error    string           `json:"error,omitempty"`
	// StageDir is the staging directory kept for inspection (a failed
	// staging, or --keep-stage).
	StageDir string `json:"stageDir,omitempty"`
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
)

// hostless reports whether the run has no running system: a tree of
// files only (--root), no systemd, no podman.
// errNoHost refuses an apply to a tree without a running system.
var errNoHost = errors.New("an apply needs the running host: --root only supports --diff (use `syslet render --out DIR` to write files)")

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
// host's apply lock. It returns an Outcome whenever the specs could be
// read, also together with an error.
func Run(ctx context.Context, req Request) (*Outcome, error) {
	req.defaults()
	out := &Outcome{Source: req.Source}
	human := req.Stdout
	if req.JSON {
		human = req.Stderr
	}
	fail := func(err error) (*Outcome, error) {
		out.Error = err.Error()
		if out.Summary == "" {
			out.Summary = "error: " + err.Error()
		}
		return out, err
	}

	if req.hostless() && !req.Diff {
		// Without a running system there is nothing to apply to; refused
		// before anything is read, stored or journalled under the tree.
		return fail(errNoHost)
	}
	l, err := load.Path(req.Path, load.Options{Root: req.Root, Stdin: req.Stdin, MaxInput: req.MaxInput})
	if err != nil {
		return fail(err)
	}
	out.Specs, out.Sources, out.Findings = len(l.Specs), len(l.Sources), l.Report.Findings
	if l.Report.HasErrors() {
		view.Findings(req.Stderr, l.Report)
		out.Summary = fmt.Sprintf("%d error(s) in the specs; nothing was changed", l.Report.Errors())
		return fail(fmt.Errorf("%w: %d error(s)", ErrInvalid, l.Report.Errors()))
	}

	h, err := openHost(ctx, &req)
	if err != nil {
		view.Findings(req.Stderr, l.Report)
		return fail(err)
	}
	defer h.Close()

	// Podman's quadlet converter, in-process, for the podman this host
	// runs: CPU work, done beside the lock and the host reads (which
	// mostly wait on the kernel, systemd and podman). Its verdict is
	// awaited before anything is staged, printed or changed; a run
	// waiting for the lock stops waiting when it finds errors.
	lockCtx, stopWaiting := context.WithCancel(ctx)
	defer stopWaiting()
	check := h.startCheck(ctx, &req, l, stopWaiting)
	defer check.wait() // l.Report is the check's until it is done
	verdict := func() (*Outcome, error) {
		release, err := check.wait()
		if err != nil {
			view.Findings(req.Stderr, l.Report)
			return fail(err)
		}
		out.Findings = l.Report.Findings
		view.Findings(req.Stderr, l.Report)
		if l.Report.HasErrors() {
			out.Summary = fmt.Sprintf("%d error(s) in the specs for podman %s; nothing was changed", l.Report.Errors(), release)
			return fail(fmt.Errorf("%w: %d error(s)", ErrInvalid, l.Report.Errors()))
		}
		return nil, nil
	}

	jr := runlog.Open(req.Root)
	runID := runlog.NewRunID(time.Now())
	resumeOK := true
	if !req.Diff {
		lk, err := acquire(lockCtx, req.Stop, req.Root, req.LockTimeout,
			Holder{PID: os.Getpid(), Since: time.Now(), Source: req.Source, Run: runID}, req.Stderr)
		if err != nil {
			if o, verr := verdict(); verr != nil {
				return o, verr // the specs' errors, not the wait, are the news
			}
			return fail(err)
		}
		defer lk.release()
	} else if who, busy := held(req.Root); busy {
		// The journal's last run is the one in progress, not an unfinished one.
		fmt.Fprintf(req.Stderr, "syslet: an apply is in progress (%s); this plan does not include what it has not done yet\n", who)
		resumeOK = false
	}

	opened, err := openSecrets(&req, l.Out)
	if err != nil {
		return fail(err)
	}
	defer opened.Wipe() // zero every decrypted value once the run is over
	h.secrets = opened

	rctx, cancel := context.WithTimeout(ctx, req.ReadTimeout)
	p, err := makePlan(rctx, h, jr, l, resumeOK, plan.Options{Force: req.Force})
	cancel()
	if err != nil && errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		err = fmt.Errorf("reading the host's state did not finish within %s: %w", req.ReadTimeout, err)
	}
	if o, err := verdict(); err != nil {
		return o, err
	}
	if err != nil {
		return fail(err)
	}
	if !req.AllowRemovals {
		p.GuardRemovals()
	}
	out.Plan, out.Digest = p, p.Digest()
	out.Summary = view.PlanSummary(p)
	kept, err := h.stage(ctx, p, l.Out, req.Stderr)
	out.StageDir = kept
	if err != nil {
		printPlan(human, &req, l, p)
		fmt.Fprintln(req.Stderr, "syslet: staging failed, nothing was changed:")
		fmt.Fprintln(req.Stderr, err)
		printKept(req.Stderr, kept)
		if !req.Diff {
			record(jr, runID, &req, l, p, runlog.ResultRefused)
		}
		return fail(fmt.Errorf("%w: %w", ErrStaging, err))
	}
	printPlan(human, &req, l, p)
	printKept(req.Stderr, kept)
	printSecretValues(human, &req, p, opened)
	if !p.Appliable() {
		if !req.Diff {
			record(jr, runID, &req, l, p, runlog.ResultRefused)
		}
		return fail(fmt.Errorf("%w: %d refusal(s); nothing was changed", plan.ErrRefused, len(p.Refusals)))
	}
	if req.Diff {
		return out, nil
	}
	if req.Confirm != nil && !p.Empty() && !req.Confirm() {
		return fail(ErrDeclined)
	}
	if req.Path == "-" {
		if err := storeStdin(req.Root, l); err != nil {
			return fail(err)
		}
	}
	out.RunID = runID
	if p.Empty() {
		record(jr, runID, &req, l, p, runlog.ResultNoChanges)
		return out, nil
	}
	res, err := execute(ctx, &req, h, jr, runID, l, p, human)
	out.Result = res
	if res != nil {
		out.Summary = view.ResultLine(res)
	}
	if err != nil {
		return fail(err)
	}
	return out, nil
}

// record writes a run that executed nothing: its intent and its end, in
// one write.
func record(jr *runlog.Journal, runID string, req *Request, l *load.Set, p *plan.Plan, result string) {
	if _, err := jr.Record(intent(runID, req, l, p), runlog.Record{Result: result}); err != nil {
		fmt.Fprintln(req.Stderr, "syslet: warning:", err)
	}
}

func intent(runID string, req *Request, l *load.Set, p *plan.Plan) runlog.Record {
	rec := runlog.Record{Run: runID, PID: os.Getpid(), Source: req.Source, InputDigest: l.Digest(),
		PlanDigest: p.Digest(), Actions: journalActions(p)}
	if p.Resume != nil {
		rec.Resumes = p.Resume.Run
	}
	return rec
}

// execute records the intent, runs the plan with the journal as its
// recorder, closes the run and prints the summary.
func execute(ctx context.Context, req *Request, h *hostConn, jr *runlog.Journal, runID string, l *load.Set, p *plan.Plan, human io.Writer) (*executor.Result, error) {
	eh, err := h.executor()
	if err != nil {
		return nil, err
	}
	run, err := jr.Begin(intent(runID, req, l, p))
	if err != nil {
		return nil, fmt.Errorf("%w: nothing was changed: %w", executor.ErrJournal, err)
	}
	opts := executor.Options{
		Log:          newLogger(req.Stderr, runID),
		StartTimeout: req.StartTimeout, PullTimeout: req.PullTimeout, StopTimeout: req.StopTimeout, ReloadTimeout: req.ReloadTimeout,
		Stop:     req.Stop,
		Recorder: recorder{run},
	}
	if req.AfterStep != nil {
		opts.AfterStep = func(s plan.Step) { req.AfterStep(int(s)) }
	}
	if view.IsTerminal(req.Stderr) {
		opts.Progress = req.Stderr
	}
	view.Applying(human, runID)
	res, err := executor.Apply(ctx, p, eh, opts)
	result := runlog.ResultOK
	switch {
	case res.Interrupted:
		result = runlog.ResultInterrupted
	case err != nil:
		result = runlog.ResultFailed
	}
	if jerr := run.End(runlog.Record{Result: result, Applied: len(res.Applied), Failed: len(res.Failed),
		NotReached: len(res.NotReached), Millis: res.Duration.Milliseconds()}); jerr != nil && err == nil {
		err = fmt.Errorf("%w: %w", executor.ErrJournal, jerr)
	}
	view.ApplySummary(human, runID, res)
	return res, err
}

// storeStdin keeps the validated stream of an apply from stdin, so a
// later plain `syslet` re-applies the same specs.
func storeStdin(root string, l *load.Set) error {
	if err := fsroot.New(root).WriteFile(layout.StoredSpecs, l.Stream(), 0o600); err != nil {
		return fmt.Errorf("storing specs from stdin: %w", err)
	}
	return nil
}

// printKept says where the staging directory was kept, and what it holds.
func printKept(w io.Writer, dir string) {
	if dir != "" {
		fmt.Fprintf(w, "syslet: the staged units are kept in %s (0700; units/: the unit files as staged, generated/: what podman's generator made of them; %s says how to rerun it)\n", dir, stage.KeptNote)
	}
}

// printPlan writes the plan for people, with what it was made against.
func printPlan(w io.Writer, req *Request, l *load.Set, p *plan.Plan) {
	view.PlanWithHeader(w, view.Against{Specs: len(l.Specs), Sources: len(l.Sources), Root: req.Root, NoHost: req.hostless()}, p)
}
