package plan

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// Drop-ins. A unit's drop-ins are syslet's when its installed marker
// records their digests (FileDigest=, as for config files; an instance's
// are in its template's marker, the instance being a link). Only those are
// rewritten, held as drift when edited by hand, or removed once no spec
// has them; any other drop-in is someone else's and is never judged, but
// it takes part in what quadlet converts, so it takes part in what a
// change means: a unit is compared with its drop-ins merged in (as quadlet
// merges them, every directory it reads), before and after the apply, and
// a change is a restart or metadata-only by the same rules as one of the
// unit's own keys. The pin drop-in of a rollback is planned by pins.go and
// left out of both sides.

// dropIns are drop-in files by directory and name, relative to the unit
// directory ("web.container.d" → "10-limits.conf" → content): the host's
// (installed.dropIns), or what a plan writes (content) and removes (nil).
type dropIns map[string]map[string][]byte

func (d dropIns) set(rel string, data []byte) {
	dir, name, _ := strings.Cut(rel, "/")
	if d[dir] == nil {
		d[dir] = map[string][]byte{}
	}
	d[dir][name] = data
}

func (d dropIns) get(rel string) ([]byte, bool) {
	dir, name, _ := strings.Cut(rel, "/")
	data, ok := d[dir][name]
	return data, ok
}

// dropInFile reports whether the observed file at p is a drop-in of the
// unit directory, and its path relative to it: regular *.conf files one
// level down in a NAME.d directory, the pin left out.
func dropInFile(p string, f host.File) (string, bool) {
	rel, ok := strings.CutPrefix(p, layout.UnitDir+"/")
	if !ok || f.Link != "" || f.Mode.IsDir() {
		return "", false
	}
	dir, name, ok := strings.Cut(rel, "/")
	if !ok || strings.Contains(name, "/") || !strings.HasSuffix(dir, ".d") || !strings.HasSuffix(name, ".conf") || name == layout.PinFile {
		return "", false
	}
	return rel, true
}

// effective lists the drop-ins quadlet merges into fileName, in its order:
// of each file name the one in the most specific directory, by name. now
// are the host's; planned, when given, what the plan writes and removes
// (the units planned before, the unit at hand), as the apply leaves them.
func effective(now dropIns, fileName string, planned ...dropIns) []*unit.File {
	byName := map[string][]byte{}
	for _, dir := range layout.DropInDirs(fileName) {
		names := map[string]bool{}
		for n := range now[dir] {
			names[n] = true
		}
		for _, pl := range planned {
			for n, data := range pl[dir] {
				if data != nil && n != layout.PinFile {
					names[n] = true
				}
			}
		}
		for n := range names {
			if _, seen := byName[n]; seen {
				continue
			}
			data, ok := now[dir][n]
			for _, pl := range planned {
				if d, in := pl[dir][n]; in {
					data, ok = d, d != nil
				}
			}
			if ok {
				byName[n] = data
			}
		}
	}
	var out []*unit.File
	for _, n := range slices.Sorted(maps.Keys(byName)) {
		if f, err := unit.Parse(byName[n]); err == nil {
			out = append(out, f)
		}
	}
	return out
}

// hasDropIns reports whether any drop-in applies to fileName now or after
// the apply; when none does, a unit is compared on its own.
func hasDropIns(now dropIns, fileName string, planned ...dropIns) bool {
	dirs := layout.DropInDirs(fileName)
	for _, d := range dirs {
		if len(now[d]) > 0 {
			return true
		}
		for _, pl := range planned {
			for n, data := range pl[d] {
				if data != nil && n != layout.PinFile {
					return true
				}
			}
		}
	}
	return false
}

// merged is a unit file with the drop-ins that apply to fileName merged
// in, as they are now (after false) or after the apply, planned being
// what the plan writes and removes.
func merged(now dropIns, base *unit.File, fileName string, after bool, planned ...dropIns) *unit.File {
	if !hasDropIns(now, fileName, planned...) {
		return base
	}
	if !after {
		planned = nil
	}
	return unit.Merge(base, effective(now, fileName, planned...)...)
}

// planDropIns plans the drop-ins of a desired unit: each written where it
// differs from the host, and the drop-ins owner's marker records for the
// unit that no spec has any more removed. owner is the installed unit
// whose marker records them (the unit itself, or an instance's
// template), nil when there is none. A drop-in of the same name that is
// not syslet's is taken over only when it means what the spec says, as a
// unit is. It plans them into the unit's plan (what it writes and
// removes: up.dropIns) and reports whether any drop-in file changes.
func (in *inputs) planDropIns(u *render.Unit, owner *installedUnit, up *unitPlan) (changed bool) {
	rank := kindRank(u.Kind)
	var recorded map[string]string
	if owner != nil && owner.managed {
		recorded = owner.recorded
	}
	if len(u.DropIns) == 0 && len(recorded) == 0 {
		return false // nothing to write or remove (almost every unit)
	}
	cur := in.have.dropIns
	plan := func(rel string, data []byte) {
		if up.dropIns == nil {
			up.dropIns = dropIns{}
		}
		up.dropIns.set(rel, data)
	}
	want := map[string]bool{}
	for _, d := range u.DropIns {
		rel := d.Rel()
		want[d.Path] = true
		old, exists := cur.get(rel)
		if exists && bytes.Equal(old, d.Content) {
			plan(rel, d.Content)
			continue
		}
		if exists && recorded[d.Path] == "" {
			if of, err := unit.Parse(old); err != nil || !unit.SameMeaning(of, d.File) {
				up.refusals = append(up.refusals, Refusal{Unit: u.FileName, Source: u.Origin.String(), Message: fmt.Sprintf(
					"%s exists on the host and is not syslet's (%s's marker does not record it), and it says something else than the spec's drop-in %s; syslet will not overwrite it (remove or rename it, or rename the spec's drop-in)",
					d.Path, u.FileName, d.Name)})
				continue
			}
			up.change.Reasons = append(up.change.Reasons, "drop-in "+d.Name+" taken over: it says what the spec says")
		}
		plan(rel, d.Content)
		fc := FileChange{Path: d.Path, Op: "+", Kind: render.DropInFile, Owner: u.FileName, NewMode: 0o644}
		reason := "new drop-in"
		if exists {
			fc.Op, fc.OldMode, reason = "~", 0o644, "drop-in changed"
		}
		fc.Diff = fileDiff(d.Path, installedDropIn(in.obs.Files, d.Path, old), exists, 0o644, d.Content, true)
		up.files = append(up.files, fc)
		up.add(Action{Op: OpWriteUnit, Target: d.Path, Unit: u.FileName, Payload: &Payload{Content: d.Content, Mode: 0o644}, Reason: reason}, rank)
		changed = true
	}
	dir := layout.UnitPath(layout.DropInDir(u.FileName)) + "/"
	for _, p := range slices.Sorted(maps.Keys(recorded)) {
		if !strings.HasPrefix(p, dir) || want[p] {
			continue
		}
		if in.removeDropIn(p, u.FileName, rank, "drop-in no longer in the spec", &up.part) {
			plan(strings.TrimPrefix(p, layout.UnitDir+"/"), nil)
			changed = true
		}
	}
	return changed
}

// installedDropIn is the installed drop-in at p as the host has it (its
// mode hides a private one's diff), or its recorded content when the host
// was not read.
func installedDropIn(files map[string]host.File, p string, recorded []byte) host.File {
	if f, ok := files[p]; ok && f.Mode.IsRegular() {
		return f
	}
	return host.File{Data: recorded, Mode: 0o644}
}

// removeDropIn removes a drop-in syslet wrote, if it is there, and with
// it its directory when that is left empty; it reports whether it was.
func (in *inputs) removeDropIn(p, unitFile string, rank int, why string, pt *part) bool {
	old, ok := in.have.dropIns.get(strings.TrimPrefix(p, layout.UnitDir+"/"))
	if !ok {
		return false
	}
	pt.files = append(pt.files, FileChange{Path: p, Op: "-", Kind: render.DropInFile, Owner: unitFile, OldMode: 0o644,
		Diff: fileDiff(p, installedDropIn(in.obs.Files, p, old), true, 0, nil, false)})
	pt.add(Action{Op: OpRemoveUnit, Target: p, Payload: &Payload{Root: layout.UnitDir}, Unit: unitFile, Reason: why}, rank)
	return true
}

// removeRecordedDropIns removes, for a unit no spec declares any more,
// the drop-ins its marker (or its template's) records in the directory of
// fileName (a template's: in its instances' directories too).
func (in *inputs) removeRecordedDropIns(owner *installedUnit, fileName string, all bool, rank int, pt *part) {
	if owner == nil || !owner.managed {
		return
	}
	dir := layout.UnitPath(layout.DropInDir(fileName)) + "/"
	for _, p := range slices.Sorted(maps.Keys(owner.recorded)) {
		if !strings.HasPrefix(p, layout.UnitDir+"/") || !all && !strings.HasPrefix(p, dir) {
			continue
		}
		in.removeDropIn(p, fileName, rank, "its unit is removed", pt)
	}
}

// desiredDropIns are the drop-ins the marker of a desired unit records:
// its own and, for a template, its instances' (by host path).
func desiredDropIns(out *render.Output, u *render.Unit) map[string][]byte {
	m := map[string][]byte{}
	for _, d := range u.DropIns {
		m[d.Path] = d.Content
	}
	if u.Template {
		for _, iu := range out.Units {
			if iu.Link == u.FileName {
				for _, d := range iu.DropIns {
					m[d.Path] = d.Content
				}
			}
		}
	}
	return m
}
