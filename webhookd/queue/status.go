package queue

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/webhookd/config"
)

// RepoStatus is one repository's entry in GET /status.
type RepoStatus struct {
	Name   string `json:"name"`
	URL    string `json:"url"`
	Branch string `json:"branch"`
	Path   string `json:"path"`
	State  string `json:"state"` // "idle" or "deploying"
	// Deploying is the commit being deployed right now.
	Deploying string `json:"deploying,omitempty"`
	// Queued is the newest commit pushed while a deploy ran, or outside the
	// maintenance windows (Window says until when); QueuedPushes
	// counts the pushes that will coalesce into the one follow-up deploy.
	Queued       string `json:"queued,omitempty"`
	QueuedPushes int    `json:"queuedPushes,omitempty"`
	// Window is where the repository's maintenance windows stand (nil
	// without windows); its waiting says when a queued commit is deployed.
	Window *WindowStatus `json:"window,omitempty"`

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
	// Drift, Change, Start and Probe count the units that differ by
	// kind: edited by hand, would change, would start, running but their
	// readiness probe fails.
	Drift  int                `json:"drift"`
	Change int                `json:"change"`
	Start  int                `json:"start"`
	Probe  int                `json:"probe"`
	Units  []notify.DriftUnit `json:"units,omitempty"`
	// Probes are the running containers' readiness probes as the check
	// asked them, each with its answer and latency.
	Probes []host.Probed `json:"probes,omitempty"`
	// Since is when the check first found a unit differing (cleared when
	// none does).
	Since *time.Time `json:"since,omitempty"`
	Error string     `json:"error,omitempty"`
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

// keepAttempts is how many attempts the status keeps for the page.
const keepAttempts = 20

// statusKind is the persisted status as webhookd reads it back: its own
// state, a regular file (no link, never a FIFO), small.
var statusKind = bounded.Kind{What: "webhookd's status file", Max: 1 << 20}

// board is one repository's status, and the only code that writes it: each
// change below is made under mu, to a copy that is then published whole.
// A change to what survives a restart is written to the status file
// first, so no reader sees an outcome a crash could still take back, and
// writes reach the file in the order they were made. Readers take the
// last published copy and never wait for a write or the disk. What is
// published is never changed again: every change makes new values.
//
// The queued pushes are not the board's: they are the queue's, and
// Worker.Status adds them when the status is read.
type board struct {
	mu   sync.Mutex
	cur  atomic.Pointer[RepoStatus]
	file string
}

// openBoard starts the status of cfg from its file (a missing one is a
// first start; an unreadable one is logged by the caller and ignored).
// resume is the deploy the last run of the daemon did not finish (nil
// when none): it is not in flight any more until it is deployed again.
func openBoard(cfg *config.Repo, file string) (b *board, resume *InFlight, err error) {
	b = &board{file: file}
	st := RepoStatus{Name: cfg.Name, URL: cfg.RedactedURL(), Branch: cfg.Branch, Path: cfg.SpecPath, State: "idle",
		DriftInterval: cfg.DriftInterval.Seconds(), Reconcile: cfg.Reconcile}
	raw, err := bounded.ReadFile(file, statusKind)
	switch {
	case err == nil:
		err = json.Unmarshal(raw, &st.persisted)
	case errors.Is(err, os.ErrNotExist):
		err = nil
	}
	resume, st.InFlight = st.InFlight, nil
	b.cur.Store(&st)
	return b, resume, err
}

// read is the status as last published.
func (b *board) read() RepoStatus { return *b.cur.Load() }

// write makes one change: to a copy of the status, which is saved first
// when keep (the change touches what survives a restart), then published.
// A failed save is returned, and the change published all the same: the
// daemon goes on, and the next save catches up.
func (b *board) write(keep bool, change func(*RepoStatus)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	next := *b.cur.Load()
	change(&next)
	var err error
	if keep {
		err = b.save(next.persisted)
	}
	b.cur.Store(&next)
	return err
}

// save writes the status file.
func (b *board) save(p persisted) error {
	raw, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(b.file), 0o700); err != nil {
		return err
	}
	// A crash or power cut leaves the old status or the new one.
	return bounded.WriteState(b.file, append(raw, '\n'), 0o600)
}

// begin marks an attempt of p as running, saved before it changes
// anything, so a restart deploys it again.
func (b *board) begin(p push, at time.Time) error {
	return b.write(true, func(st *RepoStatus) {
		st.State, st.Deploying = "deploying", p.commit
		st.InFlight = &InFlight{Commit: p.commit, Trigger: p.trigger, Force: p.force, Update: p.update, Started: at}
	})
}

// deploying says which pushed commit the running attempt deploys, once
// it has picked the newest one on the branch.
func (b *board) deploying(p push) error {
	return b.write(true, func(st *RepoStatus) {
		st.Deploying = p.commit
		started := time.Now().UTC()
		if st.InFlight != nil {
			started = st.InFlight.Started
		}
		st.InFlight = &InFlight{Commit: p.commit, Trigger: p.trigger, Force: p.force, Update: p.update, Started: started}
	})
}

// finished records a finished attempt; the repository is idle again.
func (b *board) finished(a *Attempt) error {
	return b.write(true, func(st *RepoStatus) {
		st.State, st.Deploying = "idle", ""
		st.InFlight = nil
		st.Last, st.LastError = a, a.Error
		st.Recent = append(slices.Clone(st.Recent), a)
		if n := len(st.Recent) - keepAttempts; n > 0 {
			st.Recent = st.Recent[n:]
		}
		if a.Failed() {
			st.LastFailure = a
		}
		if a.Deployed() {
			at := a.Ended()
			st.LastApplied, st.LastAppliedAt = a.Commit, &at
		}
	})
}

// polled records a poll's fetch at at, and its error.
func (b *board) polled(at time.Time, err error) {
	_ = b.write(false, func(st *RepoStatus) {
		st.LastPoll, st.LastPollError = &at, ""
		if err != nil {
			st.LastPollError = err.Error()
		}
	})
}

// nextPoll shows when the branch is fetched next.
func (b *board) nextPoll(at time.Time) {
	_ = b.write(false, func(st *RepoStatus) { st.NextPoll = &at })
}

// drifted records a drift check's finding.
func (b *board) drifted(d *DriftStatus) error {
	return b.write(true, func(st *RepoStatus) { st.Drift = d })
}
