package plan

import (
	"path"
	"sort"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// stale plans installed units that no spec declares any more.
func (b *builder) stale() {
	names := make([]string, 0, len(b.inst))
	for n := range b.inst {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, c := b.inst[names[i]], b.inst[names[j]]
		if a.kind != c.kind {
			return kindRank(a.kind) > kindRank(c.kind)
		}
		return a.name < c.name
	})
	for _, n := range names {
		iu := b.inst[n]
		if b.desired[n] != nil {
			continue
		}
		service := layout.Service(iu.fileName)
		b.p.Future[iu.fileName] = iu.data
		st := b.state(service, iu)
		uc := UnitChange{FileName: iu.fileName, Path: iu.path, Service: service, Kind: iu.kind, State: st, Before: beforeState(st), After: beforeState(st)}
		switch {
		case !iu.managed:
			uc.Effect = EffectIgnore
			b.p.Notes = append(b.p.Notes, Note{Unit: iu.fileName, Message: "not managed by syslet (no [X-Syslet] marker): left alone"})
		case b.heldStale(iu, &uc):
		case !iu.removalAllowed():
			uc.Effect = EffectKeep
			uc.Reasons = []string{"no spec declares it, but its installed marker says RemovalAllowed=false"}
			b.p.Notes = append(b.p.Notes, Note{Unit: iu.fileName, Message: "kept: no spec declares it, but its installed marker says RemovalAllowed=false"})
		default:
			delete(b.p.Future, iu.fileName)
			uc.Effect, uc.After = EffectRemove, "removed"
			uc.Reasons = []string{"no spec declares it"}
			uc.Keys = diffKeys(iu.file, &unit.File{})
			rank := kindRank(iu.kind)
			if running(st) || st.Failed() {
				b.add(Action{Op: OpStop, Target: service, Unit: n, Reason: "removed"}, rank)
			}
			b.add(Action{Op: OpRemoveUnit, Target: iu.path, Unit: n, Reason: "no spec declares it"}, rank)
			b.unpinStale(iu, rank)
			var dir string
			switch iu.kind {
			case spec.Container:
				dir = layout.ConfigDirOf(iu.name)
			case spec.Build:
				dir = layout.BuildDirOf(iu.name)
			}
			if _, ok := b.obs.Files[dir]; ok && dir != "" {
				b.add(Action{Op: OpRemoveFile, Target: dir, Root: path.Dir(dir), Unit: n, Reason: "its unit is removed"}, rank)
			}
			if res := iu.resourceName(); res != "" && iu.kind != spec.Container {
				switch keep := b.keepResource(iu, res); {
				case keep != "":
					uc.Reasons = append(uc.Reasons, keep)
					b.p.Notes = append(b.p.Notes, Note{Unit: n, Message: keep})
				case iu.reclaimDelete():
					op := map[spec.Kind]Op{spec.Volume: OpDeleteVolume, spec.Network: OpDeleteNetwork, spec.Build: OpDeleteImage}[iu.kind]
					b.add(Action{Op: op, Target: res, Unit: n, Reason: "reclaimPolicy Delete"}, rank)
					uc.Reasons = append(uc.Reasons, "reclaimPolicy Delete: "+res+" is deleted")
				default:
					uc.Reasons = append(uc.Reasons, "reclaimPolicy Retain: "+res+" is kept in podman")
				}
			}
		}
		b.p.Units = append(b.p.Units, uc)
	}
}

// orphans removes config and build directories that belong to no unit at
// all, desired or installed (left behind by an interrupted run or an
// older syslet).
func (b *builder) orphans() {
	for p, f := range b.obs.Files {
		if !f.Mode.IsDir() {
			continue
		}
		var ext string
		switch path.Dir(p) {
		case layout.ConfigRoot:
			ext = ".container"
		case layout.BuildRoot:
			ext = ".build"
		default:
			continue
		}
		fn := path.Base(p) + ext
		if b.desired[fn] != nil || b.inst[fn] != nil {
			continue
		}
		b.add(Action{Op: OpRemoveFile, Target: p, Root: path.Dir(p), Reason: "no unit owns it"}, 9)
	}
}
