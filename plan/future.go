package plan

import (
	"path"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/redact"
)

func (b *builder) finish() {
	if b.p.WritesUnits() {
		b.add(Action{Op: OpDaemonReload, Target: "systemd", Reason: "unit files changed"}, 0)
	} else {
		for _, u := range b.p.Units {
			if u.needReload && u.Effect != EffectIgnore {
				b.add(Action{Op: OpDaemonReload, Target: "systemd", Reason: "systemd has not loaded the current unit file of " + u.Service}, 0)
				break
			}
		}
	}
	// Unit files syslet does not manage stay in the future set, as do
	// drop-ins and anything in subdirectories: staging must see what
	// systemd will see.
	for p, f := range b.obs.Files {
		if !strings.HasPrefix(p, layout.UnitDir+"/") || f.Mode.IsDir() {
			continue
		}
		rel := strings.TrimPrefix(p, layout.UnitDir+"/")
		data := f.Data
		if f.Link != "" {
			// A link to a unit file beside it (an instance's to its
			// template) is what the generator reads as that file.
			t, ok := b.obs.Files[path.Join(path.Dir(p), f.Link)]
			if strings.Contains(f.Link, "/") || !ok || t.Link != "" || t.Mode.IsDir() {
				continue
			}
			data = t.Data
		}
		b.p.Current[rel] = data
		if _, ok := b.inst[rel]; !ok {
			b.p.Future[rel] = data
		}
	}
	for rel, data := range b.dropIns {
		if data == nil {
			delete(b.p.Future, rel)
		} else {
			b.p.Future[rel] = data
		}
	}
	for i := range b.p.Units {
		u := &b.p.Units[i]
		private, mode := false, uint32(0)
		if iu := b.inst[u.FileName]; iu != nil {
			mode = iu.perm
			private = redact.Private(mode)
		}
		redactKeys(u.Keys, private, mode)
	}
	sortActions(b.p.Actions)
	slices.SortStableFunc(b.p.Units, func(a, c UnitChange) int {
		if a.Kind != c.Kind {
			return kindRank(a.Kind) - kindRank(c.Kind)
		}
		return strings.Compare(a.FileName, c.FileName)
	})
	slices.SortStableFunc(b.p.Files, func(a, c FileChange) int { return strings.Compare(a.Path, c.Path) })
}
