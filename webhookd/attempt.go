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
	"time"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/pkg/forge"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/verdict"
)

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
