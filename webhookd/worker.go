package webhookd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/pkg/forge"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/verdict"
)

// statusKind is the persisted status as webhookd reads it back: its own
// state, a regular file (no link, never a FIFO), small.
var statusKind = bounded.Kind{What: "webhookd's status file", Max: 1 << 20}

// Deployer applies the specs in a directory to this host, the way `syslet
// DIR` does: unattended, under the host's apply lock, recording Source as the
// run's source in the run journal.
//
// Check plans the same directory read-only (no lock, no change), as
// `syslet --diff DIR` does: what the host's drift check reports.
type Deployer interface {
	Deploy(ctx context.Context, req DeployRequest) (DeployReport, error)
	Check(ctx context.Context, req DeployRequest) (CheckReport, error)
}

// DeployRequest is one deploy of one commit.
type DeployRequest struct {
	Repo   string // configuration name of the repository
	Commit string // the commit checked out in Dir
	Dir    string // spec directory inside the checkout
	Source string // "git <repo>@<commit>", for the run journal
	// Signer signed Commit (nil when the repository checks no signature).
	Signer *commitsig.Signer
	// Force replaces hand edits (a reconcile after a drift check).
	Force bool
	// Update makes the deploy an update (`syslet update`) of these
	// registry references, pushed to their registry: the containers that
	// run them are pulled again and restarted when the tag moved.
	Update []string
	// Started hears the run's started event just before the host changes
	// (never for a deploy with nothing to do). It does not block.
	Started func(notify.Event)
}

// DeployReport is what a finished deploy tells /status.
type DeployReport struct {
	RunID   string // the run journal's id of this apply, if any
	Summary string // one line: what the plan changed
	// Verdict is how the run ended: the attempt's result and stage are
	// its (pkg/verdict). When it is verdict.RolledBack, a started
	// container failed the health gate and the host was rolled back to the
	// generation of run RolledBackTo, and the commit is not applied.
	// Failing names each unit that failed the gate, and why.
	Verdict      verdict.Verdict
	RolledBackTo string
	Failing      []string
	// Event is the run's own notification (succeeded, failed,
	// rolled-back); nil when the run had nothing to tell.
	Event *notify.Event
	// Plan is the run's plan as `syslet --diff` prints it (secrets shown
	// as (secret), private files' content hidden); the status page shows
	// it on the deploy's page. "" when no plan was made.
	Plan string
}

// CheckReport is what a drift check found.
type CheckReport struct {
	// Units differ from the applied commit's specs, by kind (edited by
	// hand, would change, would start).
	Units []notify.DriftUnit
	// Busy names another apply that held the lock: the plan then shows
	// what it has not done yet, not drift, and the check counts for
	// nothing.
	Busy string
	// Event is the drift notification for these units.
	Event *notify.Event
}

// Results of a deploy attempt, as /status and the deploys metric show them:
// those of a run are its verdict's (pkg/verdict).
const (
	ResultSuccess = verdict.DeploySuccess
	ResultFailed  = verdict.DeployFailed
	// ResultSkipped: the commit is older than the one already applied, so
	// deploying it would move the host backwards (a late or replayed push).
	ResultSkipped = "skipped"
	// ResultRolledBack: the commit was applied, a container failed the
	// health gate, and the host runs its last good generation again. The
	// commit is not retried until the branch moves.
	ResultRolledBack = verdict.DeployRolledBack
)

// Stages a deploy attempt can fail in.
const (
	StageFetch    = "fetch"
	StageCheckout = "checkout"
	// StageSignature: the commit is not signed by a key the repository's
	// verify.allowedSigners or verify.keyring lists; it was refused before checkout.
	StageSignature = "signature"
	StageApply     = verdict.StageApply
	// StageGate: the apply landed but a started container failed the
	// health gate.
	StageGate = verdict.StageGate
)

// Attempt is one deploy attempt of one commit.
type Attempt struct {
	Commit  string `json:"commit"`
	Trigger string `json:"trigger"` // e.g. "github push 1f2e…" or "poll"
	Pushes  int    `json:"pushes"`  // queued pushes this attempt covered (coalesced)
	Result  string `json:"result"`
	Stage   string `json:"stage,omitempty"` // where a failure happened
	Summary string `json:"summary,omitempty"`
	RunID   string `json:"runId,omitempty"`
	Error   string `json:"error,omitempty"`
	// Refusal is why the commit's signature was refused (a
	// commitsig.Reason: unsigned, unknown-key, bad-signature,
	// key-not-yet-valid, key-expired); Signer is who signed a commit
	// that passed the check.
	Refusal string            `json:"refusal,omitempty"`
	Signer  *commitsig.Signer `json:"signer,omitempty"`
	// FailingUnits and RolledBackTo say why a rolled-back attempt did not
	// land and what the host runs instead (the generation of that run).
	FailingUnits []string  `json:"failingUnits,omitempty"`
	RolledBackTo string    `json:"rolledBackTo,omitempty"`
	Started      time.Time `json:"started"`
	Duration     float64   `json:"durationSeconds"`

	// pending: the forge was told this commit is being deployed; event
	// is the run's own notification.
	pending bool
	event   *notify.Event
}

// RepoStatus is one repository's entry in GET /status.
type RepoStatus struct {
	Name   string `json:"name"`
	URL    string `json:"url"`
	Branch string `json:"branch"`
	Path   string `json:"path"`
	State  string `json:"state"` // "idle" or "deploying"
	// Deploying is the commit being deployed right now.
	Deploying string `json:"deploying,omitempty"`
	// Queued is the newest commit pushed while a deploy ran; QueuedPushes
	// counts the pushes that will coalesce into the one follow-up deploy.
	Queued       string `json:"queued,omitempty"`
	QueuedPushes int    `json:"queuedPushes,omitempty"`

	persisted

	LastPoll      *time.Time `json:"lastPoll,omitempty"`
	LastPollError string     `json:"lastPollError,omitempty"`
	// NextPoll is when the branch is fetched next (polling repositories).
	NextPoll *time.Time `json:"nextPoll,omitempty"`

	// DriftInterval is how often the host is checked (0: never);
	// Reconcile: a check that finds differences deploys the applied
	// commit again.
	DriftInterval float64 `json:"driftIntervalSeconds"`
	Reconcile     bool    `json:"reconcile,omitempty"`
}

// DriftStatus is what the last drift check found.
type DriftStatus struct {
	CheckedAt *time.Time `json:"checkedAt,omitempty"`
	Commit    string     `json:"commit,omitempty"` // the applied commit checked against
	// Drift, Change and Start count the units that differ by kind:
	// edited by hand, would change, would start.
	Drift  int                `json:"drift"`
	Change int                `json:"change"`
	Start  int                `json:"start"`
	Units  []notify.DriftUnit `json:"units,omitempty"`
	// Since is when the check first found a unit differing (cleared when
	// none does).
	Since *time.Time `json:"since,omitempty"`
	Error string     `json:"error,omitempty"`
}

// persisted survives restarts (stateDir/.status/<repo>.json): what is
// applied must not be forgotten, or a late push could roll the host back.
type persisted struct {
	LastApplied   string     `json:"lastApplied,omitempty"`
	LastAppliedAt *time.Time `json:"lastAppliedAt,omitempty"`
	// Last is the most recent attempt; LastError repeats its error.
	Last      *Attempt `json:"last,omitempty"`
	LastError string   `json:"lastError,omitempty"`
	// LastFailure stays after later successes, for the operator.
	LastFailure *Attempt `json:"lastFailure,omitempty"`
	// Recent are the last attempts, oldest first (at most keepAttempts),
	// for the status page's list of deploys.
	Recent []*Attempt `json:"recent,omitempty"`
	// Drift is the last drift check's finding; it survives restarts so
	// that a drift already told is not told again.
	Drift *DriftStatus `json:"drift,omitempty"`
	// InFlight is the deploy running now; saved before it starts and
	// cleared when it ends, so one that a kill, a crash or a power cut
	// cut short is still here at the next start, and deployed again
	// first (the apply resumes what the cut-short run left undone).
	InFlight *InFlight `json:"inFlight,omitempty"`
}

// InFlight is a deploy attempt in progress, as the status file keeps it.
type InFlight struct {
	Commit  string `json:"commit"`
	Trigger string `json:"trigger"`
	Force   bool   `json:"force,omitempty"` // a reconcile, replacing hand edits
	// Update are the pushed images the deploy updates (a registry's
	// notification): a restart resumes it as that update again.
	Update  []string  `json:"update,omitempty"`
	Started time.Time `json:"started"`
}

// keepAttempts is how many attempts the status keeps for the page.
const keepAttempts = 20

// maxPending bounds the pushes remembered between deploys; past it the
// oldest is dropped (the newest one is what gets deployed anyway).
const maxPending = 64

// deployTimeout is a last-resort bound on one attempt (fetch + apply).
const deployTimeout = time.Hour

type push struct {
	commit  string
	trigger string
	force   bool // a reconcile: replace hand edits
	// update are the registry references whose push this deploy updates
	// (registry.go); a git push has none.
	update []string
}

// enqueueUpdate queues an update of ref, a tag a registry says was pushed,
// on the applied commit; it reports false when nothing is applied yet (the
// first deploy pulls what the specs name anyway).
func (w *worker) enqueueUpdate(ref string) bool {
	w.mu.Lock()
	applied := w.st.LastApplied
	w.mu.Unlock()
	if applied == "" {
		return false
	}
	w.queue(push{commit: applied, trigger: "registry push " + ref, update: []string{ref}})
	return true
}

// worker deploys one repository, one attempt at a time.
type worker struct {
	cfg        *Repo
	co         Checkout
	dep        Deployer
	log        zerolog.Logger
	m          *metrics
	statusFile string
	hostname   string
	// notify sends an event to the daemon's targets; statuses is the
	// repository's commit status queue (nil: no status configured). Both
	// return at once.
	notify   func(notify.Event)
	statuses *notify.Queue

	wake chan struct{}
	// pollDelay draws the first poll's delay after a start, up to its
	// argument (randomDelay; tests fix it).
	pollDelay func(max time.Duration) time.Duration

	// saveMu orders the status file's writes: each takes its snapshot and
	// writes it under saveMu, so a drift check's save cannot land after a
	// deploy's and undo its applied commit.
	saveMu  sync.Mutex
	mu      sync.Mutex
	st      RepoStatus
	pending []push
	// resume is the deploy the last run of the daemon did not finish
	// (nil when none), queued again by run.
	resume *InFlight
}

func newWorker(cfg *Repo, co Checkout, dep Deployer, log zerolog.Logger, m *metrics, statusFile string) *worker {
	w := &worker{
		cfg: cfg, co: co, dep: dep, m: m, statusFile: statusFile,
		log:       log.With().Str("repo", cfg.Name).Logger(),
		wake:      make(chan struct{}, 1),
		notify:    func(notify.Event) {},
		pollDelay: randomDelay,
		st: RepoStatus{Name: cfg.Name, URL: cfg.RedactedURL(), Branch: cfg.Branch, Path: cfg.SpecPath, State: "idle",
			DriftInterval: cfg.DriftInterval.Seconds(), Reconcile: cfg.Reconcile},
	}
	if b, err := bounded.ReadFile(statusFile, statusKind); err == nil {
		if err := json.Unmarshal(b, &w.st.persisted); err != nil {
			w.log.Warn().Err(err).Str("file", statusFile).Msg("ignoring unreadable status file")
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		w.log.Warn().Err(err).Str("file", statusFile).Msg("ignoring unreadable status file")
	}
	if w.st.LastAppliedAt != nil {
		m.lastSuccess.WithLabelValues(cfg.Name).Set(float64(w.st.LastAppliedAt.Unix()))
	}
	if w.st.LastApplied != "" {
		m.setApplied(cfg.Name, w.st.LastApplied)
	}
	if w.st.Last != nil {
		m.setLastResult(cfg.Name, w.st.Last.Result)
	}
	if d := w.st.Drift; d != nil && d.CheckedAt != nil {
		w.driftGauges(d)
	}
	w.resume, w.st.InFlight = w.st.InFlight, nil
	return w
}

// enqueue queues a push of commit; it reports whether a deploy is running
// (the push then waits for the follow-up deploy).
func (w *worker) enqueue(commit, trigger string) (busy bool) {
	return w.queue(push{commit: commit, trigger: trigger})
}

func (w *worker) queue(p push) (busy bool) {
	commit := p.commit
	w.mu.Lock()
	for i, q := range w.pending {
		if q.commit == commit {
			// The same commit again: one deploy, which still updates what
			// the dropped one was to.
			p.update = mergeUpdates(q.update, p.update)
			w.pending = append(w.pending[:i], w.pending[i+1:]...)
			break
		}
	}
	if len(w.pending) == maxPending {
		w.pending = w.pending[1:]
	}
	w.pending = append(w.pending, p)
	w.st.Queued, w.st.QueuedPushes = commit, len(w.pending)
	busy = w.st.State != "idle"
	w.mu.Unlock()
	w.nudge()
	return busy
}

// hasPending reports whether a push waits for a deploy.
func (w *worker) hasPending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending) > 0
}

// nudge wakes the run loop (at most one wake waits).
func (w *worker) nudge() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *worker) status() RepoStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.st
	return st
}

// run deploys queued pushes, and polls when configured, until stop is
// closed. A deploy in progress always finishes first: stopping in the
// middle of an apply would leave the host half-deployed.
func (w *worker) run(stop <-chan struct{}) {
	if r := w.resume; r != nil {
		w.resume = nil
		w.log.Warn().Str("commit", r.Commit).Str("trigger", r.Trigger).Time("started", r.Started).
			Msg("the deploy of this commit did not finish when webhookd last ran (killed or crashed): deploying it again")
		w.queue(push{commit: r.Commit, trigger: "resumed after a restart (" + r.Trigger + ")", force: r.Force, update: r.Update})
	}
	// The first poll waits a random delay within the spread, so a fleet
	// started together (a package upgrade, a power cut) does not fetch in
	// the same second; the later ones keep that phase.
	var firstPoll, tick, driftTick <-chan time.Time
	var ticker *time.Ticker
	if w.cfg.PollInterval > 0 {
		d := w.pollDelay(w.cfg.PollDelay)
		first := time.NewTimer(d)
		defer first.Stop()
		firstPoll = first.C
		w.setNextPoll(d)
		w.log.Info().Stringer("firstPollIn", d.Round(time.Millisecond)).Stringer("every", w.cfg.PollInterval).Msg("polling the branch")
		defer func() {
			if ticker != nil {
				ticker.Stop()
			}
		}()
	}
	if w.cfg.DriftInterval > 0 {
		t := time.NewTicker(w.cfg.DriftInterval)
		defer t.Stop()
		driftTick = t.C
	}
	fetched := false // since the last repack
	for {
		for {
			select {
			case <-stop:
				w.dropPending()
				return
			default:
			}
			batch := w.take()
			if batch == nil {
				break
			}
			fetched = w.deploy(batch) || fetched
		}
		// Between deploys, with no push waiting, the fetches' packs are
		// rolled up; a push that arrives meanwhile stops the repack and is
		// deployed first.
		if fetched {
			fetched = false
			w.repack(stop)
			continue
		}
		select {
		case <-stop:
			w.dropPending()
			return
		case <-w.wake:
		case <-firstPoll:
			firstPoll = nil
			ticker = time.NewTicker(w.cfg.PollInterval)
			tick = ticker.C
			fetched = w.poll()
			w.setNextPoll(w.cfg.PollInterval)
		case <-tick:
			fetched = w.poll()
			w.setNextPoll(w.cfg.PollInterval)
		case <-driftTick:
			w.checkDrift()
		}
	}
}

func (w *worker) dropPending() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) > 0 {
		w.log.Warn().Str("commit", w.pending[len(w.pending)-1].commit).Int("pushes", len(w.pending)).
			Msg("shutting down: queued pushes not deployed (poll or the next push catches up)")
	}
}

// take hands the queued pushes to a new attempt and marks the worker busy.
func (w *worker) take() []push {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	batch := w.pending
	w.pending = nil
	latest := batch[len(batch)-1]
	w.st.State, w.st.Deploying = "deploying", latest.commit
	w.st.Queued, w.st.QueuedPushes = "", 0
	w.st.InFlight = &InFlight{Commit: latest.commit, Trigger: latest.trigger, Force: latest.force, Started: time.Now().UTC()}
	w.m.inProgress.WithLabelValues(w.cfg.Name).Set(1)
	return batch
}

// saveInFlight saves the status with the deploy now in flight, before it
// changes anything.
func (w *worker) saveInFlight(p push) {
	w.saveMu.Lock()
	defer w.saveMu.Unlock()
	w.mu.Lock()
	if w.st.InFlight != nil {
		w.st.InFlight.Commit, w.st.InFlight.Trigger, w.st.InFlight.Force, w.st.InFlight.Update = p.commit, p.trigger, p.force, p.update
	}
	st := w.st.persisted
	w.mu.Unlock()
	if err := w.save(st); err != nil {
		w.log.Error().Err(err).Msg("saving status: a restart during this deploy would not deploy it again")
	}
}

// deploy runs one attempt for a batch of queued pushes: fetch, pick the
// newest pushed commit on the branch, check it out, apply it. It reports
// whether its fetch went through.
func (w *worker) deploy(batch []push) (fetched bool) {
	ctx, cancel := context.WithTimeout(context.Background(), deployTimeout)
	defer cancel()
	latest := batch[len(batch)-1]
	var update []string
	for _, p := range batch {
		update = mergeUpdates(update, p.update)
	}
	latest.update = update
	w.saveInFlight(latest)
	a := &Attempt{Commit: latest.commit, Trigger: latest.trigger, Pushes: len(batch), Started: time.Now().UTC()}
	log := w.log.With().Str("commit", latest.commit).Logger()

	tip, err := w.co.Fetch(ctx)
	w.m.fetches.WithLabelValues(w.cfg.Name, resultOf(err)).Inc()
	if err != nil {
		w.finish(log, a, ResultFailed, StageFetch, err)
		return false
	}
	best, err := w.newest(tip, batch)
	if err != nil {
		w.finish(log, a, ResultFailed, StageFetch, err)
		return true
	}
	best.update = update
	a.Commit = best.commit
	a.Trigger = best.trigger
	if best.force {
		a.Trigger += " (replacing hand edits)"
	}
	w.saveInFlight(best)
	log = w.log.With().Str("commit", best.commit).Logger()
	w.mu.Lock()
	w.st.Deploying = best.commit
	applied := w.st.LastApplied
	w.mu.Unlock()
	if len(batch) > 1 {
		log.Info().Int("pushes", len(batch)).Msg("coalesced queued pushes into one deploy of the newest commit")
	}

	// Never move the host backwards: a push older than what is applied
	// (late, out of order, or replayed after a restart) is skipped, unless
	// the branch itself was moved back to it.
	if applied != "" && best.commit != tip && best.commit != applied {
		older, err := w.co.Contains(applied, best.commit)
		if err != nil {
			w.finish(log, a, ResultFailed, StageFetch, err)
			return true
		}
		if older {
			a.Summary = fmt.Sprintf("%s is older than the applied %s; not deployed", short(best.commit), short(applied))
			w.finish(log, a, ResultSkipped, "", nil)
			return true
		}
	}

	w.setStatus(a, forge.Pending, "deploying to "+w.hostname)
	// Who signed it is settled before anything of the commit is checked
	// out: a refused commit never reaches the work tree or the host.
	signer, err := w.verify(best.commit)
	if err != nil {
		w.finish(log, a, ResultFailed, StageSignature, err)
		return
	}
	a.Signer = signer
	dir, err := w.co.Checkout(best.commit)
	if err != nil {
		w.finish(log, a, ResultFailed, StageCheckout, err)
		return true
	}
	// The spec directory is resolved inside the checkout: a pushed commit
	// whose path is a symlink leading out of it (to /etc, say) is refused.
	specDir, err := bounded.DirBeneath(dir, filepath.FromSlash(w.cfg.SpecPath))
	if errors.Is(err, bounded.ErrEscapes) {
		w.finish(log, a, ResultFailed, StageCheckout, fmt.Errorf("commit %s: directory %q (repos[].path) is a symlink leading outside the checkout; refused", short(best.commit), w.cfg.SpecPath))
		return true
	}
	if err != nil {
		w.finish(log, a, ResultFailed, StageCheckout, fmt.Errorf("commit %s has no directory %q (repos[].path)", short(best.commit), w.cfg.SpecPath))
		return true
	}
	log.Info().Str("dir", specDir).Msg("deploying")
	rep, err := w.dep.Deploy(ctx, DeployRequest{
		Repo:   w.cfg.Name,
		Commit: best.commit,
		Dir:    specDir,
		Source: source(w.cfg.Name, best.commit, update),
		Signer: signer,
		Force:  best.force,
		Update: update,
		Started: func(ev notify.Event) {
			w.notify(w.enrich(ev, a))
		},
	})
	a.RunID, a.Summary, a.event = rep.RunID, rep.Summary, rep.Event
	if err := w.plans().save(a.RunID, rep.Plan); err != nil {
		log.Warn().Err(err).Msg("saving the plan for the status page")
	}
	a.FailingUnits, a.RolledBackTo = rep.Failing, rep.RolledBackTo
	result, stage := rep.Verdict.Deploy()
	w.finish(log, a, result, stage, err)
	return true
}

// mergeUpdates is a and b's references, each once.
func mergeUpdates(a, b []string) []string {
	out := slices.Clone(a)
	for _, r := range b {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// source names a deploy in the run journal: the commit, and the pushed
// images an update rolls out.
func source(repo, commit string, update []string) string {
	s := fmt.Sprintf("git %s@%s", repo, commit)
	if len(update) > 0 {
		s += " (registry push " + strings.Join(update, ", ") + ")"
	}
	return s
}

// newest picks, among the batch's commits reachable from tip, the newest:
// a later push wins unless it is an ancestor of the one picked so far.
func (w *worker) newest(tip string, batch []push) (push, error) {
	var best *push
	for i := range batch {
		p := &batch[i]
		ok, err := w.co.Contains(tip, p.commit)
		if err != nil {
			return push{}, err
		}
		if !ok {
			w.log.Warn().Str("commit", p.commit).Str("tip", tip).Msg("pushed commit is not on the branch; not deploying it")
			continue
		}
		if best == nil {
			best = p
			continue
		}
		older, err := w.co.Contains(best.commit, p.commit)
		if err != nil {
			return push{}, err
		}
		if !older {
			best = p
		}
	}
	if best == nil {
		last := batch[len(batch)-1].commit
		return push{}, fmt.Errorf("%w: %s is not reachable from %s (at %s)", ErrNotOnBranch, short(last), w.cfg.Branch, short(tip))
	}
	return *best, nil
}

// finish records an attempt: status (persisted), metrics and a log line.
// result is how it ended, stage where it failed and err why.
func (w *worker) finish(log zerolog.Logger, a *Attempt, result, stage string, err error) {
	a.Duration = time.Since(a.Started).Seconds()
	a.Result, a.Stage = result, stage
	if err != nil {
		a.Error = err.Error()
		// A refusal is the signature stage's, wherever it was found (a
		// hostile object is screened before the branch is walked).
		if a.Refusal = string(commitsig.ReasonOf(err)); a.Refusal != "" {
			a.Stage = StageSignature
		}
	}
	// The outcome is made durable before /status shows it: a restart right
	// after a reader saw "applied" still knows the commit.
	w.saveMu.Lock()
	w.mu.Lock()
	p := w.st.persisted
	w.mu.Unlock()
	a.record(&p)
	if err := w.save(p); err != nil {
		log.Error().Err(err).Msg("saving status")
	}
	w.mu.Lock()
	w.st.State, w.st.Deploying = "idle", ""
	a.record(&w.st.persisted)
	w.mu.Unlock()
	w.saveMu.Unlock()

	w.m.inProgress.WithLabelValues(w.cfg.Name).Set(0)
	w.m.deploys.WithLabelValues(w.cfg.Name, a.Result).Inc()
	if a.Refusal != "" {
		w.m.refusals.WithLabelValues(w.cfg.Name, a.Refusal).Inc()
	}
	if a.Result != ResultSkipped {
		w.m.duration.WithLabelValues(w.cfg.Name, a.Result).Observe(a.Duration)
	}
	if a.Result == ResultSuccess {
		w.m.lastSuccess.WithLabelValues(w.cfg.Name).Set(float64(p.LastAppliedAt.Unix()))
		w.m.setApplied(w.cfg.Name, a.Commit)
	}
	w.m.setLastResult(w.cfg.Name, a.Result)
	w.tell(a)
	ev := log.Info()
	switch a.Result {
	case ResultFailed:
		ev = log.Error().Str("stage", a.Stage).Str("error", a.Error)
		if a.Refusal != "" {
			ev = ev.Str("refusal", a.Refusal)
		}
	case ResultRolledBack:
		ev = log.Error().Str("stage", a.Stage).Str("error", a.Error).Strs("failing", a.FailingUnits).Str("rolledBackTo", a.RolledBackTo)
	}
	ev.Str("result", a.Result).Str("summary", a.Summary).Str("run", a.RunID).
		Int("pushes", a.Pushes).Float64("seconds", a.Duration).Msg("deploy finished")
}

// record puts a finished attempt into the persisted status.
func (a *Attempt) record(p *persisted) {
	p.InFlight = nil
	p.Last, p.LastError = a, a.Error
	p.Recent = append(p.Recent, a)
	if n := len(p.Recent) - keepAttempts; n > 0 {
		p.Recent = append([]*Attempt(nil), p.Recent[n:]...)
	}
	if a.Result == ResultFailed || a.Result == ResultRolledBack {
		p.LastFailure = a
	}
	if a.Result == ResultSuccess {
		at := a.Started.Add(time.Duration(a.Duration * float64(time.Second)))
		p.LastApplied, p.LastAppliedAt = a.Commit, &at
	}
}

// save writes the status file; callers hold saveMu from their snapshot on.
func (w *worker) save(p persisted) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(w.statusFile), 0o700); err != nil {
		return err
	}
	// A crash or power cut leaves the old status or the new one.
	return bounded.WriteState(w.statusFile, append(b, '\n'), 0o600)
}

func resultOf(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
