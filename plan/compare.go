package plan

import (
	"bytes"
	"fmt"

	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// comparison is what comparing a desired unit with its installed file
// found.
type comparison struct {
	iu *installedUnit // nil when the unit is new
	// changed: what the unit means changed; meta: only its metadata did
	// (or only its link or drop-ins' files, meaning the same).
	changed, meta bool
	// settled: the unit's plan is complete (its file is someone else's,
	// or edited by hand): nothing is planned for it.
	settled bool
}

// compare begins the plan of a desired unit: it classifies the unit
// against its installed file (new, identical, metadata-only, or changed,
// with the key changes), judged with the drop-ins that apply to it merged
// in (dropins.go), and plans the unit's file and drop-ins. read are its
// config dirs as read (readDirs), for the drift check.
func (in *inputs) compare(u *render.Unit, before *decided, read configDirs) (up unitPlan, c comparison) {
	up = before.next(newChange(u))
	if u.Link != "" {
		return in.compareInstance(u, before, up)
	}
	uc := &up.change
	iu := in.have.units[u.FileName]
	c.iu = iu
	adopted := iu != nil && !iu.managed && takeOver(u, iu)
	if adopted {
		uc.Reasons = append(uc.Reasons, "taken over: the specs say exactly what the hand-written unit says; syslet adds its marker")
	}
	if iu != nil && !iu.managed && !adopted {
		up.refusals = append(up.refusals, Refusal{Unit: u.FileName, Source: uc.Source,
			Message: fmt.Sprintf("%s exists on the host without the [X-Syslet] marker, so it is not syslet's; syslet will not overwrite it (remove or rename it, or rename the spec)", u.Path)})
		uc.Effect = EffectIgnore
		c.settled = true
		return up, c
	}
	// An installed unit that is exactly what is rendered holds its
	// bytes: no second serialization.
	var want []byte
	if iu != nil && iu.same {
		want = iu.data
	} else {
		want = u.Bytes()
	}
	if iu == nil {
		uc.Write = true
		uc.Keys = diffKeys(&unit.File{}, u.Parsed())
		up.add(Action{Op: OpWriteUnit, Target: u.Path, Unit: u.FileName, Payload: &Payload{Content: want, Mode: 0o644}, Reason: "new unit"}, kindRank(u.Kind))
		in.planDropIns(u, nil, &up)
		return up, c
	}
	// A unit that means the same as the installed one is left as it is,
	// whatever its formatting: line order, spacing or comments written by
	// another tool (or an earlier syslet) never cause a write, a restart
	// or a recreation.
	if in.held(u, iu, &up, want, read) {
		up.told.held = true
		c.settled = true
		return up, c
	}
	dropIns := in.planDropIns(u, iu, &up)
	sameUnit := bytes.Equal(iu.data, want) || (iu.parses && unit.Same(iu.parsed(), u.Parsed()))
	if sameUnit && !dropIns {
		return up, c
	}
	uc.Write = !sameUnit
	old := merged(in.have.dropIns, iu.parsed(), u.FileName, false, before.dropIns, up.dropIns)
	neu := merged(in.have.dropIns, u.Parsed(), u.FileName, true, before.dropIns, up.dropIns)
	uc.Keys = diffKeys(old, neu)
	if w, ok := removalDefault(u, iu); ok {
		up.warnings = append(up.warnings, w)
	}
	meta := unit.Same(old.WithoutMetadata(), neu.WithoutMetadata())
	reason := "unit changed"
	switch {
	case meta:
		reason = "metadata changed"
	case adoptedBuild(u, uc.Keys):
		meta, reason = true, "adopted from the earlier syslet"
	}
	if !sameUnit {
		up.add(Action{Op: OpWriteUnit, Target: u.Path, Unit: u.FileName, Payload: &Payload{Content: want, Mode: 0o644}, Reason: reason}, kindRank(u.Kind))
	}
	c.changed, c.meta = !meta, meta
	return up, c
}

// compareInstance is compare for an instance of a template: its link, its
// own drop-ins, and what its template (merged with the template's drop-ins
// and its own) means now and after the apply. A change to the template's
// metadata alone (its marker lists the instances) is no change to an
// instance.
func (in *inputs) compareInstance(u *render.Unit, before *decided, up unitPlan) (unitPlan, comparison) {
	uc := &up.change
	iu := in.have.units[u.FileName]
	c := comparison{iu: iu}
	tmpl := in.want.units[u.Link]
	if before.told[u.Link].held {
		st := in.state(u.Service, iu)
		uc.needReload, uc.Before, uc.After = st.NeedDaemonReload, beforeState(st), beforeState(st)
		uc.Effect = EffectDrift
		uc.Reasons = append(uc.Reasons, "its template "+u.Link+" was edited by hand and is kept as it is; so is this instance")
		c.settled = true
		return up, c
	}
	switch {
	case iu == nil || iu.managed:
	case iu.link == u.Link:
		uc.Reasons = append(uc.Reasons, "taken over: the link to "+u.Link+" is there already")
	case iu.parses && unit.SameMeaning(iu.parsed(), tmpl.Parsed()):
		uc.Reasons = append(uc.Reasons, "taken over: the unit says what "+u.Link+" says; it becomes a link to it")
	default:
		up.refusals = append(up.refusals, Refusal{Unit: u.FileName, Source: uc.Source,
			Message: fmt.Sprintf("%s exists on the host and is not an instance link to %s; syslet will not overwrite it (remove or rename it, or drop the instance)", u.Path, u.Link)})
		uc.Effect = EffectIgnore
		c.settled = true
		return up, c
	}
	link := iu == nil || iu.link != u.Link
	if link {
		uc.Write = true
		up.add(Action{Op: OpLinkUnit, Target: u.Path, Payload: &Payload{Link: u.Link}, Unit: u.FileName, Reason: "instance " + u.Instance + " of " + u.Link}, kindRank(u.Kind))
	}
	dropIns := in.planDropIns(u, in.have.units[u.Link], &up)
	if iu == nil {
		return up, c
	}
	old := merged(in.have.dropIns, iu.parsed(), u.FileName, false, before.dropIns, up.dropIns)
	neu := merged(in.have.dropIns, tmpl.Parsed(), u.FileName, true, before.dropIns, up.dropIns)
	oldM, neuM := old.WithoutMetadata(), neu.WithoutMetadata()
	same := unit.Same(oldM, neuM)
	if same && !link && !dropIns {
		return up, c
	}
	uc.Keys = diffKeys(oldM, neuM)
	c.changed, c.meta = !same, same
	return up, c
}
