package webhookd

import (
	"fmt"
	"strings"

	"github.com/syslet/syslet/pkg/forge"
	"github.com/syslet/syslet/pkg/notify"
)

// What a deploy attempt tells the people who are not watching: the run's
// events to the notification targets, and the commit's status on the
// forge. Both are queued and sent off the attempt's path.

// enrich adds what webhookd knows of the attempt to an event: where the
// specs came from (repository, commit, what triggered the deploy).
func (w *worker) enrich(ev notify.Event, a *Attempt) notify.Event {
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
// skipped push, and a deploy with nothing to do, tell nothing.
func (w *worker) tell(a *Attempt) {
	switch a.Result {
	case ResultSuccess:
		desc := "deployed to " + w.hostname + ": no changes"
		if a.event != nil && a.event.Plan != nil {
			desc = "deployed to " + w.hostname + ": " + brief(a.event.Plan)
		}
		w.setStatus(a, forge.Success, desc)
	case ResultFailed:
		if a.Refusal != "" {
			w.setStatus(a, forge.Failure, fmt.Sprintf("refused on %s: %s", w.hostname, a.Error))
			break
		}
		w.setStatus(a, forge.Failure, fmt.Sprintf("failed on %s (%s): %s", w.hostname, a.Stage, a.Error))
	case ResultRolledBack:
		w.setStatus(a, forge.Failure, fmt.Sprintf("rolled back on %s: %s", w.hostname, strings.Join(a.FailingUnits, "; ")))
	}
	ev := a.event
	if ev == nil && a.Result == ResultFailed {
		ev = &notify.Event{Event: notify.Failed, Host: w.hostname, Summary: a.Summary, Error: a.Error}
	}
	if ev == nil || a.Result == ResultSkipped {
		return
	}
	e := w.enrich(*ev, a)
	e.Stage, e.DurationSeconds = a.Stage, a.Duration
	if e.Run == "" {
		e.Run = a.RunID
	}
	w.notify(e)
}

// setStatus queues the commit's status on the forge: pending when a
// deploy of it starts, and the final state only after a pending one.
func (w *worker) setStatus(a *Attempt, state forge.State, description string) {
	if w.statuses == nil || w.cfg.forgeStatus == nil {
		return
	}
	if state == forge.Pending {
		a.pending = true
	} else if !a.pending {
		return
	}
	w.statuses.Post(w.cfg.forgeStatus.job(a.Commit, state, description))
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
