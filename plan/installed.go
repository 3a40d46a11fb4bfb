package plan

import (
	"bytes"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/parallel"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// installedUnit is a unit file found in the unit directory.
type installedUnit struct {
	path, fileName, name string
	kind                 spec.Kind
	data                 []byte
	perm                 uint32 // as read: a private unit's diffs are hidden
	// file is the unit as parsed: the rendered unit's File when data is
	// exactly its bytes and it is at hand as data, or while stale plans the
	// unit. Otherwise it is nil and parsed() parses data when asked: a
	// hundred thousand installed units no spec declares held 58 MB of
	// parsed files at once, each needed only while its own removal was
	// planned.
	file *unit.File
	// What the file says of itself, read once: parses is false when data
	// is no unit file; runs is whether, with systemd not read, its
	// service counts as running (state); same is whether data is exactly
	// what is rendered for it (every unit of a converged host).
	parses, runs, same bool
	// managed: carries the [X-Syslet] marker; an instance link is
	// syslet's when its template is and lists it (KeyInstance).
	managed bool
	service string // what quadlet names its service (ServiceName= included)
	// recorded are the files its marker records, by path (FileDigest=).
	recorded map[string]string
	// Templates: template is set on NAME@.KIND; an instance is a link
	// (link: the template's file name it points to) and data is the
	// template's.
	template bool
	instance string
	link     string
}

// parsed is the installed unit as a unit file (nil when it is none).
func (iu *installedUnit) parsed() *unit.File {
	if iu.file != nil || !iu.parses {
		return iu.file
	}
	uf, err := unit.Parse(iu.data)
	if err != nil {
		return nil
	}
	return uf
}

// holding runs f with the unit's parse kept, for what reads it many
// times over (a stale unit's removal), and lets it go afterwards unless
// it is the rendered unit.
func (iu *installedUnit) holding(f func()) {
	if iu.file != nil {
		f()
		return
	}
	iu.file = iu.parsed()
	f()
	iu.file = nil
}

// removalAllowed reads the installed marker; only an explicit "false"
// forbids removal.
func (iu *installedUnit) removalAllowed() bool {
	v, _ := iu.parsed().Last(unit.Syslet, unit.KeyRemovalAllowed)
	return v != "false"
}

// reclaimDelete reads the installed marker; podman data is only ever
// deleted when the marker explicitly says Delete.
func (iu *installedUnit) reclaimDelete() bool {
	v, _ := iu.parsed().Last(unit.Syslet, unit.KeyReclaimPolicy)
	return v == string(spec.Delete)
}

// backedUp reads the installed marker: a volume's data is exported before
// it is deleted unless the marker explicitly says Backup=false.
func (iu *installedUnit) backedUp() bool {
	v, _ := iu.parsed().Last(unit.Syslet, unit.KeyBackup)
	return v != "false"
}

// outlives reports whether a unit of kind k manages a podman object that
// outlives its service: the kinds with a reclaimPolicy, which says what
// becomes of it when the unit goes.
func outlives(k spec.Kind) bool { return k.Accepts("reclaimPolicy") }

// resourceName is the podman object an installed unit manages that
// outlives its service, the kinds with a reclaimPolicy (volumes,
// networks, builds' and image units' images); "" for the kinds whose
// object goes with their service: pods, kube units, artifacts,
// containers.
func (iu *installedUnit) resourceName() string { return resourceOf(iu.kind, iu.name, iu.parsed()) }

// resourceOf is resourceName for a unit of kind k named name that reads f.
func resourceOf(k spec.Kind, name string, f *unit.File) string {
	if !outlives(k) {
		return ""
	}
	return k.Quadlet().ObjectName(name, f)
}

// installed is the host as read, indexed for planning: the units of the
// unit directory and what they stand for, the observed paths by the
// files root holding them and by parent, and the drop-ins.
type installed struct {
	units map[string]*installedUnit // by file name
	// images are the images installed managed units run or build, which
	// stand in for the image store when podman is not read.
	images   map[string]bool
	under    map[string][]string // observed paths by the config or build root holding them
	children map[string][]string // observed paths by parent directory
	dropIns  dropIns             // the unit directory's drop-ins (dropins.go)
}

// readInstalled reads the unit files of the unit directory: what each
// says of itself, and whether it is what is rendered for it (desired, by
// file name).
func readInstalled(obs *Observed, desired map[string]*render.Unit) installed {
	have := installed{units: map[string]*installedUnit{}, images: map[string]bool{}}
	var units []*installedUnit
	var rendered []*render.Unit // the desired unit of the same file, if any
	for p, f := range obs.Files {
		fileName, k, ok := installedFile(p)
		if !ok || f.Mode.IsDir() {
			continue
		}
		iu := &installedUnit{path: p, fileName: fileName, name: unitBase(fileName, k), kind: k, data: f.Data, perm: uint32(f.Mode.Perm())}
		tmpl, inst, isTemplate := layout.Template(fileName)
		switch {
		case f.Link != "":
			// Only an instance's link to its template beside it is a unit
			// syslet reads; other links are not syslet's to judge.
			t, ok := obs.Files[layout.UnitPath(tmpl)]
			if !isTemplate || inst == "" || f.Link != tmpl || !ok || t.Link != "" || t.Mode.IsDir() {
				continue
			}
			iu.link, iu.instance, iu.data = tmpl, inst, t.Data
		case isTemplate && inst == "":
			iu.template = true
		}
		units = append(units, iu)
		var d *render.Unit
		if r := desired[fileName]; r != nil && r.Link == "" && f.Link == "" {
			d = r
		}
		rendered = append(rendered, d)
	}
	// Each unit is read on its own, so a big unit directory is read on
	// all CPUs (a tenth of planning against 106,888 installed units).
	// What the plan reads of every unit is kept; the parse only when it
	// is the rendered unit's own File.
	images := make([]string, len(units)) // what each stands in the image store for
	parallel.Run(parallel.Parts(len(units), 1024), len(units), func(_, lo, hi int) {
		for i, iu := range units[lo:hi] {
			if img := iu.read(rendered[lo+i]); img != "" {
				images[lo+i] = img
			}
		}
	})
	for i, iu := range units {
		if images[i] != "" {
			have.images[images[i]] = true
		}
		have.units[iu.fileName] = iu
	}
	// An instance link is syslet's when its template is and lists it.
	for _, iu := range have.units {
		if iu.link == "" {
			continue
		}
		if t := have.units[iu.link]; t != nil && t.managed && slices.Contains(t.parsed().Lookup(unit.Syslet, unit.KeyInstance), iu.instance) {
			iu.managed = true
		}
	}
	return have
}

// read reads what the installed unit says of itself, d being the unit
// rendered for the same file (nil for none), and returns the image it
// stands in the image store for ("" for none).
func (iu *installedUnit) read(d *render.Unit) string {
	var uf *unit.File
	var err error
	switch {
	case d != nil && d.File == nil && bytes.Equal(iu.data, d.Content):
		// Installed as rendered, and the rendering is kept as bytes.
		iu.same = true
		uf, err = unit.Parse(iu.data)
	case d != nil:
		// Installed as rendered (the common case) is not parsed again:
		// the rendered file is what the host's one reads as.
		uf, err = unit.ParseKnown(iu.data, d.File)
		if err == nil && uf == d.File {
			iu.file, iu.same = uf, true
		}
	default:
		uf, err = unit.Parse(iu.data)
	}
	if err != nil {
		iu.service = unit.ServiceOf(iu.fileName, nil)
		return ""
	}
	iu.parses = true
	iu.managed = unit.Managed(uf) && iu.link == ""
	if iu.same {
		iu.service = d.Service // the same name, not made again
	} else {
		iu.service = unit.ServiceOf(iu.fileName, uf)
	}
	iu.runs = runsUnstarted(iu.kind, uf)
	iu.recorded = recordedFiles(uf)
	if iu.managed {
		return installedImage(iu, uf)
	}
	return ""
}

// installedImage is the image a managed installed unit runs or builds
// ("" for none): the stand-in for podman's image store when it is not
// read.
func installedImage(iu *installedUnit, uf *unit.File) string {
	switch k := iu.kind.Quadlet(); {
	case k.Object == unit.ObjectImage:
		return resourceOf(iu.kind, iu.name, uf)
	case k.Runs():
		img, _ := uf.Last(k.Section, unit.KeyImage)
		return img
	}
	return ""
}

// runsUnstarted reports whether a unit's service counts as running when
// systemd is not read: a kind whose service stays active once started
// (Remains), and a container that is started at boot and not a oneshot.
func runsUnstarted(k spec.Kind, uf *unit.File) bool {
	switch q := k.Quadlet(); {
	case q.Remains:
		return true
	case q.Runs():
		t, _ := uf.Last(unit.Service, unit.KeyType)
		return t != "oneshot" && len(uf.Lookup(unit.Install, unit.KeyWantedBy)) > 0
	}
	return false
}

// unitBase is the spec name a unit file belongs to: "web" for
// web.container, web@.container and web@1.container.
func unitBase(fileName string, k spec.Kind) string {
	base := strings.TrimSuffix(fileName, k.Ext())
	if t, _, ok := strings.Cut(base, "@"); ok {
		return t
	}
	return base
}

// state is the unit's current state. Without a systemd reader the plan
// assumes the host matches its installed files: installed units that run
// are running, everything else is inactive.
func (in *inputs) state(service string, iu *installedUnit) host.UnitState {
	if in.obs.UnitsKnown {
		if st, ok := in.obs.Units[service]; ok {
			return st
		}
		return host.UnitState{Name: service, LoadState: "not-found", ActiveState: "inactive"}
	}
	st := host.UnitState{Name: service, LoadState: "not-found", ActiveState: "inactive"}
	if iu == nil || !iu.parses {
		return st
	}
	st.LoadState = "loaded"
	if iu.runs {
		st.ActiveState = "active"
	}
	return st
}

// imagePresent reports whether ref is in podman's image store. Without a
// store reader, an image counts as present when an installed container
// already runs it.
func (in *inputs) imagePresent(ref string) bool {
	if in.obs.StoreKnown {
		return in.obs.Images[ref]
	}
	return in.have.images[ref]
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

func markerPolicy(iu *installedUnit) string {
	v, ok := iu.parsed().Last(unit.Syslet, unit.KeyReclaimPolicy)
	if !ok {
		return "(unset)"
	}
	return v
}

// installedFile recognises a top-level quadlet unit file of the unit
// directory: its file name and kind.
func installedFile(p string) (string, spec.Kind, bool) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 || p[:i] != layout.UnitDir {
		return "", "", false
	}
	base := p[i+1:]
	k := spec.KindOfFile(base)
	if k == "" || base == k.Ext() || strings.HasPrefix(base, ".") {
		return "", "", false
	}
	return base, k, true
}

// installedServices lists the services of the installed units (as
// quadlet names them: ServiceName= read from the file), without
// templates, which have none to start or stop, and without links other
// than an instance's to its template beside it.
func installedServices(files map[string]host.File) []string {
	var out []string
	for p, f := range files {
		fileName, _, ok := installedFile(p)
		if !ok || f.Mode.IsDir() {
			continue
		}
		data := f.Data
		tmpl, inst, isTemplate := layout.Template(fileName)
		switch {
		case isTemplate && inst == "" && f.Link == "":
			continue
		case f.Link != "":
			t, ok := files[layout.UnitPath(tmpl)]
			if !isTemplate || inst == "" || f.Link != tmpl || !ok || t.Link != "" {
				continue
			}
			data = t.Data
		}
		svc := unit.DefaultService(fileName)
		if bytes.Contains(data, []byte(unit.KeyServiceName)) {
			if uf, err := unit.Parse(data); err == nil {
				svc = unit.ServiceOf(fileName, uf)
			}
		}
		out = append(out, svc)
	}
	return out
}

// managedBefore reports whether any unit file in the unit directory looks
// like one syslet wrote.
func managedBefore(files map[string]host.File) bool {
	for p, f := range files {
		if _, _, ok := installedFile(p); ok && f.Link == "" {
			if uf, err := unit.Parse(f.Data); err == nil && unit.Managed(uf) {
				return true
			}
		}
	}
	return false
}
