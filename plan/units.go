package plan

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// compare classifies a desired unit against its installed file: new,
// identical, metadata-only, or changed (with the key changes). The unit
// is judged with the drop-ins that apply to it merged in (dropins.go).
func (b *builder) compare(u *render.Unit, uc *UnitChange) (iu *installedUnit, changed, meta, ok bool) {
	if u.Link != "" {
		return b.compareInstance(u, uc)
	}
	iu = b.inst[u.FileName]
	adopted := iu != nil && !iu.managed && b.takeOver(u, iu, uc)
	if iu != nil && !iu.managed && !adopted {
		b.p.Refusals = append(b.p.Refusals, Refusal{Unit: u.FileName, Source: uc.Source,
			Message: fmt.Sprintf("%s exists on the host without the [X-Syslet] marker, so it is not syslet's; syslet will not overwrite it (remove or rename it, or rename the spec)", u.Path)})
		uc.Effect = EffectIgnore
		b.p.Units = append(b.p.Units, *uc)
		return iu, false, false, false
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
		b.add(Action{Op: OpWriteUnit, Target: u.Path, Unit: u.FileName, Payload: &Payload{Content: want, Mode: 0o644}, Reason: "new unit"}, kindRank(u.Kind))
		b.planDropIns(u, nil, uc)
		return nil, false, false, true
	}
	// A unit that means the same as the installed one is left as it is,
	// whatever its formatting: line order, spacing or comments written by
	// another tool (or an earlier syslet) never cause a write, a restart
	// or a recreation.
	if b.held(u, iu, uc, want) {
		b.heldUnits[u.FileName] = true
		b.p.Units = append(b.p.Units, *uc)
		return iu, false, false, false
	}
	dropIns := b.planDropIns(u, iu, uc)
	sameUnit := bytes.Equal(iu.data, want) || (iu.parses && unit.Same(iu.parsed(), u.Parsed()))
	if sameUnit && !dropIns {
		return iu, false, false, true
	}
	uc.Write = !sameUnit
	old, neu := b.merged(iu.parsed(), u.FileName, false), b.merged(u.Parsed(), u.FileName, true)
	uc.Keys = diffKeys(old, neu)
	b.removalDefault(u, iu)
	meta = unit.Same(old.WithoutMetadata(), neu.WithoutMetadata())
	reason := "unit changed"
	switch {
	case meta:
		reason = "metadata changed"
	case adoptedBuild(u, uc.Keys):
		meta, reason = true, "adopted from the earlier syslet"
	}
	if !sameUnit {
		b.add(Action{Op: OpWriteUnit, Target: u.Path, Unit: u.FileName, Payload: &Payload{Content: want, Mode: 0o644}, Reason: reason}, kindRank(u.Kind))
	}
	return iu, !meta, meta, true
}

// compareInstance classifies an instance of a template: its link, its
// own drop-ins, and what its template (merged with the template's drop-ins
// and its own) means now and after the apply. A change to the template's
// metadata alone (its marker lists the instances) is no change to an
// instance.
func (b *builder) compareInstance(u *render.Unit, uc *UnitChange) (iu *installedUnit, changed, meta, ok bool) {
	iu = b.inst[u.FileName]
	tmpl := b.desired[u.Link]
	if b.heldUnits[u.Link] {
		st := b.state(u.Service, iu)
		uc.needReload, uc.Before, uc.After = st.NeedDaemonReload, beforeState(st), beforeState(st)
		uc.Effect = EffectDrift
		uc.Reasons = append(uc.Reasons, "its template "+u.Link+" was edited by hand and is kept as it is; so is this instance")
		b.p.Units = append(b.p.Units, *uc)
		return iu, false, false, false
	}
	switch {
	case iu == nil || iu.managed:
	case iu.link == u.Link:
		uc.Reasons = append(uc.Reasons, "taken over: the link to "+u.Link+" is there already")
	case iu.parses && unit.SameMeaning(iu.parsed(), tmpl.Parsed()):
		uc.Reasons = append(uc.Reasons, "taken over: the unit says what "+u.Link+" says; it becomes a link to it")
	default:
		b.p.Refusals = append(b.p.Refusals, Refusal{Unit: u.FileName, Source: uc.Source,
			Message: fmt.Sprintf("%s exists on the host and is not an instance link to %s; syslet will not overwrite it (remove or rename it, or drop the instance)", u.Path, u.Link)})
		uc.Effect = EffectIgnore
		b.p.Units = append(b.p.Units, *uc)
		return iu, false, false, false
	}
	link := iu == nil || iu.link != u.Link
	if link {
		uc.Write = true
		b.add(Action{Op: OpLinkUnit, Target: u.Path, Payload: &Payload{Link: u.Link}, Unit: u.FileName, Reason: "instance " + u.Instance + " of " + u.Link}, kindRank(u.Kind))
	}
	var owner *installedUnit
	if t := b.inst[u.Link]; t != nil {
		owner = t
	}
	dropIns := b.planDropIns(u, owner, uc)
	if iu == nil {
		return nil, false, false, true
	}
	old, neu := b.merged(iu.parsed(), u.FileName, false), b.merged(tmpl.Parsed(), u.FileName, true)
	oldM, neuM := old.WithoutMetadata(), neu.WithoutMetadata()
	same := unit.Same(oldM, neuM)
	if same && !link && !dropIns {
		return iu, false, false, true
	}
	uc.Keys = diffKeys(oldM, neuM)
	return iu, !same, same, true
}

// resource plans a unit whose service makes a podman object once
// (volumes, networks, builds, image units, artifacts): what a change does
// is its kind's OnChange.
func (b *builder) resource(u *render.Unit) {
	uc := newChange(u)
	iu, changed, meta, ok := b.compare(u, &uc)
	if !ok {
		return
	}
	st := b.state(u.Service, iu)
	uc.needReload, uc.Before, uc.After = st.NeedDaemonReload, beforeState(st), st.ActiveState
	rank := kindRank(u.Kind)
	k := u.Kind.Quadlet()
	contextChanged := k.OnChange == unit.ChangeRebuild && b.files(u, &uc)

	switch {
	case iu == nil:
		uc.Effect = EffectCreate
		uc.Reasons = append(uc.Reasons, "new "+string(u.Kind))
		uc.After = "active"
		if k.OnChange == unit.ChangeRebuild {
			uc.After = "built"
		}
		b.pullUnit(u, "new "+string(u.Kind)+" unit")
		b.add(Action{Op: OpStart, Target: u.Service, Unit: u.FileName, Reason: "create " + string(u.Kind) + " " + u.Resource}, rank)
	case changed && k.HoldsData && b.opts.Rollback:
		// Recreating it would delete its data: the volume stays as the
		// failed run left it, and the rollback says so.
		b.unwrite(u.Path)
		uc.Write, uc.Effect = false, EffectKeep
		uc.Reasons = append(uc.Reasons, "not restored: going back to the earlier "+summarizeKeys(uc.Keys)+" would recreate "+string(u.Kind)+" "+u.Resource+" and delete its data")
		b.p.Notes = append(b.p.Notes, Note{Unit: u.FileName, Message: uc.Reasons[len(uc.Reasons)-1]})
	case changed && k.HoldsData:
		if !iu.removalAllowed() || !iu.reclaimDelete() {
			b.p.Refusals = append(b.p.Refusals, Refusal{Unit: u.FileName, Source: uc.Source, Message: fmt.Sprintf(
				"%s %s changed (%s), which needs the %s deleted and created again, but its installed marker forbids that (RemovalAllowed=%t, ReclaimPolicy=%s); to recreate it, first apply the spec unchanged with removalAllowed true and reclaimPolicy Delete",
				u.Kind, u.Resource, summarizeKeys(uc.Keys), u.Kind, iu.removalAllowed(), markerPolicy(iu))})
			uc.Effect = EffectRecreate
			break
		}
		fallthrough
	case changed && k.OnChange == unit.ChangeRecreate:
		uc.Effect = EffectRecreate
		uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
		b.recreated[u.FileName] = true
		if running(st) {
			b.add(Action{Op: OpStop, Target: u.Service, Unit: u.FileName, Reason: "recreate " + string(u.Kind)}, rank)
		}
		b.add(Action{Op: deleteOp[k.Object], Target: iu.resourceName(), Unit: u.FileName, Reason: "recreate with new options", Payload: noBackup(iu)}, rank)
		b.add(Action{Op: OpStart, Target: u.Service, Unit: u.FileName, Reason: "create " + string(u.Kind) + " " + u.Resource}, rank)
		uc.After = "active"
	case k.OnChange == unit.ChangePull:
		b.pulled(u, iu, &uc, changed, meta)
	case k.OnChange == unit.ChangeRebuild && (changed || contextChanged || !b.imagePresent(u.Resource)):
		uc.Effect = EffectRebuild
		switch {
		case changed:
			uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
		case contextChanged:
			uc.Reasons = append(uc.Reasons, "build context changed")
		default:
			uc.Reasons = append(uc.Reasons, "image "+u.Resource+" missing")
		}
		b.recreated[u.FileName] = true
		b.add(Action{Op: OpStart, Target: u.Service, Unit: u.FileName, Reason: "build " + u.Resource}, rank)
		uc.After = "built"
	case meta && adoptedBuild(u, uc.Keys):
		uc.Effect = EffectMetadata
		uc.Reasons = append(uc.Reasons, "written by the earlier syslet: SetWorkingDirectory added, image "+u.Resource+" kept")
	case meta:
		uc.Effect = EffectMetadata
		uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
	}
	b.p.Units = append(b.p.Units, uc)
}

// container plans a unit whose service runs something: a container (a
// template's instances each on their own; the template, which has no
// service, only as files), a pod or a kube unit.
func (b *builder) container(u *render.Unit) {
	uc := newChange(u)
	iu, changed, meta, ok := b.compare(u, &uc)
	if !ok {
		return
	}
	rank := kindRank(u.Kind)
	st := b.state(u.Service, iu)
	uc.needReload, uc.Before = st.NeedDaemonReload, beforeState(st)
	if changed {
		moves, rest := configMountMoves(u, uc.Keys)
		uc.Reasons = append(uc.Reasons, moves...)
		if len(rest) > 0 || len(moves) == 0 {
			what := summarizeKeys(rest)
			if u.Link != "" {
				what = u.Link + " (with its drop-ins): " + what
			}
			uc.Reasons = append(uc.Reasons, what)
		}
	}
	restart := changed
	filesChanged := u.Link == "" && b.files(u, &uc)
	if filesChanged {
		restart = true
	}
	if b.update(u, &uc) {
		restart = true
	}
	if !u.Template {
		if again, pinOnly := b.pin(u, &uc); again {
			restart = true
		} else if pinOnly {
			meta = true
		}
	}
	reload := b.dirs(u, &uc)
	if u.Template {
		// The template's own service is never started: its instances
		// restart or reload for what changed in it.
		b.filesChanged[u.FileName], b.dirsChanged[u.FileName] = filesChanged, reload
		uc.Before, uc.After = "-", "-"
		switch {
		case iu == nil:
			uc.Effect = EffectCreate
			uc.Reasons = append(uc.Reasons, "new template")
		case restart || reload:
			uc.Effect = EffectUpdate
		case meta:
			uc.Effect = EffectMetadata
			uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
		}
		b.p.Units = append(b.p.Units, uc)
		return
	}
	if u.Link != "" {
		if b.filesChanged[u.Link] {
			restart = true
			uc.Reasons = append(uc.Reasons, "config files of "+u.Link+" changed")
		}
		if b.dirsChanged[u.Link] {
			reload = true
			uc.Reasons = append(uc.Reasons, "config dirs of "+u.Link+" changed")
		}
	}
	// What it requires was recreated, rebuilt, pulled again or restarted
	// (b.recreated): it restarts too. A restart of what runs (its pod, to
	// which it is bound) only stops a unit that is there already.
	for _, r := range u.Used().Requires {
		if rk := unit.KindOf(r); b.recreated[r] && rk.Restarts != "" && (iu != nil || !rk.Runs()) {
			restart = true
			uc.Reasons = append(uc.Reasons, rk.RestartCause(r))
		}
	}
	for _, s := range u.Used().Secrets {
		if b.secrets[s] && iu != nil {
			restart = true
			uc.Reasons = append(uc.Reasons, "secret "+s+" changed")
		}
	}
	if meta && !restart && !reload {
		uc.Effect = EffectMetadata
		if len(uc.Keys) > 0 || len(uc.Reasons) == 0 {
			uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
		}
	}
	create := iu == nil
	if create {
		what := "new " + string(u.Kind)
		if u.Instance != "" {
			what = "new instance " + u.Instance + " of " + u.Link
		}
		uc.Reasons = append(uc.Reasons, what)
	}
	if u.Kind.Quadlet().Restarts != "" && !create && restart && running(st) {
		// Its restart restarts the units that require it (a pod's
		// containers).
		b.recreated[u.FileName] = true
	}
	isRunning := running(st)
	stop := func(why string) {
		b.add(Action{Op: OpStop, Target: u.Service, Unit: u.FileName, Reason: why}, rank)
	}
	start := func(why string) {
		if u.Image != "" && !b.imagePresent(u.Image) {
			b.pull(u.Image, u.FileName)
		}
		b.add(Action{Op: OpStart, Target: u.Service, Unit: u.FileName, Reason: why}, rank)
	}
	switch u.State {
	case spec.Running:
		uc.After = "active"
		switch {
		case create:
			uc.Effect = EffectCreate
			start(uc.Reasons[len(uc.Reasons)-1])
		case restart && isRunning:
			uc.Effect = EffectRestart
			stop("restart: " + strings.Join(uc.Reasons, "; "))
			start("restart")
		case restart || (reload && !isRunning):
			uc.Effect = EffectRestart
			start("changed while not running")
		case reload:
			uc.Effect = EffectReload
			b.add(Action{Op: OpReload, Target: u.Service, Unit: u.FileName, Reason: strings.Join(uc.Reasons, "; ")}, rank)
		case !isRunning:
			if uc.Effect == EffectNone {
				uc.Effect = EffectStart
			}
			uc.Reasons = append(uc.Reasons, "not running ("+st.ActiveState+")")
			start("not running")
		}
	case spec.Stopped:
		uc.After = "inactive"
		if isRunning {
			uc.Effect = EffectStop
			uc.Reasons = append(uc.Reasons, "desiredState is stopped")
			stop("desiredState is stopped")
		} else if create || restart || reload {
			uc.Effect = EffectUpdate
		}
	case spec.Oneshot:
		uc.After = st.ActiveState
		if create || restart || reload {
			uc.Effect = EffectRun
			if create {
				uc.Effect = EffectCreate
			}
			if isRunning {
				stop("run again with the new definition")
			}
			start("run the oneshot job")
			uc.After = "ran"
		}
	}
	b.p.Units = append(b.p.Units, uc)
}
