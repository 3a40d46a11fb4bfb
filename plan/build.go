package plan

import (
	"slices"
	"strings"
	"sync"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

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
	desired  map[string]*render.Unit         // by unit file name
	ownFiles map[string][]render.File        // desired files by owner unit file
	ownDirs  map[string][]render.Dir         // desired config dirs by owner unit file
	under    map[string][]string             // observed paths by the config or build root holding them
	children map[string][]string             // observed paths by parent directory
	dirFiles map[string]map[string]host.File // config dirs as read, by path (configDir)
	dropIns  map[string][]byte               // drop-ins this plan writes (content) or removes (nil), relative to the unit dir
	// held are the units left as they are because they were edited by
	// hand (a held template holds its instances too); filesChanged the
	// templates whose config files changed (their instances restart).
	heldUnits   map[string]bool
	dirsChanged map[string]bool // templates whose config dirs changed (their instances reload)
	// The drop-ins of the unit directory as read (dropins.go), and their
	// names by directory.
	curDropIns   map[string][]byte
	curDirs      map[string][]string
	roots        map[string]string // files roots of desired units → a unit keeping it (stale.go)
	filesChanged map[string]bool
	// lifted are the pinned containers an update runs on their tag's new
	// image: their pins go (updates.go, pins.go).
	lifted map[string]bool
}

// Build compares desired and observed state and returns the plan. It is
// pure: the same inputs and options always give the same plan. Options
// are the guardrails' switches (drift.go).
func Build(out *render.Output, obs *Observed, opts Options) *Plan {
	b := &builder{opts: opts, out: out, obs: obs, p: &Plan{}, inst: map[string]*installedUnit{},
		recreated: map[string]bool{}, secrets: map[string]bool{}, pulls: map[string]bool{}, dropIns: map[string][]byte{},
		heldUnits: map[string]bool{}, filesChanged: map[string]bool{}, dirsChanged: map[string]bool{}, lifted: map[string]bool{}}
	// Each desired unit gets one entry (stale ones a few more): sized
	// once, not grown by doubling through a hundred thousand of them. A
	// plan of no units keeps a nil list (its JSON "units": null).
	if len(out.Units) > 0 {
		b.p.Units = make([]UnitChange, 0, len(out.Units))
	}
	// The desired units come first: reading an installed unit that is
	// byte for byte what is rendered reuses the rendered one.
	b.desired = make(map[string]*render.Unit, len(out.Units))
	for _, u := range out.Units {
		b.desired[u.FileName] = u
	}
	// Indexing the desired and observed files and parsing the installed
	// units touch different parts of the builder: done side by side.
	var wg sync.WaitGroup
	wg.Go(b.readInstalled)
	b.index()
	wg.Wait()
	// Resources first, then what runs in the kind table's order, which is
	// the order of dependence: a pod before its containers (which restart
	// with it), containers before kube units.
	for _, u := range out.Units {
		if !runs(u.Kind) {
			b.resource(u)
		}
	}
	b.secretChanges()
	for _, k := range spec.Kinds {
		if !runs(k) {
			continue
		}
		for _, u := range out.Units {
			if u.Kind == k {
				b.container(u)
			}
		}
	}
	b.stale()
	b.orphans()
	b.autoUpdateWarnings(out)
	b.p.Refusals = append(b.p.Refusals, linkRefusals(out, obs)...)
	b.finish()
	b.p.Leftovers = obs.Leftovers
	return b.p
}

func (b *builder) index() {
	b.ownFiles, b.ownDirs = map[string][]render.File{}, map[string][]render.Dir{}
	for _, f := range b.out.Files {
		b.ownFiles[f.Owner] = append(b.ownFiles[f.Owner], f)
	}
	for _, d := range b.out.Dirs {
		b.ownDirs[d.Owner] = append(b.ownDirs[d.Owner], d)
	}
	b.under, b.children = map[string][]string{}, map[string][]string{}
	// Observed paths are clean and absolute, so parents and the per-owner
	// directories are prefixes of the path itself: slices, no allocation.
	for p := range b.obs.Files {
		if i := strings.LastIndexByte(p, '/'); i > 0 {
			b.children[p[:i]] = append(b.children[p[:i]], p)
		}
		for _, root := range filesRoots {
			if len(p) > len(root)+1 && p[len(root)] == '/' && strings.HasPrefix(p, root) {
				end := len(p)
				if i := strings.IndexByte(p[len(root)+1:], '/'); i >= 0 {
					end = len(root) + 1 + i
				}
				b.under[p[:end]] = append(b.under[p[:end]], p)
			}
		}
	}
}

func (b *builder) add(a Action, rank int) {
	a.Step, a.rank = StepOf(a.Op), int32(rank)
	a.Irreversible = irreversible[a.Op]
	if a.Payload != nil && a.Content != nil {
		a.Digest = contentDigest(a.Content)
	}
	b.p.Actions = append(b.p.Actions, a)
}

// unwrite takes back the unit write planned for path.
func (b *builder) unwrite(path string) {
	for i := len(b.p.Actions) - 1; i >= 0; i-- {
		if a := b.p.Actions[i]; a.Op == OpWriteUnit && a.Target == path {
			b.p.Actions = append(b.p.Actions[:i], b.p.Actions[i+1:]...)
			return
		}
	}
}

// irreversible are the ops no rollback undoes: what they delete is gone.
var irreversible = map[Op]bool{OpDeleteVolume: true, OpDeleteNetwork: true, OpDeleteImage: true}

// runs reports whether a kind's service runs something (and is started,
// restarted and stopped like a container) rather than creating a podman
// object once.
func runs(k spec.Kind) bool { q := k.Quadlet(); return q != nil && q.Runs() }

// filesRoots are the directories holding the files syslet writes for
// units besides the unit files (the kinds' FilesRoot: config files, build
// contexts, kube YAML), one directory per unit.
var filesRoots = func() []string {
	var roots []string
	for _, k := range unit.Kinds {
		if k.FilesRoot != "" {
			roots = append(roots, k.FilesRoot)
		}
	}
	return roots
}()

func kindRank(k spec.Kind) int {
	return slices.Index(spec.Kinds, k)
}

func newChange(u *render.Unit) UnitChange {
	return UnitChange{FileName: u.FileName, Path: u.Path, Service: u.Service, Kind: u.Kind, Effect: EffectNone,
		Source: u.Origin.String(), Template: u.Template, Instance: u.Instance}
}

func (b *builder) pull(ref, owner string) {
	if b.pulls[ref] {
		return
	}
	b.pulls[ref] = true
	b.add(Action{Op: OpPull, Target: ref, Unit: owner, Reason: "not in the image store"}, 0)
}
