package plan

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// files plans the config files (containers) or context files (builds) a
// unit owns, and the stale files under its directory, into the unit's
// plan. It reports whether a file that already existed changed, which
// restarts a container or rebuilds an image; config dirs are planned by
// dirs.
func (in *inputs) files(u *render.Unit, up *unitPlan) (changed bool) {
	rank := kindRank(u.Kind)
	for _, f := range in.want.files[u.FileName] {
		cur, exists := in.obs.Files[f.Path]
		if exists && cur.Link == "" && cur.Mode.IsRegular() && cur.Holds(f.Content) && uint32(cur.Mode.Perm()) == f.Mode {
			continue
		}
		fc := FileChange{Path: f.Path, Op: "+", Kind: f.Kind, Owner: u.FileName, NewMode: f.Mode}
		reason := "new file"
		if exists {
			fc.Op, fc.OldMode = "~", uint32(cur.Mode.Perm())
			reason = "content changed"
			if cur.Mode.IsRegular() && cur.Holds(f.Content) {
				reason = fmt.Sprintf("mode %04o → %04o", cur.Mode.Perm(), f.Mode)
			}
			changed = true
			up.change.Reasons = append(up.change.Reasons, fmt.Sprintf("%s %s: %s", f.Kind, f.Path, reason))
		}
		fc.Diff = fileDiff(f.Path, cur, exists, f.Mode, f.Content, true)
		up.files = append(up.files, fc)
		up.add(Action{Op: OpWriteFile, Target: f.Path, Unit: u.FileName, Payload: &Payload{Content: f.Content, Mode: f.Mode}, Reason: reason}, rank)
	}
	root := filesRoot(u.Kind, u.Name)
	if root == "" {
		return changed
	}
	for _, p := range in.staleUnder(root, u.FileName) {
		up.files = append(up.files, FileChange{Path: p, Op: "-", Owner: u.FileName, Kind: render.ConfigFile})
		up.add(Action{Op: OpRemoveFile, Target: p, Payload: &Payload{Root: root}, Unit: u.FileName, Reason: "no longer in the spec"}, rank)
		if u.Kind.Quadlet().OnChange == unit.ChangeRebuild { // a context file: the image changes
			changed = true
			up.change.Reasons = append(up.change.Reasons, "context file "+p+" removed")
		}
	}
	return changed
}

// configDirs are a unit's desired config dirs as the host has them
// (readConfigDir), in the order of its desired dirs.
type configDirs []map[string]host.File

// readDirs reads the desired config dirs of a unit as the host has them:
// its drift check and its config-dir plan compare the same.
func (in *inputs) readDirs(dirs []render.Dir) configDirs {
	if len(dirs) == 0 {
		return nil
	}
	read := make(configDirs, len(dirs))
	for i, d := range dirs {
		read[i] = in.configDir(d.Path)
	}
	return read
}

// dirs plans a container's config dirs, read as the host has them, into
// the unit's plan; it reports whether any changed.
func (in *inputs) dirs(u *render.Unit, read configDirs, up *unitPlan) (changed bool) {
	for i, d := range in.want.dirs[u.FileName] {
		cur := read[i]
		same := cur != nil && len(cur) == len(d.Files)
		for _, f := range d.Files {
			old, ok := cur[f.Name]
			if !ok || !old.Mode.IsRegular() || !old.Holds(f.Content) || uint32(old.Mode.Perm()) != f.Mode {
				same = false
				op := "+"
				if ok {
					op = "~"
				}
				up.files = append(up.files, FileChange{Path: d.Path + "/" + f.Name, Op: op, Kind: "config-dir", Owner: u.FileName,
					OldMode: uint32(old.Mode.Perm()), NewMode: f.Mode, Diff: fileDiff(d.Path+"/"+f.Name, old, ok, f.Mode, f.Content, true)})
			}
		}
		names := make(map[string]bool, len(d.Files))
		for _, f := range d.Files {
			names[f.Name] = true
		}
		for name, old := range cur {
			if !names[name] {
				same = false
				up.files = append(up.files, FileChange{Path: d.Path + "/" + name, Op: "-", Kind: "config-dir", Owner: u.FileName,
					OldMode: uint32(old.Mode.Perm()), Diff: fileDiff(d.Path+"/"+name, old, true, 0, nil, false)})
			}
		}
		if same {
			continue
		}
		if cur != nil {
			changed = true
			up.change.Reasons = append(up.change.Reasons, "config dir "+d.Path+" changed")
		}
		up.add(Action{Op: OpWriteDir, Target: d.Path, Unit: u.FileName, Payload: &Payload{Files: d.Installed()}, Reason: "swap to a new version"}, kindRank(u.Kind))
	}
	return changed
}

// configDir is readConfigDir of an observed directory.
func (in *inputs) configDir(dir string) map[string]host.File {
	return readConfigDir(in.obs.Files, in.have.children[dir], dir)
}

// readConfigDir resolves a config dir's files (entries are the paths
// directly inside it) through its per-file links and the ..data link, as
// the container sees them. A regular file in place of a link (what
// `sed -i` leaves after editing through one) is read as it is: that is
// what the container sees. It returns nil when the directory does not
// exist.
func readConfigDir(files map[string]host.File, entries []string, dir string) map[string]host.File {
	d, ok := files[dir]
	if !ok || !d.Mode.IsDir() {
		return nil
	}
	out := make(map[string]host.File, len(entries))
	readlink := func(p string) (string, bool) {
		f, ok := files[p]
		return f.Link, ok && f.Link != ""
	}
	for _, p := range entries {
		name := p[strings.LastIndexByte(p, '/')+1:]
		f := files[p]
		if layout.Internal(name) || f.Mode.IsDir() {
			continue
		}
		if f.Link == "" {
			out[name] = f
			continue
		}
		target := layout.Resolve(readlink, dir, f.Link, 8)
		if t, ok := files[target]; ok && t.Link == "" && !t.Mode.IsDir() {
			out[name] = t
		}
	}
	return out
}

// staleUnder lists the topmost paths under root that no desired file or
// config dir of owner accounts for.
func (in *inputs) staleUnder(root, owner string) []string {
	// Sets of the kept paths, the config dirs and all their ancestors, so
	// that a container with tens of thousands of config files is checked
	// in linear time.
	keep := map[string]bool{}
	dirs := map[string]bool{}
	ancestors := map[string]bool{}
	addAncestors := func(p string) {
		for {
			i := strings.LastIndexByte(p, '/')
			if i <= 0 || ancestors[p[:i]] {
				return
			}
			p = p[:i]
			ancestors[p] = true
		}
	}
	for _, f := range in.want.files[owner] {
		keep[f.Path] = true
		addAncestors(f.Path)
	}
	for _, d := range in.want.dirs[owner] {
		dirs[d.Path] = true
		addAncestors(d.Path)
	}
	// inDir reports whether p is a config dir or lies inside one.
	inDir := func(p string) bool {
		for {
			if dirs[p] {
				return true
			}
			i := strings.LastIndexByte(p, '/')
			if i <= 0 {
				return false
			}
			p = p[:i]
		}
	}
	var paths []string
	for _, p := range in.have.under[root] {
		if p != root {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var stale []string
	for _, p := range paths {
		if len(stale) > 0 && strings.HasPrefix(p, stale[len(stale)-1]+"/") {
			continue
		}
		if keep[p] || inDir(p) {
			continue
		}
		if ancestors[p] && in.obs.Files[p].Mode.IsDir() {
			continue
		}
		stale = append(stale, p)
	}
	return stale
}

// filesRoot is the directory holding all of a unit's files, removed whole
// with the unit: a container's config, a build's context, a kube unit's
// YAML; "" for the kinds that have none.
func filesRoot(k spec.Kind, name string) string {
	if q := k.Quadlet(); q != nil && q.FilesRoot != "" {
		return path.Join(q.FilesRoot, name)
	}
	return ""
}
