package plan

import (
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/parallel"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// installedUnit is a unit file found in the unit directory.
type installedUnit struct {
	path, fileName, name string
	kind                 spec.Kind
	data                 []byte
	host                 host.File  // as read: its mode hides a private unit's diffs
	file                 *unit.File // nil when the file does not parse
	// managed: carries the [X-Syslet] marker; an instance link is
	// syslet's when its template is and lists it (KeyInstance).
	managed bool
	service string // what quadlet names its service (ServiceName= included)
	// Templates: template is set on NAME@.KIND; an instance is a link
	// (link: the template's file name it points to) and data is the
	// template's.
	template bool
	instance string
	link     string
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

// resourceName is the podman object an installed volume, network, build
// or image unit manages ("" for the kinds whose object goes with their
// service: pods, kube units, artifacts, containers).
func (iu *installedUnit) resourceName() string {
	switch iu.kind {
	case spec.Image:
		if v, ok := iu.file.Last(unit.Image, unit.KeyImageTag); ok && v != "" {
			return v
		}
		v, _ := iu.file.Last(unit.Image, unit.KeyImage)
		return v
	case spec.Volume, spec.Network, spec.Build:
	default:
		return ""
	}
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

func (b *builder) readInstalled() {
	b.installedImages = map[string]bool{}
	type read struct {
		iu    *installedUnit
		known *unit.File
	}
	var units []read
	for p, f := range b.obs.Files {
		fileName, k, ok := installedFile(p)
		if !ok || f.Mode.IsDir() {
			continue
		}
		iu := &installedUnit{path: p, fileName: fileName, name: unitBase(fileName, k), kind: k, data: f.Data, host: f}
		tmpl, inst, isTemplate := layout.Template(fileName)
		switch {
		case f.Link != "":
			// Only an instance's link to its template beside it is a unit
			// syslet reads; other links are not syslet's to judge.
			t, ok := b.obs.Files[layout.UnitPath(tmpl)]
			if !isTemplate || inst == "" || f.Link != tmpl || !ok || t.Link != "" || t.Mode.IsDir() {
				continue
			}
			iu.link, iu.instance, iu.data = tmpl, inst, t.Data
		case isTemplate && inst == "":
			iu.template = true
		}
		// A unit installed as rendered (the common case) is not parsed
		// again: the rendered file is what the host's one reads as.
		var known *unit.File
		if d := b.desired[fileName]; d != nil && d.Link == "" && f.Link == "" {
			known = d.File
		}
		units = append(units, read{iu, known})
	}
	// Each unit is read on its own, so a big unit directory is read on
	// all CPUs (a tenth of planning against 106,888 installed units).
	parallel.Run(parallel.Parts(len(units), 1024), len(units), func(_, lo, hi int) {
		for _, r := range units[lo:hi] {
			iu := r.iu
			if uf, err := unit.ParseKnown(iu.data, r.known); err == nil {
				iu.file = uf
				iu.managed = unit.Managed(uf) && iu.link == ""
			}
			iu.service = unit.ServiceOf(iu.fileName, iu.file)
		}
	})
	for _, r := range units {
		iu := r.iu
		if iu.managed {
			switch iu.kind {
			case spec.Container:
				if img, ok := iu.file.Last(unit.Container, unit.KeyImage); ok {
					b.installedImages[img] = true
				}
			case spec.Build:
				if tag, ok := iu.file.Last(unit.Build, unit.KeyImageTag); ok {
					b.installedImages[tag] = true
				}
			case spec.Image:
				if res := iu.resourceName(); res != "" {
					b.installedImages[res] = true
				}
			}
		}
		b.inst[iu.fileName] = iu
	}
	// An instance link is syslet's when its template is and lists it.
	for _, iu := range b.inst {
		if iu.link == "" {
			continue
		}
		if t := b.inst[iu.link]; t != nil && t.managed && slices.Contains(t.file.Lookup(unit.Syslet, unit.KeyInstance), iu.instance) {
			iu.managed = true
		}
	}
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
	case spec.Volume, spec.Network, spec.Pod, spec.Kube, spec.Image, spec.Artifact:
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

func markerPolicy(iu *installedUnit) string {
	v, ok := iu.file.Last(unit.Syslet, unit.KeyReclaimPolicy)
	if !ok {
		return "(unset)"
	}
	return v
}
