package plan

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// installedUnit is a unit file found in the unit directory.
type installedUnit struct {
	path, fileName, name string
	kind                 spec.Kind
	data                 []byte
	file                 *unit.File // nil when the file does not parse
	managed              bool       // carries the [X-Syslet] marker
}

// removalAllowed reads the installed marker; only an explicit "false"
// forbids removal.
func (iu *installedUnit) removalAllowed() bool {
	v, _ := iu.file.Last(unit.Syslet, unit.KeyRemovalAllowed)
	return v != "false"
}

// reclaimDelete reads the installed marker; podman data is only ever
// deleted when the marker explicitly says Delete.
func (iu *installedUnit) reclaimDelete() bool {
	v, _ := iu.file.Last(unit.Syslet, unit.KeyReclaimPolicy)
	return v == string(spec.Delete)
}

// resourceName is the podman object an installed volume, network or build
// manages.
func (iu *installedUnit) resourceName() string {
	key := map[spec.Kind]string{spec.Volume: unit.KeyVolumeName, spec.Network: unit.KeyNetworkName, spec.Build: unit.KeyImageTag}[iu.kind]
	sec := map[spec.Kind]string{spec.Volume: unit.Volume, spec.Network: unit.Network, spec.Build: unit.Build}[iu.kind]
	if v, ok := iu.file.Last(sec, key); ok {
		return v
	}
	if iu.kind == spec.Build {
		return ""
	}
	return "systemd-" + iu.name // quadlet's default name
}

type builder struct {
	opts Options
	out  *render.Output
	obs  *Observed
	p    *Plan
	inst map[string]*installedUnit // by file name

	recreated map[string]bool // "data.volume", "net.network", "app.build" rebuilt or recreated
	secrets   map[string]bool // podman secret names created or replaced
	pulls     map[string]bool // image references already planned for pull
	// installedImages are the images installed managed units run or
	// build, which stand in for the image store when podman is not read.
	installedImages map[string]bool

	// Indexes built once so that planning stays linear in the number of
	// units and files.
	desired  map[string]*render.Unit  // by unit file name
	ownFiles map[string][]render.File // desired files by owner unit file
	ownDirs  map[string][]render.Dir  // desired config dirs by owner unit file
	under    map[string][]string      // observed paths by the config or build root holding them
	children map[string][]string      // observed paths by parent directory
}

// Build compares desired and observed state and returns the plan. It is
// pure: the same inputs always give the same plan.
func Build(out *render.Output, obs *Observed) *Plan { return BuildWith(out, obs, Options{}) }

// BuildWith is Build with options (drift.go).
func BuildWith(out *render.Output, obs *Observed, opts Options) *Plan {
	b := &builder{opts: opts, out: out, obs: obs, p: &Plan{Future: map[string][]byte{}, Current: map[string][]byte{}}, inst: map[string]*installedUnit{},
		recreated: map[string]bool{}, secrets: map[string]bool{}, pulls: map[string]bool{}}
	b.index()
	b.readInstalled()
	for _, u := range out.Units {
		if u.Kind != spec.Container {
			b.resource(u)
		}
	}
	b.secretChanges()
	for _, u := range out.Units {
		if u.Kind == spec.Container {
			b.container(u)
		}
	}
	b.stale()
	b.orphans()
	b.p.Refusals = append(b.p.Refusals, linkRefusals(out, obs)...)
	b.finish()
	return b.p
}

func (b *builder) index() {
	b.desired = map[string]*render.Unit{}
	for _, u := range b.out.Units {
		b.desired[u.FileName] = u
	}
	b.ownFiles, b.ownDirs = map[string][]render.File{}, map[string][]render.Dir{}
	for _, f := range b.out.Files {
		b.ownFiles[f.Owner] = append(b.ownFiles[f.Owner], f)
	}
	for _, d := range b.out.Dirs {
		b.ownDirs[d.Owner] = append(b.ownDirs[d.Owner], d)
	}
	b.under, b.children = map[string][]string{}, map[string][]string{}
	for p := range b.obs.Files {
		b.children[path.Dir(p)] = append(b.children[path.Dir(p)], p)
		for _, root := range []string{render.ConfigRoot, render.BuildRoot} {
			if rest, ok := strings.CutPrefix(p, root+"/"); ok {
				name, _, _ := strings.Cut(rest, "/")
				b.under[path.Join(root, name)] = append(b.under[path.Join(root, name)], p)
			}
		}
	}
}

func (b *builder) readInstalled() {
	b.installedImages = map[string]bool{}
	for p, f := range b.obs.Files {
		k, name, ok := installedUnitName(p)
		if !ok || f.Mode.IsDir() || f.Link != "" {
			continue
		}
		iu := &installedUnit{path: p, fileName: path.Base(p), name: name, kind: k, data: f.Data}
		if uf, err := unit.Parse(f.Data); err == nil {
			iu.file = uf
			iu.managed = uf.Section(unit.Syslet) != nil
		}
		if iu.managed {
			switch k {
			case spec.Container:
				if img, ok := iu.file.Last(unit.Container, unit.KeyImage); ok {
					b.installedImages[img] = true
				}
			case spec.Build:
				if tag, ok := iu.file.Last(unit.Build, unit.KeyImageTag); ok {
					b.installedImages[tag] = true
				}
			}
		}
		b.inst[iu.fileName] = iu
	}
}

func (b *builder) add(a Action, rank int) {
	a.Step, a.rank = StepOf(a.Op), rank
	if a.Content != nil {
		a.Digest = contentDigest(a.Content)
	}
	b.p.Actions = append(b.p.Actions, a)
}

func kindRank(k spec.Kind) int {
	return slices.Index(spec.Kinds, k)
}

// state is the unit's current state. Without a systemd reader the plan
// assumes the host matches its installed files: installed units that run
// are running, everything else is inactive.
func (b *builder) state(service string, iu *installedUnit) host.UnitState {
	if b.obs.UnitsKnown {
		if st, ok := b.obs.Units[service]; ok {
			return st
		}
		return host.UnitState{Name: service, LoadState: "not-found", ActiveState: "inactive"}
	}
	st := host.UnitState{Name: service, LoadState: "not-found", ActiveState: "inactive"}
	if iu == nil || iu.file == nil {
		return st
	}
	st.LoadState = "loaded"
	switch iu.kind {
	case spec.Volume, spec.Network:
		st.ActiveState = "active"
	case spec.Container:
		if t, _ := iu.file.Last(unit.Service, unit.KeyType); t != "oneshot" && len(iu.file.Lookup(unit.Install, unit.KeyWantedBy)) > 0 {
			st.ActiveState = "active"
		}
	}
	return st
}

// imagePresent reports whether ref is in podman's image store. Without a
// store reader, an image counts as present when an installed container
// already runs it.
func (b *builder) imagePresent(ref string) bool {
	if b.obs.StoreKnown {
		return b.obs.Images[ref]
	}
	return b.installedImages[ref]
}

func beforeState(st host.UnitState) string {
	if st.LoadState == "not-found" && st.ActiveState == "inactive" {
		return "-"
	}
	return st.ActiveState
}

func running(st host.UnitState) bool {
	switch st.ActiveState {
	case "active", "activating", "reloading", "deactivating":
		return true
	}
	return false
}

func newChange(u *render.Unit) UnitChange {
	return UnitChange{FileName: u.FileName, Path: u.Path, Service: u.Service, Kind: u.Kind, Effect: EffectNone,
		Source: u.Spec.Source + " " + u.Spec.Path()}
}

// compare classifies a desired unit against its installed file: new,
// identical, metadata-only, or changed (with the key changes).
func (b *builder) compare(u *render.Unit, uc *UnitChange) (iu *installedUnit, changed, meta, ok bool) {
	iu = b.inst[u.FileName]
	adopted := iu != nil && !iu.managed && b.takeOver(u, iu, uc)
	if iu != nil && !iu.managed && !adopted {
		b.p.Refusals = append(b.p.Refusals, Refusal{Unit: u.FileName, Source: uc.Source,
			Message: fmt.Sprintf("%s exists on the host without the [X-Syslet] marker, so it is not syslet's; syslet will not overwrite it (remove or rename it, or rename the spec)", u.Path)})
		uc.Effect = EffectIgnore
		b.p.Units = append(b.p.Units, *uc)
		return iu, false, false, false
	}
	want := u.File.Bytes()
	b.p.Future[u.FileName] = want
	if iu == nil {
		uc.Write = true
		uc.Keys = diffKeys(&unit.File{}, u.File)
		b.add(Action{Op: OpWriteUnit, Target: u.Path, Unit: u.FileName, Content: want, Mode: 0o644, Reason: "new unit"}, kindRank(u.Kind))
		return nil, false, false, true
	}
	if b.held(u, iu, uc) {
		b.p.Units = append(b.p.Units, *uc)
		return iu, false, false, false
	}
	if bytes.Equal(iu.data, want) {
		return iu, false, false, true
	}
	uc.Write = true
	uc.Keys = diffKeys(iu.file, u.File)
	meta = adopted || unit.Equal(iu.file.Without(unit.Syslet, unit.Unit+"."+unit.KeyDescription), u.File.Without(unit.Syslet, unit.Unit+"."+unit.KeyDescription))
	reason := "unit changed"
	if meta {
		reason = "metadata changed"
	}
	b.add(Action{Op: OpWriteUnit, Target: u.Path, Unit: u.FileName, Content: want, Mode: 0o644, Reason: reason}, kindRank(u.Kind))
	return iu, !meta, meta, true
}

// resource plans a volume, network or build unit.
func (b *builder) resource(u *render.Unit) {
	uc := newChange(u)
	iu, changed, meta, ok := b.compare(u, &uc)
	if !ok {
		return
	}
	st := b.state(u.Service, iu)
	uc.State, uc.Before, uc.After = st, beforeState(st), st.ActiveState
	rank := kindRank(u.Kind)
	contextChanged := u.Kind == spec.Build && b.files(u, &uc)

	switch {
	case iu == nil:
		uc.Effect = EffectCreate
		uc.Reasons = append(uc.Reasons, "new "+string(u.Kind))
		uc.After = "active"
		if u.Kind == spec.Build {
			uc.After = "built"
		}
		b.add(Action{Op: OpStart, Target: u.Service, Unit: u.FileName, Reason: "create " + string(u.Kind) + " " + u.Resource}, rank)
	case changed && u.Kind == spec.Volume:
		if !iu.removalAllowed() || !iu.reclaimDelete() {
			b.p.Refusals = append(b.p.Refusals, Refusal{Unit: u.FileName, Source: uc.Source, Message: fmt.Sprintf(
				"volume %s changed (%s), which needs the volume deleted and created again, but its installed marker forbids that (RemovalAllowed=%t, ReclaimPolicy=%s); to recreate it, first apply the spec unchanged with removalAllowed true and reclaimPolicy Delete",
				u.Resource, summarizeKeys(uc.Keys), iu.removalAllowed(), markerPolicy(iu))})
			uc.Effect = EffectRecreate
			break
		}
		fallthrough
	case changed && u.Kind == spec.Network:
		uc.Effect = EffectRecreate
		uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
		b.recreated[u.FileName] = true
		if running(st) {
			b.add(Action{Op: OpStop, Target: u.Service, Unit: u.FileName, Reason: "recreate " + string(u.Kind)}, rank)
		}
		op := OpDeleteVolume
		if u.Kind == spec.Network {
			op = OpDeleteNetwork
		}
		b.add(Action{Op: op, Target: iu.resourceName(), Unit: u.FileName, Reason: "recreate with new options"}, rank)
		b.add(Action{Op: OpStart, Target: u.Service, Unit: u.FileName, Reason: "create " + string(u.Kind) + " " + u.Resource}, rank)
		uc.After = "active"
	case u.Kind == spec.Build && (changed || contextChanged || !b.imagePresent(u.Resource)):
		uc.Effect = EffectRebuild
		switch {
		case changed:
			uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
		case contextChanged:
			uc.Reasons = append(uc.Reasons, "build context changed")
		default:
			uc.Reasons = append(uc.Reasons, "image "+u.Resource+" missing")
		}
		b.recreated[u.FileName] = true
		b.add(Action{Op: OpStart, Target: u.Service, Unit: u.FileName, Reason: "build " + u.Resource}, rank)
		uc.After = "built"
	case meta:
		uc.Effect = EffectMetadata
		uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
	}
	b.p.Units = append(b.p.Units, uc)
}

func markerPolicy(iu *installedUnit) string {
	v, ok := iu.file.Last(unit.Syslet, unit.KeyReclaimPolicy)
	if !ok {
		return "(unset)"
	}
	return v
}

// files plans the config files (containers) or context files (builds) a
// unit owns, and the stale files under its directory. It reports whether
// a file that already existed changed, which restarts a container or
// rebuilds an image; config dirs are planned by dirs.
func (b *builder) files(u *render.Unit, uc *UnitChange) (changed bool) {
	rank := kindRank(u.Kind)
	for _, f := range b.ownFiles[u.FileName] {
		cur, exists := b.obs.Files[f.Path]
		if exists && cur.Link == "" && !cur.Mode.IsDir() && bytes.Equal(cur.Data, f.Content) && uint32(cur.Mode.Perm()) == f.Mode {
			continue
		}
		fc := FileChange{Path: f.Path, Op: "+", Kind: f.Kind, Owner: u.FileName, NewMode: f.Mode}
		reason := "new file"
		if exists {
			fc.Op, fc.OldMode = "~", uint32(cur.Mode.Perm())
			reason = "content changed"
			if bytes.Equal(cur.Data, f.Content) {
				reason = fmt.Sprintf("mode %04o → %04o", cur.Mode.Perm(), f.Mode)
			}
			changed = true
			uc.Reasons = append(uc.Reasons, fmt.Sprintf("%s %s: %s", f.Kind, f.Path, reason))
		}
		fc.Diff = fileDiff(f.Path, uint32(cur.Mode.Perm()), cur.Data, exists, f.Mode, f.Content, true)
		b.p.Files = append(b.p.Files, fc)
		b.add(Action{Op: OpWriteFile, Target: f.Path, Unit: u.FileName, Content: f.Content, Mode: f.Mode, Reason: reason}, rank)
	}
	root := render.ConfigDirOf(u.Name)
	if u.Kind == spec.Build {
		root = render.BuildDirOf(u.Name)
	}
	for _, p := range b.staleUnder(root, u.FileName) {
		b.p.Files = append(b.p.Files, FileChange{Path: p, Op: "-", Owner: u.FileName, Kind: render.ConfigFile})
		b.add(Action{Op: OpRemoveFile, Target: p, Root: root, Unit: u.FileName, Reason: "no longer in the spec"}, rank)
		if u.Kind == spec.Build {
			changed = true
			uc.Reasons = append(uc.Reasons, "context file "+p+" removed")
		}
	}
	return changed
}

// dirs plans a container's config dirs; it reports whether any changed.
func (b *builder) dirs(u *render.Unit, uc *UnitChange) (changed bool) {
	for _, d := range b.ownDirs[u.FileName] {
		cur := readConfigDir(b.obs.Files, b.children[d.Path], d.Path)
		same := cur != nil && len(cur) == len(d.Files)
		for _, f := range d.Files {
			old, ok := cur[f.Name]
			if !ok || !bytes.Equal(old.Data, f.Content) || uint32(old.Mode.Perm()) != f.Mode {
				same = false
				op := "+"
				if ok {
					op = "~"
				}
				b.p.Files = append(b.p.Files, FileChange{Path: d.Path + "/" + f.Name, Op: op, Kind: "config-dir", Owner: u.FileName,
					OldMode: uint32(old.Mode.Perm()), NewMode: f.Mode, Diff: fileDiff(d.Path+"/"+f.Name, uint32(old.Mode.Perm()), old.Data, ok, f.Mode, f.Content, true)})
			}
		}
		for name, old := range cur {
			if !slices.ContainsFunc(d.Files, func(f render.DirFile) bool { return f.Name == name }) {
				same = false
				b.p.Files = append(b.p.Files, FileChange{Path: d.Path + "/" + name, Op: "-", Kind: "config-dir", Owner: u.FileName,
					OldMode: uint32(old.Mode.Perm()), Diff: fileDiff(d.Path+"/"+name, uint32(old.Mode.Perm()), old.Data, true, 0, nil, false)})
			}
		}
		if same {
			continue
		}
		if cur != nil {
			changed = true
			uc.Reasons = append(uc.Reasons, "config dir "+d.Path+" changed")
		}
		b.add(Action{Op: OpWriteDir, Target: d.Path, Unit: u.FileName, Files: d.Files, Reason: "swap to a new version"}, kindRank(u.Kind))
	}
	return changed
}

// readConfigDir resolves a config dir's files (entries are the paths
// directly inside it) through its per-file links and the ..data link, as
// the container sees them. It returns nil when the directory does not
// exist.
func readConfigDir(files map[string]host.File, entries []string, dir string) map[string]host.File {
	d, ok := files[dir]
	if !ok || !d.Mode.IsDir() {
		return nil
	}
	out := map[string]host.File{}
	for _, p := range entries {
		f := files[p]
		if strings.HasPrefix(path.Base(p), "..") || f.Link == "" {
			continue
		}
		target := resolve(files, dir, f.Link, 8)
		if t, ok := files[target]; ok && t.Link == "" && !t.Mode.IsDir() {
			out[path.Base(p)] = t
		}
	}
	return out
}

// resolve follows relative links inside dir (..data/name → ..vN/name).
func resolve(files map[string]host.File, dir, link string, depth int) string {
	p := path.Join(dir, link)
	for depth > 0 {
		depth--
		parent, base := path.Dir(p), path.Base(p)
		if f, ok := files[parent]; ok && f.Link != "" {
			p = path.Join(path.Dir(parent), f.Link, base)
			continue
		}
		if f, ok := files[p]; ok && f.Link != "" {
			p = path.Join(path.Dir(p), f.Link)
			continue
		}
		break
	}
	return p
}

// staleUnder lists the topmost paths under root that no desired file or
// config dir of owner accounts for.
func (b *builder) staleUnder(root, owner string) []string {
	var keep []string
	for _, f := range b.ownFiles[owner] {
		keep = append(keep, f.Path)
	}
	var dirs []string
	for _, d := range b.ownDirs[owner] {
		dirs = append(dirs, d.Path)
	}
	var paths []string
	for _, p := range b.under[root] {
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
		if slices.Contains(keep, p) || slices.ContainsFunc(dirs, func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") }) {
			continue
		}
		isAncestor := slices.ContainsFunc(keep, func(k string) bool { return strings.HasPrefix(k, p+"/") }) ||
			slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(d, p+"/") })
		if isAncestor && b.obs.Files[p].Mode.IsDir() {
			continue
		}
		stale = append(stale, p)
	}
	return stale
}

func (b *builder) secretChanges() {
	for _, s := range b.out.Secrets {
		for _, k := range s.Keys {
			name := s.PodmanName(k)
			cur, exists := b.obs.Secrets[name]
			sc := SecretChange{Name: name, Secret: s.Name}
			switch {
			case exists && cur.Labels[render.HashLabel] == "":
				b.p.Refusals = append(b.p.Refusals, Refusal{Unit: "secret " + name, Source: s.Spec.Source + " " + s.Spec.Path(),
					Message: fmt.Sprintf("podman secret %q exists without the %s label, so it is not syslet's; syslet will not replace it", name, render.HashLabel)})
				continue
			case exists && cur.Labels[render.HashLabel] == s.Hash:
				continue
			case exists:
				sc.Op, sc.Reason = "~", "ciphertext changed"
			default:
				sc.Op, sc.Reason = "+", "new secret"
			}
			b.secrets[name] = true
			b.p.Secrets = append(b.p.Secrets, sc)
			b.add(Action{Op: OpCreateSecret, Target: name, Secret: s, Key: k, Labels: map[string]string{render.HashLabel: s.Hash}, Reason: sc.Reason}, kindRank(spec.Secret))
		}
	}
	for name, cur := range b.obs.Secrets {
		if cur.Labels[render.HashLabel] == "" || slices.ContainsFunc(b.out.Secrets, func(s *render.Secret) bool {
			return slices.ContainsFunc(s.Keys, func(k string) bool { return s.PodmanName(k) == name })
		}) {
			continue
		}
		b.p.Secrets = append(b.p.Secrets, SecretChange{Name: name, Op: "-", Reason: "no longer declared"})
		b.add(Action{Op: OpRemoveSecret, Target: name, Reason: "no longer declared"}, kindRank(spec.Secret))
	}
	slices.SortFunc(b.p.Secrets, func(a, c SecretChange) int { return strings.Compare(a.Name, c.Name) })
}

func (b *builder) container(u *render.Unit) {
	uc := newChange(u)
	iu, changed, meta, ok := b.compare(u, &uc)
	if !ok {
		return
	}
	rank := kindRank(u.Kind)
	st := b.state(u.Service, iu)
	uc.State, uc.Before = st, beforeState(st)
	if changed {
		uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
	}
	restart := changed
	if b.files(u, &uc) {
		restart = true
	}
	reload := b.dirs(u, &uc)
	for _, v := range u.Volumes {
		if b.recreated[v+".volume"] {
			restart = true
			uc.Reasons = append(uc.Reasons, "volume "+v+" recreated")
		}
	}
	for _, n := range u.Networks {
		if b.recreated[n+".network"] {
			restart = true
			uc.Reasons = append(uc.Reasons, "network "+n+" recreated")
		}
	}
	if u.Build != "" && b.recreated[u.Build+".build"] {
		restart = true
		uc.Reasons = append(uc.Reasons, "image rebuilt by "+u.Build+".build")
	}
	for _, s := range u.Secrets {
		if b.secrets[s] && iu != nil {
			restart = true
			uc.Reasons = append(uc.Reasons, "secret "+s+" changed")
		}
	}
	if meta && !restart && !reload {
		uc.Effect = EffectMetadata
		uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
	}
	create := iu == nil
	if create {
		uc.Reasons = append(uc.Reasons, "new container")
	}
	isRunning := running(st)
	stop := func(why string) {
		b.add(Action{Op: OpStop, Target: u.Service, Unit: u.FileName, Reason: why}, rank)
	}
	start := func(why string) {
		if u.Image != "" && !b.imagePresent(u.Image) {
			b.pull(u.Image, u.FileName)
		}
		b.add(Action{Op: OpStart, Target: u.Service, Unit: u.FileName, Reason: why}, rank)
	}
	switch u.State {
	case spec.Running:
		uc.After = "active"
		switch {
		case create:
			uc.Effect = EffectCreate
			start("new container")
		case restart && isRunning:
			uc.Effect = EffectRestart
			stop("restart: " + strings.Join(uc.Reasons, "; "))
			start("restart")
		case restart || (reload && !isRunning):
			uc.Effect = EffectRestart
			start("changed while not running")
		case reload:
			uc.Effect = EffectReload
			b.add(Action{Op: OpReload, Target: u.Service, Unit: u.FileName, Reason: strings.Join(uc.Reasons, "; ")}, rank)
		case !isRunning:
			if uc.Effect == EffectNone {
				uc.Effect = EffectStart
			}
			uc.Reasons = append(uc.Reasons, "not running ("+st.ActiveState+")")
			start("not running")
		}
	case spec.Stopped:
		uc.After = "inactive"
		if isRunning {
			uc.Effect = EffectStop
			uc.Reasons = append(uc.Reasons, "desiredState is stopped")
			stop("desiredState is stopped")
		} else if create || restart || reload {
			uc.Effect = EffectUpdate
		}
	case spec.Oneshot:
		uc.After = st.ActiveState
		if create || restart || reload {
			uc.Effect = EffectRun
			if create {
				uc.Effect = EffectCreate
			}
			if isRunning {
				stop("run again with the new definition")
			}
			start("run the oneshot job")
			uc.After = "ran"
		}
	}
	b.p.Units = append(b.p.Units, uc)
}

func (b *builder) pull(ref, owner string) {
	if b.pulls[ref] {
		return
	}
	b.pulls[ref] = true
	b.add(Action{Op: OpPull, Target: ref, Unit: owner, Reason: "not in the image store"}, 0)
}

// stale plans installed units that no spec declares any more.
func (b *builder) stale() {
	names := make([]string, 0, len(b.inst))
	for n := range b.inst {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, c := b.inst[names[i]], b.inst[names[j]]
		if a.kind != c.kind {
			return kindRank(a.kind) > kindRank(c.kind)
		}
		return a.name < c.name
	})
	for _, n := range names {
		iu := b.inst[n]
		if b.desired[n] != nil {
			continue
		}
		service := render.ServiceName(iu.kind, iu.name)
		b.p.Future[iu.fileName] = iu.data
		st := b.state(service, iu)
		uc := UnitChange{FileName: iu.fileName, Path: iu.path, Service: service, Kind: iu.kind, State: st, Before: beforeState(st), After: beforeState(st)}
		switch {
		case !iu.managed:
			uc.Effect = EffectIgnore
			b.p.Notes = append(b.p.Notes, Note{Unit: iu.fileName, Message: "not managed by syslet (no [X-Syslet] marker): left alone"})
		case b.heldStale(iu, &uc):
		case !iu.removalAllowed():
			uc.Effect = EffectKeep
			uc.Reasons = []string{"no spec declares it, but its installed marker says RemovalAllowed=false"}
			b.p.Notes = append(b.p.Notes, Note{Unit: iu.fileName, Message: "kept: no spec declares it, but its installed marker says RemovalAllowed=false"})
		default:
			delete(b.p.Future, iu.fileName)
			uc.Effect, uc.After = EffectRemove, "removed"
			uc.Reasons = []string{"no spec declares it"}
			uc.Keys = diffKeys(iu.file, &unit.File{})
			rank := kindRank(iu.kind)
			if running(st) || st.Failed() {
				b.add(Action{Op: OpStop, Target: service, Unit: n, Reason: "removed"}, rank)
			}
			b.add(Action{Op: OpRemoveUnit, Target: iu.path, Unit: n, Reason: "no spec declares it"}, rank)
			var dir string
			switch iu.kind {
			case spec.Container:
				dir = render.ConfigDirOf(iu.name)
			case spec.Build:
				dir = render.BuildDirOf(iu.name)
			}
			if _, ok := b.obs.Files[dir]; ok && dir != "" {
				b.add(Action{Op: OpRemoveFile, Target: dir, Root: path.Dir(dir), Unit: n, Reason: "its unit is removed"}, rank)
			}
			if res := iu.resourceName(); res != "" && iu.kind != spec.Container {
				if iu.reclaimDelete() {
					op := map[spec.Kind]Op{spec.Volume: OpDeleteVolume, spec.Network: OpDeleteNetwork, spec.Build: OpDeleteImage}[iu.kind]
					b.add(Action{Op: op, Target: res, Unit: n, Reason: "reclaimPolicy Delete"}, rank)
					uc.Reasons = append(uc.Reasons, "reclaimPolicy Delete: "+res+" is deleted")
				} else {
					uc.Reasons = append(uc.Reasons, "reclaimPolicy Retain: "+res+" is kept in podman")
				}
			}
		}
		b.p.Units = append(b.p.Units, uc)
	}
}

// orphans removes config and build directories that belong to no unit at
// all, desired or installed (left behind by an interrupted run or an
// older syslet).
func (b *builder) orphans() {
	for p, f := range b.obs.Files {
		if !f.Mode.IsDir() {
			continue
		}
		var ext string
		switch path.Dir(p) {
		case render.ConfigRoot:
			ext = ".container"
		case render.BuildRoot:
			ext = ".build"
		default:
			continue
		}
		fn := path.Base(p) + ext
		if b.desired[fn] != nil || b.inst[fn] != nil {
			continue
		}
		b.add(Action{Op: OpRemoveFile, Target: p, Root: path.Dir(p), Reason: "no unit owns it"}, 9)
	}
}

func (b *builder) finish() {
	if b.p.WritesUnits() {
		b.add(Action{Op: OpDaemonReload, Target: "systemd", Reason: "unit files changed"}, 0)
	} else {
		for _, u := range b.p.Units {
			if u.State.NeedDaemonReload && u.Effect != EffectIgnore {
				b.add(Action{Op: OpDaemonReload, Target: "systemd", Reason: "systemd has not loaded the current unit file of " + u.Service}, 0)
				break
			}
		}
	}
	// Unit files syslet does not manage stay in the future set, as do
	// drop-ins and anything in subdirectories: staging must see what
	// systemd will see.
	for p, f := range b.obs.Files {
		if !strings.HasPrefix(p, render.UnitDir+"/") || f.Mode.IsDir() {
			continue
		}
		rel := strings.TrimPrefix(p, render.UnitDir+"/")
		if f.Link != "" {
			continue
		}
		b.p.Current[rel] = f.Data
		if _, ok := b.inst[rel]; !ok {
			b.p.Future[rel] = f.Data
		}
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
