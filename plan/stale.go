package plan

import (
	"path"
	"sort"

	"github.com/syslet/syslet/pkg/unit"
)

// gone are the installed units no spec declares any more, in the order
// their removals are planned: what runs before what it uses.
func (in *inputs) gone() []*installedUnit {
	// Only the units no spec declares are sorted (usually none of a big
	// set): sorting every installed unit, by lookups in the index, was a
	// tenth of planning against 106,888 of them.
	var gone []*installedUnit
	for n, iu := range in.have.units {
		if in.want.units[n] == nil {
			gone = append(gone, iu)
		}
	}
	sort.Slice(gone, func(i, j int) bool {
		a, c := gone[i], gone[j]
		if a.kind != c.kind {
			return kindRank(a.kind) > kindRank(c.kind)
		}
		if a.name != c.name {
			return a.name < c.name
		}
		return a.fileName < c.fileName // a template and its instances
	})
	return gone
}

// stale plans one installed unit no spec declares any more, after the
// units before (which tell it nothing; their plans leave it room). roots
// are the files roots desired units keep (rootsOf). Its parse is held
// only while its removal is planned.
func (in *inputs) stale(iu *installedUnit, roots map[string]string, before *decided) (up unitPlan) {
	iu.holding(func() { up = in.staleOne(iu, roots, before.next(UnitChange{})) })
	return up
}

func (in *inputs) staleOne(iu *installedUnit, roots map[string]string, up unitPlan) unitPlan {
	service := iu.service
	st := in.state(service, iu)
	up.change = UnitChange{FileName: iu.fileName, Path: iu.path, Service: service, Kind: iu.kind, needReload: st.NeedDaemonReload, Before: beforeState(st), After: beforeState(st),
		Template: iu.template, Instance: iu.instance}
	uc := &up.change
	if iu.template {
		uc.Before, uc.After = "-", "-"
	}
	switch {
	case !iu.managed:
		uc.Effect = EffectIgnore
		msg := "not managed by syslet (no [X-Syslet] marker): left alone"
		if iu.link != "" {
			msg = "a link to " + iu.link + " that its marker does not list as syslet's instance: left alone"
		}
		up.notes = append(up.notes, Note{Unit: iu.fileName, Message: msg})
	case iu.link == "" && in.heldStale(iu, &up):
	case !iu.removalAllowed():
		uc.Effect = EffectKeep
		uc.Reasons = []string{"no spec declares it, but its installed marker says RemovalAllowed=false"}
		up.notes = append(up.notes, Note{Unit: iu.fileName, Message: "kept: no spec declares it, but its installed marker says RemovalAllowed=false"})
	default:
		uc.Effect, uc.After = EffectRemove, "removed"
		uc.Reasons = []string{"no spec declares it"}
		if iu.link != "" {
			uc.Reasons = []string{"instance " + iu.instance + " of " + iu.link + ": no spec lists it any more"}
		} else {
			uc.perm, uc.removed = iu.perm, iu.data
		}
		if iu.template {
			uc.After = "-"
		}
		rank := kindRank(iu.kind)
		if !iu.template && (running(st) || st.Failed()) {
			up.add(Action{Op: OpStop, Target: service, Unit: iu.fileName, Reason: "removed"}, rank)
		}
		up.add(Action{Op: OpRemoveUnit, Target: iu.path, Unit: iu.fileName, Reason: uc.Reasons[0]}, rank)
		if iu.link != "" {
			in.removeRecordedDropIns(in.have.units[iu.link], iu.fileName, false, rank, &up.part)
		} else {
			in.removeRecordedDropIns(iu, iu.fileName, true, rank, &up.part)
		}
		unpinStale(iu, in.obs, rank, &up.part)
		if dir := filesRoot(iu.kind, iu.name); iu.link == "" && dir != "" && !dirInUse(roots, dir, iu.fileName) {
			if _, ok := in.obs.Files[dir]; ok {
				up.add(Action{Op: OpRemoveFile, Target: dir, Payload: &Payload{Root: path.Dir(dir)}, Unit: iu.fileName, Reason: "its unit is removed"}, rank)
			}
		}
		if res := iu.resourceName(); res != "" {
			switch keep := in.keepResource(iu, res); {
			case keep != "":
				uc.Reasons = append(uc.Reasons, keep)
				up.notes = append(up.notes, Note{Unit: iu.fileName, Message: keep, Kept: true})
			case iu.reclaimDelete():
				up.add(Action{Op: deleteOp[iu.kind.Quadlet().Object], Target: res, Unit: iu.fileName, Reason: "reclaimPolicy Delete", Payload: noBackup(iu)}, rank)
				uc.Reasons = append(uc.Reasons, "reclaimPolicy Delete: "+res+" is deleted")
			default:
				uc.Reasons = append(uc.Reasons, "reclaimPolicy Retain: "+res+" is kept in podman")
			}
		}
	}
	return up
}

// deleteOp is the op that deletes each kind of podman object a unit's
// kind may make and outlive it (its Object).
var deleteOp = map[string]Op{unit.ObjectVolume: OpDeleteVolume, unit.ObjectNetwork: OpDeleteNetwork, unit.ObjectImage: OpDeleteImage}

// noBackup is the payload of a delete of iu's podman object when its
// installed marker says Backup=false (nil otherwise: the executor exports
// a volume before it deletes it).
func noBackup(iu *installedUnit) *Payload {
	if iu.backedUp() || iu.kind.Quadlet().Object != unit.ObjectVolume {
		return nil
	}
	return &Payload{NoBackup: true}
}

// kindOfRoot is the kind whose units keep their files in root (its
// FilesRoot), or nil.
func kindOfRoot(root string) *unit.Kind {
	for _, k := range unit.Kinds {
		if k.FilesRoot != "" && k.FilesRoot == root {
			return k
		}
	}
	return nil
}

// dirInUse reports whether a desired unit other than fileName keeps dir
// (roots: rootsOf): a container web and a template web@.container share
// a config directory's name, and the one that stays keeps it.
func dirInUse(roots map[string]string, dir, fileName string) bool {
	owner, ok := roots[dir]
	return ok && owner != fileName
}

// orphans removes config and build directories that belong to no unit at
// all, desired or installed (left behind by an interrupted run or an
// older syslet).
func (in *inputs) orphans() []Action {
	var pt part
	for p, f := range in.obs.Files {
		if !f.Mode.IsDir() {
			continue
		}
		k := kindOfRoot(path.Dir(p))
		if k == nil {
			continue
		}
		// A container's config dir may belong to a template as well.
		fn := path.Base(p) + k.Ext()
		tn := path.Base(p) + "@" + k.Ext()
		if in.want.units[fn] != nil || in.have.units[fn] != nil || in.want.units[tn] != nil || in.have.units[tn] != nil {
			continue
		}
		pt.add(Action{Op: OpRemoveFile, Target: p, Payload: &Payload{Root: path.Dir(p)}, Reason: "no unit owns it"}, 9)
	}
	return pt.actions
}
