package webhookd

import (
	"encoding/json"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/notify"
)

// statusKind is the persisted status as webhookd reads it back: its own
// state, a regular file (no link, never a FIFO), small.
var statusKind = bounded.Kind{What: "webhookd's status file", Max: 1 << 20}

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
