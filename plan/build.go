package plan

import (
	"slices"
	"strings"
	"sync"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/proxy"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// Build compares desired and observed state and returns the plan. It is
// pure: the same inputs and options always give the same plan. Options
// are the guardrails' switches (drift.go).
//
// It is the list of planning's stages, each a function of the inputs and
// of what the stages before it found, returning what it finds: the
// inputs indexed (inputs, with the installed units, installed.go), the
// secrets (secrets.go), each desired unit (units.go), what no spec
// declares any more (stale.go), and the order of the whole (future.go).
func Build(out *render.Output, obs *Observed, opts Options) *Plan {
	in := indexInputs(out, obs, opts)
	p := &Plan{NoBackups: opts.NoBackups}
	// Each desired unit gets one entry (stale ones a few more): sized
	// once, not grown by doubling through a hundred thousand of them. A
	// plan of no units keeps a nil list (its JSON "units": null).
	if len(out.Units) > 0 {
		p.Units = make([]UnitChange, 0, len(out.Units))
	}
	// Resources first, then what runs in the kind table's order, which is
	// the order of dependence: a pod before its containers (which restart
	// with it), containers before kube units. Each unit reads what the
	// units planned before it were told (before), and adds its own.
	var before decided
	for _, u := range out.Units {
		if !runs(u.Kind) {
			before.join(p, in.resource(u, &before))
		}
	}
	sec := in.secrets()
	p.join(sec.part)
	for _, k := range spec.Kinds {
		if !runs(k) {
			continue
		}
		for _, u := range out.Units {
			switch {
			case u.Kind != k:
			case u.Slot != nil:
				// A start-first container: its two slots are planned
				// together, from the blue one (slots.go).
				if u.Slot.Name == proxy.Blue {
					for _, up := range in.slotted(u, &before, sec.changed) {
						before.join(p, up)
					}
				}
			default:
				before.join(p, in.running(u, &before, sec.changed))
			}
		}
	}
	// Only the units no spec declares are planned here (usually none of a
	// big set). Room for them is made once: a unit change each, and about
	// three actions (stop, remove, delete). Grown a quarter at a time
	// instead, a removal of a hundred thousand units copied its plan some
	// twenty times over, each time into memory fresh from the kernel.
	gone := in.gone()
	p.Units = slices.Grow(p.Units, len(gone))
	p.Actions = slices.Grow(p.Actions, 3*len(gone))
	var roots map[string]string
	if len(gone) > 0 {
		roots = rootsOf(out)
	}
	for _, iu := range gone {
		before.join(p, in.stale(iu, roots, &before))
	}
	if up, ok := in.proxy(); ok {
		before.join(p, up)
	}
	p.Actions = append(p.Actions, in.orphans()...)
	p.join(in.staleSockets())
	p.Warnings = append(p.Warnings, autoUpdateWarnings(out, obs)...)
	p.StaleImages = staleImages(out, obs, opts.Pins, p.Units)
	p.Refusals = append(p.Refusals, linkRefusals(out, obs)...)
	finish(p, in.have.units)
	p.Leftovers = obs.Leftovers
	return p
}

// inputs are what every stage of planning reads and none changes: the
// rendered set, the host as observed and the options, with the indexes
// made of them once, so that planning stays linear in the number of units
// and files.
type inputs struct {
	opts Options
	out  *render.Output
	obs  *Observed
	want desired
	have installed
	// savedState is the proxy's saved server state, read once (slots.go).
	savedState proxy.State
}

// desired is the rendered set indexed by unit file.
type desired struct {
	units map[string]*render.Unit
	files map[string][]render.File // by owner unit file
	dirs  map[string][]render.Dir  // config dirs by owner unit file
}

// indexInputs indexes the inputs. The desired units come first: reading an
// installed unit that is byte for byte what is rendered reuses the
// rendered one. Indexing the observed files and parsing the installed
// units read different things: done side by side.
func indexInputs(out *render.Output, obs *Observed, opts Options) *inputs {
	in := &inputs{opts: opts, out: out, obs: obs, want: desired{units: make(map[string]*render.Unit, len(out.Units)),
		files: map[string][]render.File{}, dirs: map[string][]render.Dir{}}}
	for _, u := range out.Units {
		in.want.units[u.FileName] = u
	}
	var wg sync.WaitGroup
	wg.Go(func() { in.have = readInstalled(obs, in.want.units) })
	for _, f := range out.Files {
		in.want.files[f.Owner] = append(in.want.files[f.Owner], f)
	}
	for _, d := range out.Dirs {
		in.want.dirs[d.Owner] = append(in.want.dirs[d.Owner], d)
	}
	under, children, dropIns := indexFiles(obs.Files)
	wg.Wait()
	in.have.under, in.have.children, in.have.dropIns = under, children, dropIns
	return in
}

// indexFiles indexes the observed paths by the config or build root
// holding them (under) and by parent directory (children), and reads the
// drop-ins of the unit directory (dropins.go).
func indexFiles(files map[string]host.File) (under, children map[string][]string, d dropIns) {
	under, children, d = map[string][]string{}, map[string][]string{}, dropIns{}
	// Observed paths are clean and absolute, so parents and the per-owner
	// directories are prefixes of the path itself: slices, no allocation.
	for p, f := range files {
		if i := strings.LastIndexByte(p, '/'); i > 0 {
			children[p[:i]] = append(children[p[:i]], p)
		}
		for _, root := range filesRoots {
			if len(p) > len(root)+1 && p[len(root)] == '/' && strings.HasPrefix(p, root) {
				end := len(p)
				if i := strings.IndexByte(p[len(root)+1:], '/'); i >= 0 {
					end = len(root) + 1 + i
				}
				under[p[:end]] = append(under[p[:end]], p)
			}
		}
		if rel, ok := dropInFile(p, f); ok {
			d.set(rel, f.Data)
		}
	}
	return under, children, d
}

// rootsOf are the files roots of the desired units, each with a unit
// keeping it (stale.go).
func rootsOf(out *render.Output) map[string]string {
	roots := map[string]string{}
	for _, u := range out.Units {
		if r := filesRoot(u.Kind, u.Name); r != "" && u.Link == "" {
			roots[r] = u.FileName
		}
	}
	return roots
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
