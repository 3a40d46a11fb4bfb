package plan

import (
	"slices"
	"sort"
	"strings"

	"github.com/syslet/syslet/pkg/layout"
)

func (b *builder) finish() {
	for _, a := range b.p.Actions {
		if a.Op == OpWriteUnit || a.Op == OpRemoveUnit {
			b.add(Action{Op: OpDaemonReload, Target: "systemd", Reason: "unit files changed"}, 0)
			break
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
		if f.Link != "" {
			continue
		}
		b.p.Current[rel] = f.Data
		if _, ok := b.inst[rel]; !ok {
			b.p.Future[rel] = f.Data
		}
	}
	sort.SliceStable(b.p.Actions, func(i, j int) bool {
		ai, aj := b.p.Actions[i], b.p.Actions[j]
		if ai.Step != aj.Step {
			return ai.Step < aj.Step
		}
		if ai.Step == StepStop {
			return ai.rank > aj.rank // containers stop before the volumes and networks they use
		}
		return ai.rank < aj.rank
	})
	slices.SortStableFunc(b.p.Units, func(a, c UnitChange) int {
		if a.Kind != c.Kind {
			return kindRank(a.Kind) - kindRank(c.Kind)
		}
		return strings.Compare(a.FileName, c.FileName)
	})
	slices.SortStableFunc(b.p.Files, func(a, c FileChange) int { return strings.Compare(a.Path, c.Path) })
}
