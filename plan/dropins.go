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

// currentDropIns is every drop-in file of the unit directory, by path
// relative to it ("web.container.d/10-limits.conf"), read once per plan:
// regular *.conf files one level down in a NAME.d directory, the pin left
// out.
func (b *builder) currentDropIns() map[string][]byte {
	if b.curDropIns != nil {
		return b.curDropIns
	}
	b.curDropIns, b.curDirs = map[string][]byte{}, map[string][]string{}
	for p, f := range b.obs.Files {
		rel, ok := strings.CutPrefix(p, layout.UnitDir+"/")
		if !ok || f.Link != "" || f.Mode.IsDir() {
			continue
		}
		dir, name, ok := strings.Cut(rel, "/")
		if !ok || strings.Contains(name, "/") || !strings.HasSuffix(dir, ".d") || !strings.HasSuffix(name, ".conf") || name == layout.PinFile {
			continue
		}
		b.curDropIns[rel] = f.Data
		b.curDirs[dir] = append(b.curDirs[dir], name)
	}
	return b.curDropIns
}

// futureDropIn is a drop-in as the apply leaves it: what the plan writes
// or removes, else what is there.
func (b *builder) futureDropIn(rel string) ([]byte, bool) {
	if d, ok := b.dropIns[rel]; ok {
		return d, d != nil
	}
	d, ok := b.currentDropIns()[rel]
	return d, ok
}

// effective lists the drop-ins quadlet merges into fileName, in its order:
// of each file name the one in the most specific directory, by name.
func (b *builder) effective(fileName string, future bool) []*unit.File {
	cur := b.currentDropIns()
	byName := map[string][]byte{}
	for _, dir := range layout.DropInDirs(fileName) {
		names := map[string]bool{}
		for _, n := range b.curDirs[dir] {
			names[n] = true
		}
		if future {
			for rel, data := range b.dropIns {
				if d, n, _ := strings.Cut(rel, "/"); d == dir && data != nil && n != layout.PinFile {
					names[n] = true
				}
			}
		}
		for n := range names {
			if _, seen := byName[n]; seen {
				continue
			}
			rel := dir + "/" + n
			data, ok := cur[rel]
			if future {
				data, ok = b.futureDropIn(rel)
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
func (b *builder) hasDropIns(fileName string) bool {
	dirs := layout.DropInDirs(fileName)
	b.currentDropIns()
	for _, d := range dirs {
		if len(b.curDirs[d]) > 0 {
			return true
		}
	}
	for rel, data := range b.dropIns {
		if d, n, _ := strings.Cut(rel, "/"); data != nil && n != layout.PinFile && slices.Contains(dirs, d) {
			return true
		}
	}
	return false
}

// merged is a unit file with the drop-ins that apply to fileName merged
// in, as they are now (future false) or after the apply.
func (b *builder) merged(base *unit.File, fileName string, future bool) *unit.File {
	if !b.hasDropIns(fileName) {
		return base
	}
	return unit.Merge(base, b.effective(fileName, future)...)
}

// planDropIns plans the drop-ins of a desired unit: each written where it
// differs from the host, and the drop-ins owner's marker records for the
// unit that no spec has any more removed. owner is the installed unit
// whose marker records them (the unit itself, or an instance's
// template), nil when there is none. It reports whether any drop-in file
// changes. A drop-in of the same name that is not syslet's is taken over
// only when it means what the spec says, as a unit is.
func (b *builder) planDropIns(u *render.Unit, owner *installedUnit, uc *UnitChange) (changed bool) {
	rank := kindRank(u.Kind)
	var recorded map[string]string
	if owner != nil && owner.managed {
		recorded = owner.recorded
	}
	if len(u.DropIns) == 0 && len(recorded) == 0 {
		return false // nothing to write or remove (almost every unit)
	}
	cur := b.currentDropIns()
	want := map[string]bool{}
	for _, d := range u.DropIns {
		rel := d.Rel()
		want[d.Path] = true
		old, exists := cur[rel]
		if exists && bytes.Equal(old, d.Content) {
			b.dropIns[rel] = d.Content
			continue
		}
		if exists && recorded[d.Path] == "" {
			if of, err := unit.Parse(old); err != nil || !unit.SameMeaning(of, d.File) {
				b.p.Refusals = append(b.p.Refusals, Refusal{Unit: u.FileName, Source: uc.Source, Message: fmt.Sprintf(
					"%s exists on the host and is not syslet's (%s's marker does not record it), and it says something else than the spec's drop-in %s; syslet will not overwrite it (remove or rename it, or rename the spec's drop-in)",
					d.Path, u.FileName, d.Name)})
				continue
			}
			uc.Reasons = append(uc.Reasons, "drop-in "+d.Name+" taken over: it says what the spec says")
		}
		b.dropIns[rel] = d.Content
		fc := FileChange{Path: d.Path, Op: "+", Kind: render.DropInFile, Owner: u.FileName, NewMode: 0o644}
		reason := "new drop-in"
		if exists {
			fc.Op, fc.OldMode, reason = "~", 0o644, "drop-in changed"
		}
		fc.Diff = fileDiff(d.Path, b.dropInFile(d.Path, old), exists, 0o644, d.Content, true)
		b.p.Files = append(b.p.Files, fc)
		b.add(Action{Op: OpWriteUnit, Target: d.Path, Unit: u.FileName, Payload: &Payload{Content: d.Content, Mode: 0o644}, Reason: reason}, rank)
		changed = true
	}
	dir := layout.UnitPath(layout.DropInDir(u.FileName)) + "/"
	for _, p := range slices.Sorted(maps.Keys(recorded)) {
		if !strings.HasPrefix(p, dir) || want[p] {
			continue
		}
		if b.removeDropIn(p, u.FileName, rank, "drop-in no longer in the spec") {
			changed = true
		}
	}
	return changed
}

// dropInFile is the installed drop-in at p as the host has it (its mode
// hides a private one's diff), or its recorded content when the host was
// not read.
func (b *builder) dropInFile(p string, recorded []byte) host.File {
	if f, ok := b.obs.Files[p]; ok && f.Mode.IsRegular() {
		return f
	}
	return host.File{Data: recorded, Mode: 0o644}
}

// removeDropIn removes a drop-in syslet wrote, if it is there, and with
// it its directory when that is left empty.
func (b *builder) removeDropIn(p, unitFile string, rank int, why string) bool {
	rel := strings.TrimPrefix(p, layout.UnitDir+"/")
	old, ok := b.currentDropIns()[rel]
	if !ok {
		return false
	}
	b.dropIns[rel] = nil
	b.p.Files = append(b.p.Files, FileChange{Path: p, Op: "-", Kind: render.DropInFile, Owner: unitFile, OldMode: 0o644,
		Diff: fileDiff(p, b.dropInFile(p, old), true, 0, nil, false)})
	b.add(Action{Op: OpRemoveUnit, Target: p, Payload: &Payload{Root: layout.UnitDir}, Unit: unitFile, Reason: why}, rank)
	return true
}

// removeRecordedDropIns removes, for a unit no spec declares any more,
// the drop-ins its marker (or its template's) records in the directory of
// fileName (a template's: in its instances' directories too).
func (b *builder) removeRecordedDropIns(owner *installedUnit, fileName string, all bool, rank int) {
	if owner == nil || !owner.managed {
		return
	}
	dir := layout.UnitPath(layout.DropInDir(fileName)) + "/"
	for _, p := range slices.Sorted(maps.Keys(owner.recorded)) {
		if !strings.HasPrefix(p, layout.UnitDir+"/") || !all && !strings.HasPrefix(p, dir) {
			continue
		}
		b.removeDropIn(p, fileName, rank, "its unit is removed")
	}
}

// desiredDropIns are the drop-ins the marker of a desired unit records:
// its own and, for a template, its instances' (by host path).
func (b *builder) desiredDropIns(u *render.Unit) map[string][]byte {
	out := map[string][]byte{}
	for _, d := range u.DropIns {
		out[d.Path] = d.Content
	}
	if u.Template {
		for _, iu := range b.out.Units {
			if iu.Link == u.FileName {
				for _, d := range iu.DropIns {
					out[d.Path] = d.Content
				}
			}
		}
	}
	return out
}
