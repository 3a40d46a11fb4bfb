package plan

import (
	"fmt"
	"strings"

	"github.com/syslet/syslet/render"
)

// MassRemoval is the removal guard's threshold: removing removed of the
// managed units syslet finds installed is a mass removal when it takes all
// of them, or more than half of them when there are more than four. Such a
// plan is far more often an upstream mistake (a truncated export, the
// wrong directory, an empty push) than an intent.
func MassRemoval(managed, removed int) bool {
	switch {
	case removed <= 0 || managed <= 0:
		return false
	case removed >= managed:
		return true
	}
	return managed > 4 && 2*removed > managed
}

// GuardRemovals refuses the plan when it is a mass removal (see
// MassRemoval), naming the first units that would go (Some). The caller
// skips it when the operator asked for the removals (--allow-removals).
func (p *Plan) GuardRemovals() {
	managed, removed := 0, 0
	var first []string
	for _, u := range p.Units {
		switch u.Effect {
		case EffectCreate, EffectIgnore:
			continue // not installed, or not syslet's
		case EffectRemove:
			if removed < Listed {
				first = append(first, u.FileName)
			}
			removed++
		}
		managed++
	}
	if !MassRemoval(managed, removed) {
		return
	}
	p.Refusals = append(p.Refusals, Refusal{Unit: "removals", Message: fmt.Sprintf(
		"the plan removes %d of the %d managed units (%s); that looks like missing specs rather than an intent, so nothing is removed: pass --allow-removals to remove them",
		removed, managed, Some(first, removed))})
}

// linkRefusals refuses every desired unit, file and config dir whose path,
// or a directory on the way to it, is a symlink on the host. The file
// layer would refuse to write through it anyway; finding it here makes
// --diff say so and keeps an apply from stopping half-way. (Links inside a
// config dir — ..data and the per-file links — are syslet's own and lie
// below the paths checked.)
func linkRefusals(out *render.Output, obs *Observed) []Refusal {
	var refs []Refusal
	owners := make(map[string]*render.Unit, len(out.Units))
	for _, u := range out.Units {
		owners[u.FileName] = u
	}
	// Every path and ancestor is looked at once: thousands of units share
	// the same few directories. A path seen before had its ancestors seen
	// too, so the walk up stops there.
	seen := make(map[string]bool, len(out.Units)+len(out.Files)+len(out.Dirs))
	check := func(p, owner string, dir bool) {
		for a := p; a != "/" && a != "." && a != ""; a = parentDir(a) {
			if seen[a] {
				return
			}
			seen[a] = true
			f, ok := obs.Files[a]
			if !ok || f.Link == "" {
				continue
			}
			source := ""
			if u := owners[owner]; u != nil {
				source = u.Origin.String()
			}
			refs = append(refs, Refusal{Unit: owner, Source: source, Message: fmt.Sprintf(
				"%s is a symlink (to %s) where syslet expects a %s; syslet never writes through symlinks in the trees it manages: remove it or replace it with a real %s",
				a, f.Link, expects(a, p, dir), expects(a, p, dir))})
		}
	}
	for _, u := range out.Units {
		if f, ok := obs.Files[u.Path]; ok && u.Link != "" && f.Link == u.Link {
			seen[u.Path] = true // an instance's own link
		}
		check(u.Path, u.FileName, false)
		for _, d := range u.DropIns {
			check(d.Path, u.FileName, false)
		}
	}
	for _, f := range out.Files {
		check(f.Path, f.Owner, false)
	}
	for _, d := range out.Dirs {
		check(d.Path, d.Owner, true)
	}
	return refs
}

// parentDir is path.Dir for the clean absolute paths render produces,
// without path.Clean's work.
func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

func expects(a, leaf string, leafDir bool) string {
	if a == leaf && !leafDir {
		return "file"
	}
	return "directory"
}
