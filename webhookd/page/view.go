package page

import (
	"fmt"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/syslet/syslet/pkg/forge"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/redact"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/webhookd/config"
	"github.com/syslet/syslet/webhookd/queue"
)

// What the status page shows, built from webhookd's status (the same
// RepoStatus GET /status serves), the run journal (what `syslet history`
// reads) and the metrics registry: pure functions of those, so that the
// page, /status and `syslet history` never disagree. Every string that
// came from the host or a repository goes through redact.Escape here and
// html/template's escaping in the template.

// overview is the page at /.
type overview struct {
	Host    string
	Now     string
	Refresh int
	Token   string // carried on links when the page needs one
	Repos   []repoView
	// Deliveries of webhooks by outcome, notifications and commit
	// statuses by result, counted since CountedSince (the daemon's start).
	Deliveries, Notifications, Statuses []counter
	CountedSince                        string
}

type counter struct {
	Name  string
	Value int64
}

type repoView struct {
	Name, Branch, Path, URL string
	Applied                 commitView
	AppliedAt               string
	State                   string // idle, deploying
	Deploying               commitView
	Queued                  commitView
	QueuedPushes            int
	Window                  *windowView // nil: no maintenance windows
	Gate                    gateView
	Drift                   *driftView
	Deploys                 []deployView // newest first
	LastPoll, NextPoll      string
	PollError               string
}

type commitView struct{ ID, Short, Link string }

// gateView is the health gate's row: its last verdict, and the newest
// deploy when that changed nothing and so gave the gate nothing to judge.
type gateView struct {
	// Verdict is "passed", "failed" (the host runs the commit as the
	// deploy left it), "rolled-back" (the host runs Runs again and it
	// passed the gate), "rollback-failed", or "" (no deploy reached the
	// gate yet).
	Verdict string
	Commit  commitView
	At      string
	Failing []string
	Runs    commitView
	Quiet   *quietView
}

// quietView is a deploy that found nothing to change.
type quietView struct {
	Commit commitView
	At     string
}

type driftView struct {
	CheckedAt                   string
	Drift, Change, Start, Probe int
	Total                       int
	Units                       []notify.DriftUnit
	Since, Error                string
	// Probes are the running containers' readiness probes as the check
	// asked them.
	Probes []probeView
}

// probeView is one readiness probe's answer at the last drift check.
type probeView struct {
	Service, Probe, Answer, Latency, Via string
	Class                                string // ok, bad, mute (not asked)
}

type deployView struct {
	Started string
	Commit  commitView
	Trigger string
	Outcome string // applied, no changes, rolled back, refused, failed at STAGE, skipped
	Class   string // ok, bad, warn, idle: the outcome's colour
	Failing []string
	// Findings say why the specs were invalid, one line each (file, JSON
	// path, message), and how many more there are.
	Findings []string
	Reason   string
	Duration string
	Summary  string
	RunID    string
	HasRun   bool // the journal holds the run: its page exists
}

const stamp = "2006-01-02 15:04:05 UTC"

func when(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.UTC().Format(stamp)
}

// commitOf is commit id of the repository cfg as the page shows it.
func commitOf(cfg *config.Repo, id string) commitView {
	if id == "" {
		return commitView{}
	}
	var kind forge.Kind // GitLab's pages are named apart: known from status.forge
	if st := cfg.StatusTarget(); st != nil {
		kind = st.Forge()
	}
	return commitView{ID: redact.Escape(id), Short: redact.Escape(short(id)), Link: commitLink(cfg.Endpoint(), kind, id)}
}

// repoPage is one repository's part of the page.
func repoPage(cfg *config.Repo, st queue.RepoStatus, runs map[string]*runlog.RunInfo) repoView {
	v := repoView{
		Name: st.Name, Branch: redact.Escape(st.Branch), Path: redact.Escape(st.Path), URL: redact.Escape(st.URL),
		Applied: commitOf(cfg, st.LastApplied), AppliedAt: when(st.LastAppliedAt),
		State: st.State, Deploying: commitOf(cfg, st.Deploying), Queued: commitOf(cfg, st.Queued), QueuedPushes: st.QueuedPushes,
		LastPoll: when(st.LastPoll), NextPoll: when(st.NextPoll), PollError: redact.Escape(st.LastPollError),
		Window: windowPage(st.Window),
	}
	for i := len(st.Recent) - 1; i >= 0; i-- {
		v.Deploys = append(v.Deploys, deployPage(cfg, st.Recent[i], runs))
	}
	v.Gate = gatePage(cfg, st)
	if d := st.Drift; d != nil {
		v.Drift = &driftView{CheckedAt: when(d.CheckedAt), Drift: d.Drift, Change: d.Change, Start: d.Start, Probe: d.Probe,
			Total: d.Drift + d.Change + d.Start + d.Probe, Since: when(d.Since), Error: redact.Escape(d.Error)}
		for _, u := range d.Units {
			// The reasons are the plan's (keys and files by name, never
			// their content) or what a probe answered.
			v.Drift.Units = append(v.Drift.Units, notify.DriftUnit{Unit: redact.Escape(u.Unit), Kind: u.Kind, Effect: u.Effect, Reasons: escapeAll(u.Reasons)})
		}
		for _, p := range d.Probes {
			v.Drift.Probes = append(v.Drift.Probes, probeOf(p))
		}
	}
	return v
}

// probeOf is a probe's answer as the page shows it.
func probeOf(p host.Probed) probeView {
	pv := probeView{Service: redact.Escape(p.Service), Probe: redact.Escape(p.Probe), Answer: "not asked: the service is not up", Latency: "-", Via: "-", Class: "mute"}
	if a := p.Answer; a != nil {
		pv.Answer, pv.Class = redact.Escape(a.String()), "bad"
		if a.OK {
			pv.Class = "ok"
		}
		pv.Latency = a.Took.Round(100 * time.Microsecond).String()
		if a.Took >= time.Second {
			pv.Latency = a.Took.Round(time.Millisecond).String()
		}
		if a.Via != "" {
			pv.Via = redact.Escape(a.Via)
		}
	}
	return pv
}

// deployPage is one attempt as the page lists it; its run has a page of
// its own while the journal still holds it.
func deployPage(cfg *config.Repo, a *queue.Attempt, runs map[string]*runlog.RunInfo) deployView {
	d := deployView{
		Started: when(&a.Started), Commit: commitOf(cfg, a.Commit), Trigger: redact.Escape(a.Trigger),
		Failing: escapeAll(a.FailingUnits), Reason: redact.Escape(a.Error), Summary: redact.Escape(a.Summary),
		Duration: (time.Duration(a.Duration*10) * time.Second / 10).String(),
	}
	if queue.IsRunID(a.RunID) {
		d.RunID = a.RunID
		_, d.HasRun = runs[a.RunID]
	}
	for _, f := range a.Findings {
		d.Findings = append(d.Findings, redact.Escape(f.String()))
	}
	if more := a.FindingCount - len(a.Findings); more > 0 {
		d.Findings = append(d.Findings, fmt.Sprintf("… and %d more", more))
	}
	d.Outcome, d.Class = outcomeOf(a)
	return d
}

// outcomeOf is how the page names an attempt's ending, and its colour:
// applied, no changes, rolled back, refused, failed at STAGE, skipped.
// The page's own words, chosen by the ending alone.
func outcomeOf(a *queue.Attempt) (outcome, class string) {
	switch {
	case a.Reason == queue.Skipped:
		return "skipped (older than the applied commit)", "idle"
	case a.Reason == queue.SignatureRefused:
		return "refused (" + redact.Escape(a.Refusal) + " signature)", "bad"
	case a.Verdict == verdict.RolledBack:
		return "rolled back", "bad"
	case a.Verdict == verdict.Refused:
		return "refused", "bad"
	case a.Failed():
		return "failed at " + redact.Escape(a.Stage()), "bad"
	case a.Verdict == verdict.NoChanges:
		return "no changes", "ok"
	}
	return "applied", "ok"
}

// gatePage is the health gate's row: the newest attempt the gate judged,
// and, when a later deploy found nothing to change, that deploy: it
// started nothing, so the gate said nothing of its commit.
func gatePage(cfg *config.Repo, st queue.RepoStatus) gateView {
	var g gateView
	for i := len(st.Recent) - 1; i >= 0; i-- {
		a := st.Recent[i]
		if a.Verdict == verdict.NoChanges {
			if g.Quiet == nil {
				g.Quiet = &quietView{Commit: commitOf(cfg, a.Commit), At: when(&a.Started)}
			}
			continue
		}
		said, judged := gateVerdict(a)
		if !judged {
			continue
		}
		g.Verdict, g.Commit, g.At, g.Failing = said, commitOf(cfg, a.Commit), when(&a.Started), escapeAll(a.FailingUnits)
		if said == "rolled-back" {
			g.Runs = commitOf(cfg, restoredCommit(st, i))
		}
		return g
	}
	return g
}

// restoredCommit is the commit the host ran again after the rollback of
// st.Recent[i]: the one deployed last before it ("" when the kept
// attempts no longer say, and a later deploy moved the applied commit).
func restoredCommit(st queue.RepoStatus, i int) string {
	for j := i - 1; j >= 0; j-- {
		if st.Recent[j].Deployed() {
			return st.Recent[j].Commit
		}
	}
	for _, a := range st.Recent[i+1:] {
		if a.Deployed() {
			return ""
		}
	}
	return st.LastApplied
}

// gateVerdict is what the gate said of an attempt's commit, and whether
// it said anything: a run that deployed its commit passed it; one that
// failed it left the host as it was (failed), rolled back to a
// generation that passed it, or could not.
func gateVerdict(a *queue.Attempt) (string, bool) {
	switch {
	case a.Verdict == verdict.RolledBack:
		return "rolled-back", true
	case a.Verdict == verdict.RollbackFailed:
		return "rollback-failed", true
	case a.Verdict != 0 && a.Stage() == queue.StageGate:
		return "failed", true
	case a.Deployed() && a.RunID != "":
		return "passed", true
	}
	return "", false
}

func escapeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = redact.Escape(s)
	}
	return out
}

// counters sums a counter family of the registry by one label.
func counters(mfs []*dto.MetricFamily, family, label string) []counter {
	sums := map[string]int64{}
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					sums[l.GetValue()] += int64(m.GetCounter().GetValue())
				}
			}
		}
	}
	out := make([]counter, 0, len(sums))
	for k, n := range sums {
		out = append(out, counter{Name: k, Value: n})
	}
	slices.SortFunc(out, func(a, b counter) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// runPage is one deploy's page: the attempt, the journal's run, the plan.
type runPage struct {
	Host, Repo string
	Token      string
	Deploy     *deployView
	Run        *runView
	Plan       []string // lines as --diff printed them, each escaped again
}

type runView struct {
	ID, Source, Result, Error string
	Started, Ended, Duration  string
	Actions                   []actionView
}

type actionView struct{ Op, Target, Result, Error string }

func runPageOf(ri *runlog.RunInfo) *runView {
	if ri == nil {
		return nil
	}
	v := &runView{ID: ri.ID(), Source: redact.Escape(ri.Intent.Source), Result: ri.Result(), Started: when(&ri.Intent.Time)}
	if e := ri.End; e != nil {
		v.Ended, v.Error = when(&e.Time), redact.Escape(e.Error)
		v.Duration = e.Time.Sub(ri.Intent.Time).Round(100 * time.Millisecond).String()
	}
	for _, a := range ri.Actions {
		v.Actions = append(v.Actions, actionView{Op: redact.Escape(a.Op), Target: redact.Escape(a.Target), Result: a.Result, Error: redact.Escape(a.Error)})
	}
	return v
}

// planLines splits a saved plan for the page. The plan was printed the
// way --diff prints it (secrets as (secret), private files' content
// hidden); each line is escaped once more, and a line that looks like a
// credential assignment is masked, in case a plan file was tampered with.
func planLines(plan string) []string {
	if plan == "" {
		return nil
	}
	lines := strings.Split(strings.TrimRight(plan, "\n"), "\n")
	for i, l := range lines {
		l = redact.Line(l)
		// "(secret)" is already what --diff shows for a secret's value.
		if masked, ok := redact.Credential(l); ok && !strings.HasPrefix(l[len(masked)-len(redact.HiddenValue):], "(secret)") {
			l = masked
		}
		lines[i] = l
	}
	return lines
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
