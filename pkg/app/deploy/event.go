package deploy

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/plan"
)

// What a run tells the people who are not watching it: the events it
// produces, built from the Request and the Outcome. Only facts the run's
// own output already shows go into them — names, counts, the summary and
// error lines, the failing units' last log lines with secret values
// scrubbed — never a file's content, a diff or a secret value.

// Source kinds of an event.
const (
	SourceStdin    = "stdin"
	SourcePath     = "path"
	SourceStored   = "stored" // /etc/syslet/config.json, a plain `syslet`
	SourceRollback = "rollback"
)

// sourceKind is where the run's specs come from, for its events.
func (req *Request) sourceKind() string {
	switch {
	case req.Generation != "":
		return SourceRollback
	case req.Path == "-":
		return SourceStdin
	case req.Path == "":
		return SourceStored
	}
	return SourcePath
}

// hostname names this host in events.
func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
}

// PlanCounts are a plan's counts as events carry them.
func PlanCounts(p *plan.Plan) *notify.Plan {
	if p == nil {
		return nil
	}
	c := p.Count()
	return &notify.Plan{Create: c.Create, Change: c.Change, Reload: c.Reload, Metadata: c.Metadata, Remove: c.Remove,
		Start: c.Start, Stop: c.Stop, Drift: c.Drift, Unchanged: c.Unchanged, Actions: len(p.Actions)}
}

// started is the event of a run that is about to change the host.
func (r *runner) started(p *plan.Plan, runID string) notify.Event {
	return notify.Event{Event: notify.Started, Time: time.Now().UTC(), Host: hostname(),
		Source: notify.Source{Kind: r.req.sourceKind(), Text: r.req.Source}, Run: runID,
		Summary: r.out.Summary, Plan: PlanCounts(p)}
}

// Event is what the run came to, for its notification: failed whenever
// err is set (also for invalid specs and refused plans), rolled-back when
// the last good generation runs again, succeeded when the run changed the
// host and its containers passed the gate. A run that had nothing to do,
// or that the person at the prompt declined, has no event (ok false).
func (o *Outcome) Event(err error) (ev notify.Event, ok bool) {
	if o == nil {
		return notify.Event{}, false
	}
	ev = notify.Event{Time: time.Now().UTC(), Host: hostname(), Source: notify.Source{Kind: o.sourceKind, Text: o.Source},
		Run: o.RunID, Summary: o.Summary, Plan: PlanCounts(o.Plan), DurationSeconds: o.Took.Seconds()}
	switch {
	case errors.Is(err, ErrDeclined):
		return notify.Event{}, false
	case errors.Is(err, ErrRolledBack):
		ev.Event = notify.RolledBack
	case err != nil:
		ev.Event = notify.Failed
	case o.Plan == nil || o.Plan.Empty():
		return notify.Event{}, false
	default:
		ev.Event = notify.Succeeded
	}
	if err != nil {
		ev.Error = err.Error()
	}
	ev.Failing = o.failing()
	if rb := o.Rollback; rb != nil {
		ev.Rollback = &notify.Rollback{Run: rb.Run, Generation: rb.Generation, Passed: rb.Passed, Error: rb.Error}
	}
	return ev, true
}

// failing are the units that failed the run: the health gate's, else the
// failed actions of the executor (those that have a unit), with the last
// log lines the run read for them.
func (o *Outcome) failing() []notify.Unit {
	var out []notify.Unit
	if o.Gate != nil && len(o.Gate.Failures) > 0 {
		for _, f := range o.Gate.Failures {
			out = append(out, notify.Unit{Unit: f.Service, Reason: f.Reason, Log: f.Log})
		}
		return out
	}
	if o.Result != nil {
		for _, f := range o.Result.Failed {
			name := f.Action.Target
			if f.Action.Unit != "" && !strings.HasSuffix(name, ".service") {
				name = f.Action.Unit + " (" + string(f.Action.Op) + " " + f.Action.Target + ")"
			}
			out = append(out, notify.Unit{Unit: name, Reason: f.Error, Log: f.Log})
		}
	}
	return out
}

// DriftUnits are the units a plan shows differing from its specs, by
// kind: edited by hand, would change, would start. A unit that is not
// syslet's, or that the plan leaves alone, does not differ.
func DriftUnits(p *plan.Plan) []notify.DriftUnit {
	if p == nil {
		return nil
	}
	var out []notify.DriftUnit
	for _, u := range p.Units {
		kind := ""
		switch u.Effect {
		case plan.EffectNone, plan.EffectKeep, plan.EffectIgnore:
			continue
		case plan.EffectDrift:
			kind = notify.DriftEdited
		case plan.EffectStart:
			kind = notify.DriftStart
		default:
			kind = notify.DriftChange
		}
		out = append(out, notify.DriftUnit{Unit: u.FileName, Kind: kind, Effect: string(u.Effect), Reasons: u.Reasons})
	}
	return out
}

// DriftEvent is the drift notification of a check (a --diff) whose plan
// shows units differing from its specs: all of them, with the plan's
// counts.
func (o *Outcome) DriftEvent(units []notify.DriftUnit) notify.Event {
	kinds := map[string]int{}
	for _, u := range units {
		kinds[u.Kind]++
	}
	return notify.Event{Event: notify.Drift, Time: time.Now().UTC(), Host: hostname(),
		Source: notify.Source{Kind: o.sourceKind, Text: o.Source, Trigger: "drift check"},
		Summary: fmt.Sprintf("%d unit(s) differ from the applied specs: %d edited by hand, %d would change, %d not running",
			len(units), kinds[notify.DriftEdited], kinds[notify.DriftChange], kinds[notify.DriftStart]),
		Plan: PlanCounts(o.Plan), Drift: units}
}
