package queue

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/pkg/forge"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/webhookd/clone"
)

// Attempt is one deploy attempt of one commit, as /status and the status
// file keep it.
type Attempt struct {
	Commit  string `json:"commit"`
	Trigger string `json:"trigger"` // e.g. "github push 1f2e…" or "poll"
	Pushes  int    `json:"pushes"`  // queued pushes this attempt covered (coalesced)
	// Verdict is how the run of syslet ended, when the attempt ran it;
	// Reason is webhookd's own ending otherwise (ending.go). /status shows
	// the result and stage they come to beside them.
	Verdict verdict.Verdict `json:"verdict,omitempty"`
	Reason  Reason          `json:"reason,omitempty"`
	Summary string          `json:"summary,omitempty"`
	RunID   string          `json:"runId,omitempty"`
	Error   string          `json:"error,omitempty"`
	// Refusal is why the commit's signature was refused (a
	// commitsig.Reason: unsigned, unknown-key, bad-signature,
	// key-not-yet-valid, key-expired); Signer is who signed a commit
	// that passed the check.
	Refusal string            `json:"refusal,omitempty"`
	Signer  *commitsig.Signer `json:"signer,omitempty"`
	// FailingUnits and RolledBackTo say why a rolled-back attempt did not
	// land and what the host runs instead (the generation of that run).
	FailingUnits []string `json:"failingUnits,omitempty"`
	RolledBackTo string   `json:"rolledBackTo,omitempty"`
	// Findings say why the specs are invalid: the first errors
	// (notify.MaxFindings), each with its file in the repository, JSON
	// path, rule and message; FindingCount counts them all.
	Findings     []report.Finding `json:"findings,omitempty"`
	FindingCount int              `json:"findingCount,omitempty"`
	Started      time.Time        `json:"started"`
	Duration     float64          `json:"durationSeconds"`
}

// outcome is what one attempt came to: the Attempt as the status keeps it,
// and what the worker does with it beyond that.
type outcome struct {
	Attempt
	// event is the run's own notification (nil when it had none); plan
	// is the run's plan as --diff printed it, for the status page.
	event *notify.Event
	plan  string
	// pending: the forge was told the commit is being deployed, so it
	// is told how that ended.
	pending bool
	// fetched: the fetch went through, so the clone is due a repack.
	fetched bool
}

// deployTimeout is a last-resort bound on one attempt (fetch + apply).
const deployTimeout = time.Hour

// deploy runs one attempt for a batch of queued pushes and records what
// it came to; it reports whether its fetch went through. The attempt
// itself changes nothing the worker shares: its steps return values, and
// the board records them here.
func (w *Worker) deploy(batch []push) (fetched bool) {
	ctx, cancel := context.WithTimeout(context.Background(), deployTimeout)
	defer cancel()
	w.m.InProgress.WithLabelValues(w.cfg.Name).Set(1)
	latest := batch[len(batch)-1]
	for _, p := range batch {
		latest.update = mergeUpdates(latest.update, p.update)
	}
	start := time.Now().UTC()
	if err := w.board.begin(latest, start); err != nil {
		w.log.Error().Err(err).Msg("saving status: a restart during this deploy would not deploy it again")
	}
	if len(batch) > 1 {
		w.log.Info().Int("pushes", len(batch)).Msg("coalesced queued pushes into one deploy of the newest commit")
	}
	o, best := w.pick(ctx, batch, latest, start)
	if !o.ended() {
		if err := w.board.deploying(best); err != nil {
			w.log.Error().Err(err).Msg("saving status: a restart during this deploy would not deploy it again")
		}
		o = w.apply(ctx, o, best)
	}
	w.finish(o)
	return o.fetched
}

// pick fetches the branch and picks the push the batch deploys: the
// newest pushed commit on it. The outcome has its ending when the
// attempt ends here: the fetch failed, or the commit is older than the
// applied one.
func (w *Worker) pick(ctx context.Context, batch []push, latest push, start time.Time) (outcome, push) {
	o := outcome{Attempt: Attempt{Commit: latest.commit, Trigger: latest.trigger, Pushes: len(batch), Started: start}}
	tip, err := w.co.Fetch(ctx)
	w.m.Fetches.WithLabelValues(w.cfg.Name, resultOf(err)).Inc()
	if err != nil {
		o.end(0, FetchFailed, err)
		return o, push{}
	}
	o.fetched = true
	best, err := w.newest(tip, batch)
	if err != nil {
		o.end(0, FetchFailed, err)
		return o, push{}
	}
	best.update = latest.update
	o.Commit, o.Trigger = best.commit, best.trigger
	if best.force {
		o.Trigger += " (replacing hand edits)"
	}
	// Never move the host backwards: a push older than what is applied
	// (late, out of order, or replayed after a restart) is skipped, unless
	// the branch itself was moved back to it.
	applied := w.board.read().LastApplied
	if applied != "" && best.commit != tip && best.commit != applied {
		older, err := w.co.Contains(applied, best.commit)
		if err != nil {
			o.end(0, FetchFailed, err)
			return o, best
		}
		if older {
			o.Summary = fmt.Sprintf("%s is older than the applied %s; not deployed", short(best.commit), short(applied))
			o.end(0, Skipped, nil)
		}
	}
	return o, best
}

// apply checks the picked commit's signature, checks it out and has the
// Deployer apply it; the outcome ends with the run's verdict, or where the
// attempt stopped before the run.
func (w *Worker) apply(ctx context.Context, o outcome, best push) outcome {
	o.pending = w.setStatus(o.Commit, forge.Pending, "deploying to "+w.hostname)
	// Who signed it is settled before anything of the commit is checked
	// out: a refused commit never reaches the work tree or the host.
	signer, err := w.verify(best.commit)
	if err != nil {
		o.end(0, SignatureRefused, err)
		return o
	}
	o.Signer = signer
	dir, err := w.co.Checkout(best.commit)
	if err != nil {
		o.end(0, CheckoutFailed, err)
		return o
	}
	// The spec directory is resolved inside the checkout: a pushed commit
	// whose path is a symlink leading out of it (to /etc, say) is refused.
	specDir, err := bounded.DirBeneath(dir, filepath.FromSlash(w.cfg.SpecPath))
	if errors.Is(err, bounded.ErrEscapes) {
		o.end(0, CheckoutFailed, fmt.Errorf("commit %s: directory %q (repos[].path) is a symlink leading outside the checkout; refused", short(best.commit), w.cfg.SpecPath))
		return o
	}
	if err != nil {
		o.end(0, CheckoutFailed, fmt.Errorf("commit %s has no directory %q (repos[].path)", short(best.commit), w.cfg.SpecPath))
		return o
	}
	if err := w.m.ReadLabels(w.cfg.Name, w.hostname, specDir); err != nil {
		w.log.Warn().Err(err).Str("commit", best.commit).Msg("this host's labels are not exported")
	}
	w.log.Info().Str("commit", best.commit).Str("dir", specDir).Msg("deploying")
	started := o.Attempt // what the started event tells of the attempt
	rep, err := w.dep.Deploy(ctx, DeployRequest{
		Repo:     w.cfg.Name,
		Commit:   best.commit,
		Dir:      specDir,
		SpecPath: w.cfg.SpecPath,
		Source:   source(w.cfg.Name, best.commit, best.update),
		Signer:   signer,
		Force:    best.force,
		Update:   best.update,
		Started: func(ev notify.Event) {
			w.notify(w.enrich(ev, &started))
		},
	})
	o.RunID, o.Summary, o.event, o.plan = rep.RunID, rep.Summary, rep.Event, rep.Plan
	o.FailingUnits, o.RolledBackTo = rep.Failing, rep.RolledBackTo
	o.Findings, o.FindingCount = report.Head(rep.Findings, notify.MaxFindings)
	v := rep.Verdict
	if v == 0 {
		// A Deployer that says no verdict did not finish a run.
		v = verdict.Failed
	}
	o.end(v, "", err)
	return o
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
func (w *Worker) newest(tip string, batch []push) (push, error) {
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
		return push{}, fmt.Errorf("%w: %s is not reachable from %s (at %s)", clone.ErrNotOnBranch, short(last), w.cfg.Branch, short(tip))
	}
	return *best, nil
}

// finish records a finished attempt: its plan for the page, the status
// (persisted), the metrics, the people told and a log line.
func (w *Worker) finish(o outcome) {
	o.Duration = time.Since(o.Started).Seconds()
	if err := w.plans.save(o.RunID, o.plan); err != nil {
		w.log.Warn().Err(err).Str("commit", o.Commit).Msg("saving the plan for the status page")
	}
	// The outcome is made durable before /status shows it: a restart right
	// after a reader saw "applied" still knows the commit.
	a := o.Attempt
	if err := w.board.finished(&a); err != nil {
		w.log.Error().Err(err).Str("commit", a.Commit).Msg("saving status")
	}

	result := a.Result()
	w.m.InProgress.WithLabelValues(w.cfg.Name).Set(0)
	w.m.Deploys.WithLabelValues(w.cfg.Name, result).Inc()
	if a.Refusal != "" {
		w.m.Refusals.WithLabelValues(w.cfg.Name, a.Refusal).Inc()
	}
	if a.Reason != Skipped {
		w.m.Duration.WithLabelValues(w.cfg.Name, result).Observe(a.Duration)
	}
	if a.Deployed() {
		w.m.LastSuccess.WithLabelValues(w.cfg.Name).Set(float64(a.Ended().Unix()))
		w.m.SetApplied(w.cfg.Name, a.Commit)
	}
	w.m.SetLastResult(w.cfg.Name, result)
	w.m.SetLastCommit(w.cfg.Name, a.Commit)
	w.tell(o)

	log := w.log.With().Str("commit", a.Commit).Logger()
	ev := log.Info()
	switch {
	case a.Verdict == verdict.RolledBack:
		ev = log.Error().Str("stage", a.Stage()).Str("error", a.Error).Strs("failing", a.FailingUnits).Str("rolledBackTo", a.RolledBackTo)
	case a.Failed():
		ev = log.Error().Str("stage", a.Stage()).Str("error", a.Error)
		if a.Refusal != "" {
			ev = ev.Str("refusal", a.Refusal)
		}
	}
	ev.Str("result", result).Str("summary", a.Summary).Str("run", a.RunID).
		Int("pushes", a.Pushes).Float64("seconds", a.Duration).Msg("deploy finished")
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
