package view

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/plan"
)

// What a run tells the people who are not watching it: the events drawn
// from its Outcome. Only facts the run's own output already shows go into
// them — names, counts, the summary and error lines, the failing units'
// last log lines with secret values scrubbed — never a file's content, a
// diff or a secret value.

// Hostname names this host in events.
func Hostname() string {
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

// Started is the event of a run that is about to change the host.
func Started(p *plan.Plan, runID, sourceKind, source, summary string) notify.Event {
	return notify.Event{Event: notify.Started, Time: time.Now().UTC(), Host: Hostname(),
		Source: notify.Source{Kind: sourceKind, Text: source}, Run: runID,
		Summary: summary, Plan: PlanCounts(p)}
}

// Event is what the run came to, for its notification: its verdict says
// which kind (pkg/verdict); a run with nothing to tell has none (ok
// false): one that changed nothing, one declined at the prompt.
func (o *Outcome) Event() (ev notify.Event, ok bool) {
	if o == nil || o.Verdict == 0 || o.Verdict.Notify() == "" {
		return notify.Event{}, false
	}
	ev = notify.Event{Event: o.Verdict.Notify(), Time: time.Now().UTC(), Host: Hostname(), Source: notify.Source{Kind: o.SourceKind, Text: o.Source},
		Run: o.RunID, Summary: o.Summary, Plan: PlanCounts(o.Plan), DurationSeconds: o.Took.Seconds(), Error: o.Error}
	ev.Failing = o.failing()
	ev.Findings, ev.FindingCount = report.Head(o.Findings, notify.MaxFindings)
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
	for _, s := range p.StaleImages {
		out = append(out, notify.DriftUnit{Unit: s.Unit, Kind: notify.DriftStaleImage, Effect: "none", Reasons: []string{s.Message()}})
	}
	return out
}

// Drift are the units a drift check found differing: the plan's
// (DriftUnits), then each running container whose readiness probe, asked
// once, did not pass and that the plan does not list already, with the
// probe's answer as its reason.
func (o *Outcome) Drift() []notify.DriftUnit {
	out := DriftUnits(o.Plan)
	listed := map[string]bool{}
	for _, u := range out {
		listed[u.Unit] = true
	}
	for _, p := range o.Probes {
		if p.Failing() && !listed[p.Unit] {
			out = append(out, notify.DriftUnit{Unit: p.Unit, Kind: notify.DriftProbe, Reasons: []string{p.Reason()}})
		}
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
	summary := fmt.Sprintf("%d unit(s) differ from the applied specs: %d edited by hand, %d would change, %d not running",
		len(units), kinds[notify.DriftEdited], kinds[notify.DriftChange], kinds[notify.DriftStart])
	if n := kinds[notify.DriftProbe]; n > 0 {
		summary += fmt.Sprintf(", %d probe failing", n)
	}
	return notify.Event{Event: notify.Drift, Time: time.Now().UTC(), Host: Hostname(),
		Source:  notify.Source{Kind: o.SourceKind, Text: o.Source, Trigger: "drift check"},
		Summary: summary, Plan: PlanCounts(o.Plan), Drift: units}
}
