package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// Each desired unit is planned by one function of the inputs and of what
// the units planned before it told (decided), returning the unit's plan:
// resource for the kinds whose service makes a podman object once,
// running for the kinds whose service runs something. Both begin with
// compare (the unit file and its drop-ins against the host's), then add
// what the kind's own checks find, then decide what happens to the
// service.

// resource plans a unit whose service makes a podman object once
// (volumes, networks, builds, image units, artifacts): what a change does
// is its kind's OnChange.
func (in *inputs) resource(u *render.Unit, before *decided) unitPlan {
	up, c := in.compare(u, before, nil)
	if c.settled {
		return up
	}
	iu, changed, meta := c.iu, c.changed, c.meta
	uc := &up.change
	st := in.state(u.Service, iu)
	uc.needReload, uc.Before, uc.After = st.NeedDaemonReload, beforeState(st), st.ActiveState
	rank := kindRank(u.Kind)
	k := u.Kind.Quadlet()
	contextChanged := k.OnChange == unit.ChangeRebuild && in.files(u, &up)

	switch {
	case iu == nil:
		uc.Effect = EffectCreate
		uc.Reasons = append(uc.Reasons, "new "+string(u.Kind))
		uc.After = "active"
		if k.OnChange == unit.ChangeRebuild {
			uc.After = "built"
		}
		pullUnit(u, "new "+string(u.Kind)+" unit", &up)
		up.add(Action{Op: OpStart, Target: u.Service, Unit: u.FileName, Reason: "create " + string(u.Kind) + " " + u.Resource}, rank)
	case changed && k.HoldsData && in.opts.Rollback:
		// A rollback changes no data it need not: the volume stays as
		// the run rolled back left it, and the rollback says so.
		up.unwrite(u.Path)
		uc.Write, uc.Effect = false, EffectKeep
		uc.Reasons = append(uc.Reasons, "not restored: a rollback recreates no "+string(u.Kind)+", so "+string(u.Kind)+" "+u.Resource+" keeps the options it has now ("+summarizeKeys(uc.Keys)+"); the next apply of these specs recreates it")
		up.notes = append(up.notes, Note{Unit: u.FileName, Message: uc.Reasons[len(uc.Reasons)-1], Kept: true})
	case changed && k.HoldsData:
		if !iu.removalAllowed() || !iu.reclaimDelete() {
			up.refusals = append(up.refusals, Refusal{Unit: u.FileName, Source: uc.Source, Message: fmt.Sprintf(
				"%s %s changed (%s), which needs the %s deleted and created again, but its installed marker forbids that (RemovalAllowed=%t, ReclaimPolicy=%s); to recreate it, first apply the spec unchanged with removalAllowed true and reclaimPolicy Delete",
				u.Kind, u.Resource, summarizeKeys(uc.Keys), u.Kind, iu.removalAllowed(), markerPolicy(iu))})
			uc.Effect = EffectRecreate
			break
		}
		fallthrough
	case changed && k.OnChange == unit.ChangeRecreate:
		uc.Effect = EffectRecreate
		uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
		up.told.restarted = true
		if running(st) {
			up.add(Action{Op: OpStop, Target: u.Service, Unit: u.FileName, Reason: "recreate " + string(u.Kind)}, rank)
		}
		up.add(Action{Op: deleteOp[k.Object], Target: iu.resourceName(), Unit: u.FileName, Reason: "recreate with new options", Payload: noBackup(iu)}, rank)
		in.recreated(u, iu, &up, rank)
		uc.After = "active"
	case k.OnChange == unit.ChangePull:
		in.pulled(u, iu, &up, changed, meta)
	case k.OnChange == unit.ChangeRebuild && (changed || contextChanged || !in.imagePresent(u.Resource)):
		uc.Effect = EffectRebuild
		switch {
		case changed:
			uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
		case contextChanged:
			uc.Reasons = append(uc.Reasons, "build context changed")
		default:
			uc.Reasons = append(uc.Reasons, "image "+u.Resource+" missing")
		}
		up.told.restarted = true
		up.add(Action{Op: OpStart, Target: u.Service, Unit: u.FileName, Reason: "build " + u.Resource}, rank)
		uc.After = "built"
	case meta && adoptedBuild(u, uc.Keys):
		uc.Effect = EffectMetadata
		uc.Reasons = append(uc.Reasons, "written by the earlier syslet: SetWorkingDirectory added, image "+u.Resource+" kept")
	case meta:
		uc.Effect = EffectMetadata
		uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
	}
	return up
}

// unwrite takes back the unit write planned for path.
func (up *unitPlan) unwrite(path string) {
	for i := len(up.actions) - 1; i >= 0; i-- {
		if a := up.actions[i]; a.Op == OpWriteUnit && a.Target == path {
			up.actions = slices.Delete(up.actions, i, i+1)
			return
		}
	}
}

// causes are why the service of a unit that runs must change, as the
// unit's planning found them.
type causes struct {
	create  bool // not installed yet
	restart bool // what it runs changed
	reload  bool // only its config dirs changed: reloaded in place
	meta    bool // only its metadata changed
	// socket says why the container's socket unit itself changes (new,
	// changed, removed, not listening); down names a cause that needs the
	// container down before the unit files are written (what it requires
	// recreated, its pod restarted). Either makes a socket-held container
	// a stop-start, its socket closing with it (strategy.go).
	socket, down string
}

// running plans a unit whose service runs something: a container (a
// template's instances each on their own; the template, which has no
// service, only as files), a pod or a kube unit. secrets are the podman
// secrets this plan creates or replaces.
func (in *inputs) running(u *render.Unit, before *decided, secrets map[string]bool) unitPlan {
	read := in.readDirs(in.want.dirs[u.FileName])
	up, c := in.compare(u, before, read)
	if c.settled {
		return up
	}
	iu := c.iu
	uc := &up.change
	st := in.state(u.Service, iu)
	uc.needReload, uc.Before = st.NeedDaemonReload, beforeState(st)
	why := causes{create: iu == nil, restart: c.changed, meta: c.meta}
	if c.changed {
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
	filesChanged := u.Link == "" && in.files(u, &up)
	why.socket = in.socketChange(u, iu != nil, &up)
	updated, lifted := in.update(u, &up)
	why.restart = why.restart || filesChanged || updated
	if !u.Template {
		if again, pinOnly := in.pin(u, lifted, &up); again {
			why.restart = true
		} else if pinOnly {
			why.meta = true
		}
	}
	why.reload = in.dirs(u, read, &up)
	if u.Template {
		// The template's own service is never started: its instances
		// restart or reload for what changed in it.
		up.told.filesChanged, up.told.dirsChanged = filesChanged, why.reload
		uc.Before, uc.After = "-", "-"
		switch {
		case iu == nil:
			uc.Effect = EffectCreate
			uc.Reasons = append(uc.Reasons, "new template")
		case why.restart || why.reload:
			uc.Effect = EffectUpdate
		case why.meta:
			uc.Effect = EffectMetadata
			uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
		}
		return up
	}
	restart, reload, reasons := dependencies(u, iu != nil, before, secrets)
	why.down = downCause(u, before)
	why.restart, why.reload = why.restart || restart, why.reload || reload
	uc.Reasons = append(uc.Reasons, reasons...)
	if why.meta && !why.restart && !why.reload {
		uc.Effect = EffectMetadata
		if len(uc.Keys) > 0 || len(uc.Reasons) == 0 {
			uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
		}
	}
	if why.create {
		what := "new " + string(u.Kind)
		if u.Instance != "" {
			what = "new instance " + u.Instance + " of " + u.Link
		}
		uc.Reasons = append(uc.Reasons, what)
	}
	if u.Kind.Quadlet().Restarts != "" && !why.create && why.restart && running(st) {
		// Its restart restarts the units that require it (a pod's
		// containers).
		up.told.restarted = true
	}
	in.service(u, st, why, &up)
	return up
}

// dependencies are why u changes for the units it depends on: its
// template's config files or dirs changed (restart, reload), what it
// requires was recreated, rebuilt, pulled again or restarted, a secret it
// reads was replaced (restart). A restart of what runs (its pod, to which
// it is bound) only stops a unit that is there already (installed).
func dependencies(u *render.Unit, installed bool, before *decided, secrets map[string]bool) (restart, reload bool, reasons []string) {
	if u.Link != "" {
		t := before.told[u.Link]
		if t.filesChanged {
			restart = true
			reasons = append(reasons, "config files of "+u.Link+" changed")
		}
		if t.dirsChanged {
			reload = true
			reasons = append(reasons, "config dirs of "+u.Link+" changed")
		}
	}
	for _, r := range u.Used().Requires {
		if rk := unit.KindOf(r); before.told[r].restarted && rk.Restarts != "" && (installed || !rk.Runs()) {
			restart = true
			reasons = append(reasons, rk.RestartCause(r))
		}
	}
	for _, s := range u.Used().Secrets {
		if secrets[s] && installed {
			restart = true
			reasons = append(reasons, "secret "+s+" changed")
		}
	}
	return restart, reload, reasons
}

// service decides what happens to the service of a unit that runs, by its
// desired state, whether it runs now (st) and why it changes: its effect,
// its state after the apply, and the stop, start and reload actions (a
// start pulling the image first when the store lacks it).
func (in *inputs) service(u *render.Unit, st host.UnitState, why causes, up *unitPlan) {
	uc := &up.change
	rank := kindRank(u.Kind)
	isRunning := running(st)
	stop := func(reason string) {
		up.add(Action{Op: OpStop, Target: u.Service, Unit: u.FileName, Reason: reason}, rank)
	}
	start := func(reason string) {
		if u.Image != "" && !in.imagePresent(u.Image) {
			up.add(Action{Op: OpPull, Target: u.Image, Unit: u.FileName, Reason: "not in the image store"}, 0)
		}
		up.add(Action{Op: OpStart, Target: u.Service, Unit: u.FileName, Reason: reason}, rank)
	}
	switch u.State {
	case spec.Running:
		uc.After = "active"
		switch {
		case why.create:
			uc.Effect = EffectCreate
			start(uc.Reasons[len(uc.Reasons)-1])
		case why.restart && isRunning:
			uc.Effect = EffectRestart
			uc.Replacement = replacement(u, why)
			in.replace(u, uc.Replacement, up)
		case why.restart || (why.reload && !isRunning):
			uc.Effect = EffectRestart
			start("changed while not running")
		case why.reload:
			uc.Effect = EffectReload
			up.add(Action{Op: OpReload, Target: u.Service, Unit: u.FileName, Reason: strings.Join(uc.Reasons, "; ")}, rank)
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
		} else if why.create || why.restart || why.reload {
			uc.Effect = EffectUpdate
		}
	case spec.Oneshot:
		uc.After = st.ActiveState
		if why.create || why.restart || why.reload {
			uc.Effect = EffectRun
			if why.create {
				uc.Effect = EffectCreate
			}
			if isRunning {
				stop("run again with the new definition")
			}
			start("run the oneshot job")
			uc.After = "ran"
		}
	}
}
