package plan

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// Drift: syslet records in each unit's [X-Syslet] marker the digest of the
// unit file it wrote and of every config and build-context file it wrote
// for it (render.seal), and in each version of a config dir the digests of
// that version's files (layout.Digests; not in the marker, so that a
// config-dir change stays a reload and never rewrites the unit). A managed
// file whose content no longer matches its recorded digest was edited by
// hand. The plan does not overwrite such a
// unit or its files — it shows them as drift, with the diff of what an
// apply would put back — unless the operator forces it (Options.Force).
// Units and config dirs without a recorded digest (written by the earlier
// syslet, or an older version of this one) are never drift.

// Drifted reports whether the plan holds any unit back because it was
// edited by hand.
func (p *Plan) Drifted() bool {
	return slices.ContainsFunc(p.Units, func(u UnitChange) bool { return u.Effect == EffectDrift })
}

// unitEdited reports whether an installed unit file no longer matches the
// digest syslet recorded in it. It removes the Digest= line of the marker
// from the raw bytes (not a re-serialisation, so an edited comment or
// blank line counts too) and digests the rest.
func unitEdited(data []byte) (recorded, edited bool) {
	var rest bytes.Buffer
	var want string
	section := ""
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line = data[:i+1]
		}
		data = data[len(line):]
		t := strings.TrimSpace(string(line))
		if strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") {
			section = t[1 : len(t)-1]
		}
		if k, v, ok := strings.Cut(t, "="); ok && section == unit.Syslet && strings.TrimSpace(k) == unit.KeyDigest {
			want = strings.TrimSpace(v)
			continue
		}
		rest.Write(line)
	}
	if want == "" {
		return false, false
	}
	return true, render.Digest(rest.Bytes()) != want
}

// recordedFiles reads the FileDigest= lines of an installed marker: host
// path → digest (nil when there are none, as for most units).
func recordedFiles(f *unit.File) map[string]string {
	if f == nil {
		return nil
	}
	var out map[string]string
	for _, v := range f.Lookup(unit.Syslet, unit.KeyFileDigest) {
		if d, p, ok := strings.Cut(v, " "); ok {
			if out == nil {
				out = map[string]string{}
			}
			out[p] = d
		}
	}
	return out
}

// edit is one managed file edited by hand: the unit file itself, a config
// or build-context file, or a file of a config dir (cur is then the file
// the dir's links resolve to).
type edit struct {
	path string
	cur  host.File
	kind render.FileKind
}

// edits lists the managed files of an installed unit that were edited by
// hand and that this plan would change: the unit file itself (when want
// differs from it) and recorded files whose desired content (by path, nil
// when no longer desired) differs from what is on disk. Config dirs keep
// their digests apart and are checked by dirEdits.
func (in *inputs) edits(iu *installedUnit, want []byte, desired map[string][]byte) []edit {
	var out []edit
	// A unit edit only matters when the plan would rewrite the unit: one
	// that still means what the specs say (a comment, a reordering) is
	// left as it is anyway. Bytes equal to the desired unit are syslet's,
	// digest or not: compared first, as that is every unit of a converged
	// host.
	if !bytes.Equal(iu.data, want) {
		if rec, edited := unitEdited(iu.data); rec && edited && (want == nil || !iu.parses || !unit.Same(iu.parsed(), wantFile(want))) {
			out = append(out, edit{path: iu.path})
		}
	}
	rec := iu.recorded
	for _, p := range slices.Sorted(maps.Keys(rec)) {
		cur, ok := in.obs.Files[p]
		if !ok || cur.Link != "" || cur.Mode.IsDir() {
			continue // missing: nothing to protect
		}
		if d, ok := desired[p]; ok && cur.Holds(d) {
			continue // what the specs say (every file of a converged host), edited or not
		}
		sum := cur.Digest()
		if sum.Tagged() == rec[p] {
			continue // syslet's own content
		}
		if in.opts.Written[p][sum.Hex()] {
			continue // an interrupted run wrote it before recording it
		}
		kind := render.ConfigFile
		switch {
		case strings.HasPrefix(p, layout.UnitDir+"/"):
			kind = render.DropInFile
		case strings.HasPrefix(p, layout.SocketDir+"/"):
			kind = render.SocketFile
		}
		out = append(out, edit{path: p, cur: cur, kind: kind})
	}
	return out
}

// configDirFile is the FileChange kind of a file inside a config dir.
const configDirFile render.FileKind = "config-dir"

// dirEdits lists the files of an installed container's config dirs that
// were edited by hand and that this plan would change, given the unit's
// desired config dirs (nil when the unit is no longer declared). Each
// version of a dir records its files' digests (layout.Digests); a file
// whose content matches neither the specs nor its recorded digest was
// edited, and a file the manifest does not name was added, by hand. A dir
// written before syslet recorded digests has no manifest: its files are
// unknown, never drift, until the next version is written with one. A
// recorded file that is gone is nothing to protect (as for config files).
// read are the desired config dirs as read (readDirs).
func (in *inputs) dirEdits(iu *installedUnit, desired []render.Dir, read configDirs) []edit {
	if iu.kind != spec.Container {
		return nil
	}
	var out []edit
	for _, p := range in.have.under[layout.ConfigDirOf(iu.name)] {
		dir, ok := strings.CutSuffix(p, "/"+layout.DataLink)
		if !ok || in.obs.Files[p].Link == "" {
			continue
		}
		var want []render.DirFile
		var cur map[string]host.File
		known := false
		for i, d := range desired {
			if d.Path == dir {
				want, cur, known = d.Files, read[i], true
			}
		}
		if !known {
			cur = in.configDir(dir)
		}
		if sameContent(cur, want) {
			continue // what the specs say: every dir of a converged host
		}
		m, ok := in.obs.Files[layout.Resolve(in.readlink, dir, layout.FileLink(layout.Digests), 8)]
		if !ok || m.Link != "" || m.Mode.IsDir() {
			continue
		}
		rec := render.ParseDirDigests(m.Data)
		wantBy := make(map[string][]byte, len(want))
		for _, f := range want {
			wantBy[f.Name] = f.Content
		}
		for name, f := range cur {
			if d, ok := wantBy[name]; ok && f.Holds(d) {
				continue // the specs say what the file says
			}
			if f.Digest().Tagged() == rec[name] { // rec[name] is "" for an added file
				continue
			}
			out = append(out, edit{path: dir + "/" + name, cur: f, kind: configDirFile})
		}
	}
	// under and cur are unordered: two plans of one host must read the same.
	slices.SortFunc(out, func(x, y edit) int { return strings.Compare(x.path, y.path) })
	return out
}

// sameContent reports whether a config dir as read holds exactly the
// desired files' contents.
func sameContent(cur map[string]host.File, want []render.DirFile) bool {
	if len(cur) != len(want) {
		return false
	}
	for _, f := range want {
		if c, ok := cur[f.Name]; !ok || !c.Holds(f.Content) {
			return false
		}
	}
	return true
}

func (in *inputs) readlink(p string) (string, bool) {
	f, ok := in.obs.Files[p]
	return f.Link, ok && f.Link != ""
}

// held is the drift check of compare: it reports whether the desired unit
// u must be left alone because the operator edited its installed files.
// It then makes up the unit's whole plan, drift with diffs: no change.
// read are u's config dirs as read.
func (in *inputs) held(u *render.Unit, iu *installedUnit, up *unitPlan, want []byte, read configDirs) bool {
	desired := map[string][]byte{}
	modes := map[string]uint32{}
	for _, f := range in.want.files[u.FileName] {
		desired[f.Path], modes[f.Path] = f.Content, f.Mode
	}
	maps.Copy(desired, desiredDropIns(in.out, u))
	dirs := in.want.dirs[u.FileName]
	edited := append(in.edits(iu, want, desired), in.dirEdits(iu, dirs, read)...)
	if len(edited) == 0 {
		return false
	}
	for _, d := range dirs { // for the diffs of edited config-dir files
		for _, f := range d.Files {
			desired[d.Path+"/"+f.Name], modes[d.Path+"/"+f.Name] = f.Content, f.Mode
		}
	}
	if in.opts.Force {
		up.change.Reasons = append(up.change.Reasons, "edited by hand ("+editPaths(edited)+"); replaced because of --force")
		return false
	}
	st := in.state(u.Service, iu)
	up.change.needReload, up.change.Before = st.NeedDaemonReload, beforeState(st)
	in.drift(iu, up, edited, want, desired, modes)
	return true
}

// heldStale is the drift hook for an installed unit no spec declares any
// more: a hand-edited unit is not removed without --force.
func (in *inputs) heldStale(iu *installedUnit, up *unitPlan) bool {
	if in.opts.Force {
		return false
	}
	edited := append(in.edits(iu, nil, nil), in.dirEdits(iu, nil, nil)...)
	if len(edited) == 0 {
		return false
	}
	in.drift(iu, up, edited, nil, nil, nil)
	return true
}

func editPaths(es []edit) string {
	ps := make([]string, len(es))
	for i, e := range es {
		ps[i] = e.path
	}
	return strings.Join(ps, ", ")
}

// drift records a unit held back for hand edits, with the diff of what an
// apply would put back: each side with its own mode (the host's file as it
// is, the spec's content with the spec's mode), so a private file made
// world-readable by hand, or replaced by a FIFO, still hides what the
// spec says it holds.
func (in *inputs) drift(iu *installedUnit, up *unitPlan, edited []edit, want []byte, desired map[string][]byte, modes map[string]uint32) {
	uc := &up.change
	uc.Effect = EffectDrift
	uc.After = uc.Before
	uc.Reasons = []string{"edited by hand since syslet wrote it (" + editPaths(edited) + "); kept: --force replaces it"}
	for _, e := range edited {
		if e.path == iu.path {
			uc.Diff = unitDiff(in.obs.Files, iu, want)
			continue
		}
		mode := uint32(e.cur.Mode.Perm())
		d, ok := desired[e.path]
		newMode := mode
		if ok {
			newMode = modes[e.path]
		}
		up.files = append(up.files, FileChange{Path: e.path, Op: "!", Kind: e.kind, Owner: iu.fileName,
			OldMode: mode, NewMode: newMode, Diff: fileDiff(e.path, e.cur, true, newMode, d, ok)})
	}
	up.notes = append(up.notes, Note{Unit: iu.fileName, Message: fmt.Sprintf("drift: %s edited by hand; left as it is (run with --force to replace)", editPaths(edited))})
}

// takeOver decides whether an installed unit without syslet's marker may
// become syslet's: only when the desired unit means exactly what the file
// already says (SameMeaning), so rewriting it with the marker changes
// nothing systemd or podman would act on. This is how `syslet adopt`
// takes over a host that runs hand-written quadlets without a restart.
func takeOver(u *render.Unit, iu *installedUnit) bool {
	return iu.parses && unit.SameMeaning(iu.parsed(), u.Parsed())
}

func wantFile(want []byte) *unit.File {
	f, err := unit.Parse(want)
	if err != nil {
		return &unit.File{}
	}
	return f
}
