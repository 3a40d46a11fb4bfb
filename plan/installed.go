package plan

import (
	"path"

	"github.com/syslet/syslet/pkg/host"
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

func (b *builder) readInstalled() {
	b.installedImages = map[string]bool{}
	for p, f := range b.obs.Files {
		k, name, ok := installedUnitName(p)
		if !ok || f.Mode.IsDir() || f.Link != "" {
			continue
		}
		iu := &installedUnit{path: p, fileName: path.Base(p), name: name, kind: k, data: f.Data, host: f}
		if uf, err := unit.Parse(f.Data); err == nil {
			iu.file = uf
			iu.managed = unit.Managed(uf)
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

func markerPolicy(iu *installedUnit) string {
	v, ok := iu.file.Last(unit.Syslet, unit.KeyReclaimPolicy)
	if !ok {
		return "(unset)"
	}
	return v
}
