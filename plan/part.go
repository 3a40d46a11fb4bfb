package plan

import (
	"maps"
	"slices"

	"github.com/syslet/syslet/pkg/report"
)

// part is a share of the plan that one stage, or the planning of one
// unit, found. Build joins the parts in its order, which is the order of
// the plan's lists that are not sorted (refusals, notes, warnings,
// updates).
type part struct {
	files    []FileChange
	secrets  []SecretChange
	actions  []Action
	refusals []Refusal
	notes    []Note
	warnings []report.Finding
	updates  []ImageUpdate
}

// add adds an action to the part, placed in its step by its op, at rank
// inside the step.
func (pt *part) add(a Action, rank int) {
	a.Step, a.rank = StepOf(a.Op), int32(rank)
	a.Irreversible = irreversible[a.Op]
	if a.Payload != nil && a.Content != nil {
		a.Digest = contentDigest(a.Content)
	}
	pt.actions = append(pt.actions, a)
}

// join adds a part to the plan. An image update the plan holds already
// (for other containers) takes on the part's restarts.
func (p *Plan) join(pt part) {
	p.Files = append(p.Files, pt.files...)
	p.Secrets = append(p.Secrets, pt.secrets...)
	p.Actions = append(p.Actions, pt.actions...)
	p.Refusals = append(p.Refusals, pt.refusals...)
	p.Notes = append(p.Notes, pt.notes...)
	p.Warnings = append(p.Warnings, pt.warnings...)
	for _, up := range pt.updates {
		i := slices.IndexFunc(p.Updates, func(x ImageUpdate) bool { return x.Image == up.Image })
		if i < 0 {
			p.Updates = append(p.Updates, up)
			continue
		}
		for _, d := range up.From {
			if !slices.Contains(p.Updates[i].From, d) {
				p.Updates[i].From = append(p.Updates[i].From, d)
			}
		}
		p.Updates[i].Restarts = append(p.Updates[i].Restarts, up.Restarts...)
	}
}

// unitPlan is what planning one unit found: its change, the part of the
// plan it needs, and what it tells the units planned after it.
type unitPlan struct {
	change UnitChange
	part
	told outcome
	// dropIns are the unit's drop-ins this plan writes (content) or
	// removes (nil): what quadlet merges into the units after it that
	// read the same directories.
	dropIns dropIns
}

// outcome is what planning a unit tells the units planned after it that
// depend on it.
type outcome struct {
	// restarted: the unit was recreated, rebuilt, pulled again or (a pod)
	// restarted, so what requires it restarts.
	restarted bool
	// held: the unit is kept as edited by hand; a template's instances
	// are kept with it.
	held bool
	// filesChanged, dirsChanged: a template's config files or dirs
	// changed, so its instances restart or reload.
	filesChanged, dirsChanged bool
}

// decided is what the units planned so far told the units planned after
// them: Build records each unit's plan in it as it joins it, and a unit
// reads it for the units it depends on (what it requires, its template,
// the drop-in directories quadlet merges into it).
type decided struct {
	told    map[string]outcome // by unit file, the units that told anything
	dropIns dropIns            // written (content) or removed (nil)
	// room are the lists of the last unit's plan, joined into the plan:
	// the next unit's plan is made in them (next) rather than in lists of
	// its own, grown again for each of a hundred thousand units.
	room part
}

// next begins the plan of a unit with its change.
func (d *decided) next(change UnitChange) unitPlan {
	r := d.room
	d.room = part{} // one plan at a time in them
	return unitPlan{change: change, part: part{files: r.files[:0], secrets: r.secrets[:0], actions: r.actions[:0],
		refusals: r.refusals[:0], notes: r.notes[:0], warnings: r.warnings[:0], updates: r.updates[:0]}}
}

// join records what a unit's plan tells the units after it, and adds it
// to the plan.
func (d *decided) join(p *Plan, up unitPlan) {
	if up.told != (outcome{}) {
		if d.told == nil {
			d.told = map[string]outcome{}
		}
		d.told[up.change.FileName] = up.told
	}
	for dir, names := range up.dropIns {
		if d.dropIns == nil {
			d.dropIns = dropIns{}
		}
		if d.dropIns[dir] == nil {
			d.dropIns[dir] = map[string][]byte{}
		}
		maps.Copy(d.dropIns[dir], names)
	}
	p.Units = append(p.Units, up.change)
	p.join(up.part)
	d.room = up.part
}
