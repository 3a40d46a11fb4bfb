package plan

import (
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
)

// splitLeftovers removes from files what an interrupted apply left behind
// — every name layout.Leftover recognises, and in a config dir every
// version directory its ..data link does not name — with everything
// below them, and returns the topmost of those paths, sorted.
func splitLeftovers(files map[string]host.File) []string {
	var top []string
	for p, f := range files {
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			continue
		}
		dir, base := p[:i], p[i+1:]
		if layout.Leftover(base) {
			top = append(top, p)
			continue
		}
		if _, ok := layout.Version(base); ok && f.Mode.IsDir() && strings.HasPrefix(p, layout.ConfigRoot+"/") {
			if d, ok := files[dir+"/"+layout.DataLink]; ok && d.Link != "" && d.Link != base {
				top = append(top, p)
			}
		}
	}
	if len(top) == 0 {
		return nil
	}
	slices.Sort(top)
	kept := top[:0]
	for _, p := range top {
		if len(kept) > 0 && strings.HasPrefix(p, kept[len(kept)-1]+"/") {
			continue
		}
		kept = append(kept, p)
	}
	set := make(map[string]bool, len(kept))
	for _, p := range kept {
		set[p] = true
	}
	for p := range files {
		for a := p; ; {
			if set[a] {
				delete(files, p)
				break
			}
			i := strings.LastIndexByte(a, '/')
			if i <= 0 {
				break
			}
			a = a[:i]
		}
	}
	return kept
}
