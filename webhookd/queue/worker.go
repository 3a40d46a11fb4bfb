package queue

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/webhookd/clone"
	"github.com/syslet/syslet/webhookd/config"
	"github.com/syslet/syslet/webhookd/metrics"
)

// Worker deploys one repository, one attempt at a time: its run loop takes
// the queued pushes, polls and checks drift, and is where what each of
// those returns is recorded (status, metrics, log, telling people).
type Worker struct {
	cfg      *config.Repo
	co       clone.Checkout
	dep      Deployer
	log      zerolog.Logger
	m        *metrics.Set
	hostname string
	// notify sends an event to the daemon's targets; statuses is the
	// repository's commit status queue (nil: no status configured). Both
	// return at once.
	notify   func(notify.Event)
	statuses *notify.Queue

	board *board
	plans planStore
	queue pushQueue
	wake  chan struct{}
	// pollDelay draws the first poll's delay after a start, up to its
	// argument (randomDelay; tests fix it).
	pollDelay func(max time.Duration) time.Duration
	// resume is the deploy the last run of the daemon did not finish
	// (nil when none), queued again by Run.
	resume *InFlight
	// overrideFile holds the operator's opening of the windows (window.go).
	overrideFile string
	// now is the clock the windows are read by (tests set it).
	now func() time.Time
}

// Options are a worker's collaborators.
type Options struct {
	Checkout clone.Checkout
	Deployer Deployer
	Log      zerolog.Logger
	Metrics  *metrics.Set
	// StatusFile keeps the status across restarts; the plans of recent
	// deploys are kept beside it.
	StatusFile string
	Hostname   string
	// Notify sends an event to the notification targets (nil: none);
	// Statuses is the repository's commit status queue (nil: no status
	// configured). Both must return at once.
	Notify   func(notify.Event)
	Statuses *notify.Queue
	// OverrideFile is where `webhookd --open-window` opens the
	// repository's windows (OverrideFile()).
	OverrideFile string
}

// New makes the worker of the repository cfg, its status read back from
// its file.
func New(cfg *config.Repo, o Options) *Worker {
	w := &Worker{
		cfg: cfg, co: o.Checkout, dep: o.Deployer, m: o.Metrics, hostname: o.Hostname,
		log:       o.Log.With().Str("repo", cfg.Name).Logger(),
		notify:    o.Notify,
		statuses:  o.Statuses,
		wake:      make(chan struct{}, 1),
		pollDelay: randomDelay,
		plans:     plansOf(cfg.Name, o.StatusFile),

		overrideFile: o.OverrideFile,
		now:          time.Now,
	}
	if w.notify == nil {
		w.notify = func(notify.Event) {}
	}
	var err error
	w.board, w.resume, err = openBoard(cfg, o.StatusFile)
	if err != nil {
		w.log.Warn().Err(err).Str("file", o.StatusFile).Msg("ignoring unreadable status file")
	}
	st := w.board.read()
	m := w.m
	if st.LastAppliedAt != nil {
		m.LastSuccess.WithLabelValues(cfg.Name).Set(float64(st.LastAppliedAt.Unix()))
	}
	if st.LastApplied != "" {
		m.SetApplied(cfg.Name, st.LastApplied)
	}
	if st.Last != nil {
		m.SetLastResult(cfg.Name, st.Last.Result())
		m.SetLastCommit(cfg.Name, st.Last.Commit)
	}
	if d := st.Drift; d != nil && d.CheckedAt != nil {
		w.driftGauges(d)
	}
	return w
}

// Repo is the repository the worker deploys.
func (w *Worker) Repo() *config.Repo { return w.cfg }

// Status is the repository's status as GET /status shows it: the board's,
// with the pushes waiting in the queue.
func (w *Worker) Status() RepoStatus {
	st := w.board.read()
	st.Queued, st.QueuedPushes = w.queue.waiting()
	st.Window = w.window(w.now(), st.QueuedPushes > 0)
	return st
}

// Enqueue queues a push of commit; it reports whether a deploy is running
// (the push then waits for the follow-up deploy).
func (w *Worker) Enqueue(commit, trigger string) (busy bool) {
	return w.push(push{commit: commit, trigger: trigger})
}

// EnqueueUpdate queues an update of ref, a tag a registry says was pushed,
// on the applied commit; it reports false when nothing is applied yet (the
// first deploy pulls what the specs name anyway).
func (w *Worker) EnqueueUpdate(ref string) bool {
	applied := w.board.read().LastApplied
	if applied == "" {
		return false
	}
	w.push(push{commit: applied, trigger: "registry push " + ref, update: []string{ref}})
	return true
}

// push queues p and wakes the run loop.
func (w *Worker) push(p push) (busy bool) {
	busy = w.queue.add(p)
	w.nudge()
	return busy
}

// nudge wakes the run loop (at most one wake waits).
func (w *Worker) nudge() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run deploys queued pushes, and polls when configured, until stop is
// closed. A deploy in progress always finishes first: stopping in the
// middle of an apply would leave the host half-deployed.
func (w *Worker) Run(stop <-chan struct{}) {
	if r := w.resume; r != nil {
		w.resume = nil
		w.log.Warn().Str("commit", r.Commit).Str("trigger", r.Trigger).Time("started", r.Started).
			Msg("the deploy of this commit did not finish when webhookd last ran (killed or crashed): deploying it again")
		w.push(push{commit: r.Commit, trigger: "resumed after a restart (" + r.Trigger + ")", force: r.Force, update: r.Update, resumed: true})
	}
	if ws := w.window(w.now(), false); ws != nil {
		w.log.Info().Strs("windows", ws.Windows).Bool("open", ws.Open).Str("nextOpen", opening(ws.NextOpen)).
			Msg("maintenance windows: new commits are applied only inside them")
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
	heldCommit := "" // the commit last logged as waiting for a window
	for {
		for {
			select {
			case <-stop:
				w.dropPending()
				return
			default:
			}
			open, note := w.gate(w.now())
			batch := w.queue.take(open)
			if batch == nil {
				break
			}
			fetched = w.deploy(annotate(batch, note)) || fetched
			w.queue.done()
		}
		// Between deploys, with no push waiting, the fetches' packs are
		// rolled up; a push that arrives meanwhile stops the repack and is
		// deployed first.
		if fetched {
			fetched = false
			w.repack(stop)
			continue
		}
		var opens <-chan time.Time
		opens, heldCommit = w.held(heldCommit)
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
		case <-opens:
		}
	}
}

func (w *Worker) dropPending() {
	if newest, n := w.queue.waiting(); n > 0 {
		w.log.Warn().Str("commit", newest).Int("pushes", n).
			Msg("shutting down: queued pushes not deployed (poll or the next push catches up)")
	}
}
