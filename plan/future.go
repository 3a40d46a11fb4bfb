package plan

import (
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/redact"
)

// finish pulls each image once, adds the one daemon-reload, hides what
// key diffs must not show (installed: the units as read, whose modes
// say), and puts actions, units and files in their order.
func finish(p *Plan, installed map[string]*installedUnit) {
	p.Actions = pullOnce(p.Actions)
	var reload part
	if p.WritesUnits() {
		reload.add(Action{Op: OpDaemonReload, Target: "systemd", Reason: "unit files changed"}, 0)
	} else {
		for _, u := range p.Units {
			if u.needReload && u.Effect != EffectIgnore {
				reload.add(Action{Op: OpDaemonReload, Target: "systemd", Reason: "systemd has not loaded the current unit file of " + u.Service}, 0)
				break
			}
		}
	}
	p.Actions = append(p.Actions, reload.actions...)
	for i := range p.Units {
		u := &p.Units[i]
		if len(u.Keys) == 0 {
			continue
		}
		private, mode := false, uint32(0)
		if iu := installed[u.FileName]; iu != nil {
			mode = iu.perm
			private = redact.Private(mode)
		}
		redactKeys(u.Keys, private, mode)
	}
	sortActions(p.Actions)
	slices.SortStableFunc(p.Units, func(a, c UnitChange) int {
		if a.Kind != c.Kind {
			return kindRank(a.Kind) - kindRank(c.Kind)
		}
		return strings.Compare(a.FileName, c.FileName)
	})
	slices.SortStableFunc(p.Files, func(a, c FileChange) int { return strings.Compare(a.Path, c.Path) })
}

// pullOnce keeps the first pull of each image the units planned: several
// containers running one image that is missing or moved need it pulled
// once, as the first of them says (an image unit with its settings).
func pullOnce(as []Action) []Action {
	var pulled map[string]bool
	return slices.DeleteFunc(as, func(a Action) bool {
		if a.Op != OpPull {
			return false
		}
		if pulled[a.Target] {
			return true
		}
		if pulled == nil {
			pulled = map[string]bool{}
		}
		pulled[a.Target] = true
		return false
	})
}

// UnitSets are the unit directory as the plan found it (current) and as
// its apply leaves it (future): every file in it and below it by its path
// relative to it, a link to a unit file beside it read as that file, for
// staging to tell the problems an apply would cause from those the host
// already has. The future set is the current one with the plan's unit
// writes, links and removals made, derived when staging asks rather
// than kept beside the plan: for a hundred thousand units the two maps
// were 14 MB held from the planning on.
func UnitSets(obs *Observed, p *Plan) (current, future map[string][]byte) {
	current = map[string][]byte{}
	links := map[string]string{} // link → the file beside it that it reads as
	for abs, f := range obs.Files {
		rel, ok := strings.CutPrefix(abs, layout.UnitDir+"/")
		if !ok || f.Mode.IsDir() {
			continue
		}
		data := f.Data
		if f.Link != "" {
			t, ok := obs.Files[path.Join(path.Dir(abs), f.Link)]
			if strings.Contains(f.Link, "/") || !ok || t.Link != "" || t.Mode.IsDir() {
				continue
			}
			data, links[rel] = t.Data, path.Join(path.Dir(rel), f.Link)
		}
		current[rel] = data
	}
	future = maps.Clone(current)
	for i := range p.Actions {
		a := &p.Actions[i]
		rel, ok := strings.CutPrefix(a.Target, layout.UnitDir+"/")
		if !ok {
			continue
		}
		switch a.Op {
		case OpWriteUnit:
			future[rel] = a.Data().Content
			delete(links, rel)
		case OpLinkUnit:
			links[rel] = path.Join(path.Dir(rel), a.Data().Link)
		case OpRemoveUnit:
			delete(future, rel)
			delete(links, rel)
		}
	}
	for rel, target := range links {
		if data, ok := future[target]; ok {
			future[rel] = data
		} else {
			delete(future, rel)
		}
	}
	return current, future
}
