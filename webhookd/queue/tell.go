package queue

import (
	"fmt"
	"strings"

	"github.com/syslet/syslet/pkg/forge"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/verdict"
)

// What a deploy attempt tells the people who are not watching: the run's
// events to the notification targets, and the commit's status on the
// forge. Both are queued and sent off the attempt's path.

// enrich adds what webhookd knows of the attempt to an event: where the
// specs came from (repository, commit, what triggered the deploy).
func (w *Worker) enrich(ev notify.Event, a *Attempt) notify.Event {
	ev.Source = notify.Source{Kind: "git", Text: fmt.Sprintf("git %s@%s", w.cfg.Name, a.Commit),
		Repo: w.cfg.Name, Commit: a.Commit, Trigger: a.Trigger}
	if a.Signer != nil {
		ev.Source.Signer = a.Signer.String()
	}
	if ev.Host == "" {
		ev.Host = w.hostname
	}
	return ev
}

// tell sends what a finished attempt comes to: the commit's final status
// (when its pending one was set) and the run's event — or, for a failure
// before the apply (fetch, checkout), a failed event of webhookd's own. A
// skipped push, and a deploy with nothing to do, tell nothing. What is
// said follows the attempt's ending alone.
func (w *Worker) tell(o outcome) {
	if o.Reason == Skipped {
		return
	}
	if o.pending {
		state, description := w.settled(o)
		w.setStatus(o.Commit, state, description)
	}
	ev := o.event
	if ev == nil && o.Failed() {
		ev = &notify.Event{Event: notify.Failed, Host: w.hostname, Summary: o.Summary, Error: o.Error}
	}
	if ev == nil {
		return
	}
	e := w.enrich(*ev, &o.Attempt)
	e.Stage, e.DurationSeconds = o.Stage(), o.Duration
	if e.Run == "" {
		e.Run = o.RunID
	}
	w.notify(e)
}

// settled is the commit's final status on the forge, and its description.
func (w *Worker) settled(o outcome) (forge.State, string) {
	switch {
	case o.Verdict == verdict.RolledBack:
		return forge.Failure, fmt.Sprintf("rolled back on %s: %s", w.hostname, strings.Join(o.FailingUnits, "; "))
	case o.Refusal != "":
		return forge.Failure, fmt.Sprintf("refused on %s: %s", w.hostname, o.Error)
	case o.FindingCount > 0 && o.Failed():
		return forge.Failure, invalid(w.hostname, o.Findings[0], o.FindingCount)
	case o.Failed():
		return forge.Failure, fmt.Sprintf("failed on %s (%s): %s", w.hostname, o.Stage(), o.Error)
	case o.event != nil && o.event.Plan != nil:
		return forge.Success, "deployed to " + w.hostname + ": " + brief(o.event.Plan)
	}
	return forge.Success, "deployed to " + w.hostname + ": no changes"
}

// invalid is the forge's description of specs found invalid: the first
// error (its file, JSON path and message) and how many more there are,
// the error clipped so that the count stays within what the forge keeps.
func invalid(host string, first report.Finding, count int) string {
	head, tail := "invalid specs on "+host+": ", ""
	if count > 1 {
		tail = fmt.Sprintf(" (+%d more)", count-1)
	}
	return head + forge.Clip(first.String(), forge.MaxDescription-len(head)-len(tail)) + tail
}

// setStatus queues the commit's status on the forge; it reports whether
// one was queued (no status is configured otherwise).
func (w *Worker) setStatus(commit string, state forge.State, description string) bool {
	target := w.cfg.StatusTarget()
	if w.statuses == nil || target == nil {
		return false
	}
	w.statuses.Post(target.Job(commit, state, description))
	return true
}

// brief says what a plan changed in a few words: "1 created, 2 changed".
func brief(p *notify.Plan) string {
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{p.Create, "created"}, {p.Change, "changed"}, {p.Reload, "reloaded"}, {p.Metadata, "rewritten"},
		{p.Remove, "removed"}, {p.Start, "started"}, {p.Stop, "stopped"}, {p.Drift, "left as edited by hand"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%d action(s)", p.Actions)
	}
	return strings.Join(parts, ", ")
}
