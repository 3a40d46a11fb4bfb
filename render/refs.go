package render

import (
	"path"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// Ref is a reference from one unit line to another quadlet unit
// ("data.volume", "net.network", "app.build").
type Ref struct {
	Target string // file name of the referenced unit
	Line   Line
}

// refs lists every reference a unit's lines make, in line order.
func (u *Unit) refs() []Ref { return refsOf(u.Lines) }

func refsOf(lines []Line) []Ref {
	var rs []Ref
	for _, l := range lines {
		for _, t := range lineRefs(l) {
			rs = append(rs, Ref{Target: t, Line: l})
		}
	}
	return rs
}

func isQuadletRef(s string) bool { return unit.IsQuadletFile(s) }

// lineRefs returns the unit file names a line refers to.
func lineRefs(l Line) []string {
	if !unit.QuadletSection(l.Section) {
		return nil
	}
	var out []string
	add := func(s string) {
		if isQuadletRef(s) {
			out = append(out, s)
		}
	}
	switch l.Key {
	case unit.KeyVolume:
		if src, _, ok := strings.Cut(l.Value, ":"); ok {
			add(src)
		}
	case unit.KeyNetwork:
		name, _, _ := strings.Cut(l.Value, ":")
		add(name)
	case unit.KeyImage, unit.KeyPod:
		add(l.Value)
	case unit.KeyMount:
		for _, kv := range strings.Split(l.Value, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if k == "source" || k == "src" {
				add(v)
			}
		}
	}
	return out
}

// mountDest returns the container path a Volume=, Mount= or Tmpfs= line
// mounts onto, or "" if it has none.
func mountDest(l Line) string {
	switch l.Key {
	case unit.KeyVolume:
		parts := strings.Split(l.Value, ":")
		if len(parts) == 1 {
			return parts[0] // anonymous volume
		}
		return parts[1]
	case unit.KeyTmpfs:
		d, _, _ := strings.Cut(l.Value, ":")
		return d
	case unit.KeyMount:
		for _, kv := range strings.Split(l.Value, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if k == "destination" || k == "dst" || k == "target" {
				return v
			}
		}
	}
	return ""
}

// SecretNames lists the podman secrets a [Container] Secret= value names.
// quadlet reads the value as a list of words, as systemd splits one, and
// each word is "NAME" or "NAME,type=env,target=VAR".
func SecretNames(value string) []string {
	var names []string
	for _, w := range unit.Words(value) {
		if n, _, _ := strings.Cut(w, ","); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// derive fills the facts the planner uses from the lines that reach the
// merged unit (drop-ins included), so quadlet semantics are interpreted
// in one place.
func (u *Unit) derive() {
	// One set for all the lists: a unit may name tens of thousands of
	// volumes or secrets, and each is added once, in line order.
	var seen map[string]bool // made on the first reference: most units have none
	appendOnce := func(s *[]string, kind, v string) {
		if seen == nil {
			seen = map[string]bool{}
		}
		if !seen[kind+"\x00"+v] {
			seen[kind+"\x00"+v] = true
			*s = append(*s, v)
		}
	}
	for _, r := range u.refs() {
		appendOnce(&u.uses().Requires, "r", r.Target)
		if r.Line.Key == unit.KeyPod && r.Line.Section == unit.Container {
			u.Pod = strings.TrimSuffix(r.Target, path.Ext(r.Target))
		}
	}
	if u.Uses != nil && len(u.Requires) > 1 {
		// In the table's order, each kind's in line order: the order the
		// plan gives the reasons a unit restarts in.
		slices.SortStableFunc(u.Requires, func(a, b string) int {
			return slices.Index(unit.Kinds, unit.KindOf(a)) - slices.Index(unit.Kinds, unit.KindOf(b))
		})
	}
	if u.Kind != spec.Container {
		return
	}
	if img, ok := u.Merged.Last(unit.Container, unit.KeyImage); ok {
		// As quadlet reads it: Image="localhost/app" names localhost/app.
		if img = unit.Unquoted(img); !isQuadletRef(img) {
			u.Image = img
		}
	}
	if v, ok := u.Merged.Last(unit.Container, unit.KeyAutoUpdate); ok {
		u.AutoUpdate = unit.Unquoted(v)
	}
	for _, l := range u.Lines {
		if l.Section == unit.Container && l.Key == unit.KeySecret {
			for _, n := range SecretNames(l.Value) {
				appendOnce(&u.uses().Secrets, "s", n)
			}
		}
	}
}
