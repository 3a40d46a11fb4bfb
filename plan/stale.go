package plan

import (
	"path"
	"slices"
	"sort"

	"github.com/syslet/syslet/pkg/unit"
)

// stale plans installed units that no spec declares any more.
func (b *builder) stale() {
	// Only the units no spec declares are sorted (usually none of a big
	// set): sorting every installed unit, by lookups in b.inst, was a
	// tenth of planning against 106,888 of them.
	var gone []*installedUnit
	for n, iu := range b.inst {
		if b.desired[n] == nil {
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
	// Room for them made once: a unit change each, and about three
	// actions (stop, remove, delete). Grown a quarter at a time instead, a
	// removal of a hundred thousand units copied its plan some twenty
	// times over, each time into memory fresh from the kernel.
	b.p.Units = slices.Grow(b.p.Units, len(gone))
	b.p.Actions = slices.Grow(b.p.Actions, 3*len(gone))
	// Each unit's parse is held only while its removal is planned.
	for _, iu := range gone {
		iu.holding(func() { b.staleOne(iu) })
	}
}

// staleOne plans one installed unit no spec declares any more.
func (b *builder) staleOne(iu *installedUnit) {
	service := iu.service
	st := b.state(service, iu)
	uc := UnitChange{FileName: iu.fileName, Path: iu.path, Service: service, Kind: iu.kind, needReload: st.NeedDaemonReload, Before: beforeState(st), After: beforeState(st),
		Template: iu.template, Instance: iu.instance}
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
		b.p.Notes = append(b.p.Notes, Note{Unit: iu.fileName, Message: msg})
	case iu.link == "" && b.heldStale(iu, &uc):
	case !iu.removalAllowed():
		uc.Effect = EffectKeep
		uc.Reasons = []string{"no spec declares it, but its installed marker says RemovalAllowed=false"}
		b.p.Notes = append(b.p.Notes, Note{Unit: iu.fileName, Message: "kept: no spec declares it, but its installed marker says RemovalAllowed=false"})
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
			b.add(Action{Op: OpStop, Target: service, Unit: iu.fileName, Reason: "removed"}, rank)
		}
		b.add(Action{Op: OpRemoveUnit, Target: iu.path, Unit: iu.fileName, Reason: uc.Reasons[0]}, rank)
		if iu.link != "" {
			b.removeRecordedDropIns(b.inst[iu.link], iu.fileName, false, rank)
		} else {
			b.removeRecordedDropIns(iu, iu.fileName, true, rank)
		}
		b.unpinStale(iu, rank)
		if dir := filesRoot(iu.kind, iu.name); iu.link == "" && dir != "" && !b.dirInUse(dir, iu.fileName) {
			if _, ok := b.obs.Files[dir]; ok {
				b.add(Action{Op: OpRemoveFile, Target: dir, Payload: &Payload{Root: path.Dir(dir)}, Unit: iu.fileName, Reason: "its unit is removed"}, rank)
			}
		}
		if res := iu.resourceName(); res != "" {
			switch keep := b.keepResource(iu, res); {
			case keep != "":
				uc.Reasons = append(uc.Reasons, keep)
				b.p.Notes = append(b.p.Notes, Note{Unit: iu.fileName, Message: keep})
			case iu.reclaimDelete():
				b.add(Action{Op: deleteOp[iu.kind.Quadlet().Object], Target: res, Unit: iu.fileName, Reason: "reclaimPolicy Delete", Payload: noBackup(iu)}, rank)
				uc.Reasons = append(uc.Reasons, "reclaimPolicy Delete: "+res+" is deleted")
			default:
				uc.Reasons = append(uc.Reasons, "reclaimPolicy Retain: "+res+" is kept in podman")
			}
		}
	}
	b.p.Units = append(b.p.Units, uc)
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

// dirInUse reports whether a desired unit other than fileName keeps dir:
// a container web and a template web@.container share a config
// directory's name, and the one that stays keeps it.
func (b *builder) dirInUse(dir, fileName string) bool {
	if b.roots == nil {
		b.roots = map[string]string{}
		for _, u := range b.out.Units {
			if r := filesRoot(u.Kind, u.Name); r != "" && u.Link == "" {
				b.roots[r] = u.FileName
			}
		}
	}
	owner, ok := b.roots[dir]
	return ok && owner != fileName
}

// orphans removes config and build directories that belong to no unit at
// all, desired or installed (left behind by an interrupted run or an
// older syslet).
func (b *builder) orphans() {
	for p, f := range b.obs.Files {
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
		if b.desired[fn] != nil || b.inst[fn] != nil || b.desired[tn] != nil || b.inst[tn] != nil {
			continue
		}
		b.add(Action{Op: OpRemoveFile, Target: p, Payload: &Payload{Root: path.Dir(p)}, Reason: "no unit owns it"}, 9)
	}
}
