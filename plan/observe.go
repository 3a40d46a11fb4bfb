package plan

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// FileReader reads the trees syslet manages. Paths in the result are
// absolute host paths; directories are included with fs.ModeDir, symlinks
// with Link set.
type FileReader interface {
	ReadTree(dirs ...string) (map[string]host.File, error)
}

// UnitReader reports systemd unit states in one batched call.
type UnitReader interface {
	UnitStates(ctx context.Context, names []string) (map[string]host.UnitState, error)
}

// ReloadReader reports the units whose files changed since systemd loaded
// them. A UnitReader that also implements it is asked when a unit file is
// newer than systemd's last load: a converged host costs one call.
type ReloadReader interface {
	UnitsLoadedAt(ctx context.Context) (time.Time, error)
	NeedDaemonReload(ctx context.Context, names []string) (map[string]bool, error)
}

// StoreReader reads podman's secret and image stores.
type StoreReader interface {
	Secrets(ctx context.Context) ([]host.Secret, error)
	ImageExists(ctx context.Context, ref string) (bool, error)
	// ImageID is the ID of the image ref names ("" when there is none).
	ImageID(ctx context.Context, ref string) (string, error)
}

// Sources are the readers Observe uses. Units and Store may be nil: a
// host without them reads as "nothing running, nothing stored".
type Sources struct {
	Files FileReader
	Units UnitReader
	Store StoreReader
	// Tags is set by `syslet update` alone: the registries are asked
	// about the tags running containers name (Observed.Tags). nil for
	// every other run, which never asks a registry.
	Tags TagReader
	// UpdateOnly narrows an update to these registry references (as
	// TaggedImage writes them: a registry's push notification names one);
	// nil asks about every tagged image.
	UpdateOnly []string
}

// Observed is the host as it was when the plan was made.
type Observed struct {
	Files   map[string]host.File      `json:"-"`
	Units   map[string]host.UnitState `json:"units"`
	Secrets map[string]host.Secret    `json:"secrets"`
	Images  map[string]bool           `json:"images"`
	// ImageIDs are the IDs of the images a pinned container's Image=
	// names (read only on a host that holds a rollback's pins): a pin of
	// the image its Image= resolves to anyway is removed without a
	// restart. Not part of a saved plan's fingerprint: the pins are.
	ImageIDs map[string]string `json:"-"`
	// Tags are, in an update only (Sources.Tags), what the registry's tag
	// and the host's image of each tagged image a running container names
	// say (updates.go).
	Tags map[string]Tag `json:"-"`
	// UnitsKnown and StoreKnown say whether systemd and podman were read.
	// Without them the plan assumes the host matches its installed files.
	UnitsKnown bool `json:"unitsKnown"`
	StoreKnown bool `json:"storeKnown"`
	// Leftovers are what an interrupted apply left in the managed trees
	// (temporary names, config dir versions ..data no longer names): they
	// are not in Files, the plan never weighs them, and the next apply
	// removes them.
	Leftovers []string `json:"leftovers,omitempty"`
}

// Observe reads every host fact the plan needs, each once: the managed
// file trees, the states of all relevant units in one call, the secret
// store in one call, and one existence check per distinct image. The
// three sources answer independently, so they are asked side by side:
// systemd and podman about what the specs name while the trees are read,
// then only about what the trees add (units installed but no longer
// declared, the secret store of a host syslet managed before).
func Observe(ctx context.Context, src Sources, out *render.Output) (*Observed, error) {
	obs := &Observed{Units: map[string]host.UnitState{}, Secrets: map[string]host.Secret{}, Images: map[string]bool{}}
	obs.UnitsKnown = src.Units != nil
	obs.StoreKnown = src.Store != nil
	declared := make([]string, 0, len(out.Units))
	for _, u := range out.Units {
		if !u.Template {
			declared = append(declared, u.Service)
		}
	}
	if autoUpdated(out) {
		// Whether podman's own updates would restart containers behind
		// syslet's back: the plan says so (updates.go).
		declared = append(declared, AutoUpdateTimer)
	}
	slices.Sort(declared)
	declared = slices.Compact(declared)
	rr, _ := src.Units.(ReloadReader)

	var (
		wg                         sync.WaitGroup
		files                      map[string]host.File
		filesErr, unitsErr, stoErr error
		loadedAt                   time.Time
		loadedAtErr                error
		secretsRead                bool
	)
	wg.Go(func() {
		files, filesErr = src.Files.ReadTree(layout.UnitDir, layout.ConfigRoot, layout.BuildRoot, layout.KubeRoot)
	})
	if src.Units != nil && len(declared) > 0 {
		wg.Go(func() {
			if obs.Units, unitsErr = src.Units.UnitStates(ctx, declared); unitsErr != nil {
				return
			}
			if rr != nil {
				loadedAt, loadedAtErr = rr.UnitsLoadedAt(ctx)
			}
		})
	}
	if src.Store != nil {
		// The secret store is read when secrets are declared (external
		// ones too: they must exist), or (below) when syslet has managed
		// this host before, to prune secrets it no longer declares: a
		// fresh host with no secrets never needs podman for it.
		secretsRead = len(out.Secrets) > 0 || len(out.ExternalSecrets) > 0
		wg.Go(func() {
			if secretsRead {
				if stoErr = readSecrets(ctx, src.Store, obs); stoErr != nil {
					return
				}
			}
			for _, ref := range imagesToCheck(out) {
				ok, err := src.Store.ImageExists(ctx, ref)
				if err != nil {
					stoErr = fmt.Errorf("checking image %q: %w", ref, err)
					return
				}
				obs.Images[ref] = ok
			}
		})
	}
	wg.Wait()
	switch {
	case filesErr != nil:
		return nil, fmt.Errorf("reading installed files: %w", filesErr)
	case unitsErr != nil:
		return nil, fmt.Errorf("reading unit states: %w", unitsErr)
	case stoErr != nil:
		return nil, stoErr
	}
	shareRendered(files, out)
	obs.Files, obs.Leftovers = files, splitLeftovers(files)
	if obs.Units == nil {
		obs.Units = map[string]host.UnitState{}
	}

	if src.Units != nil {
		var installed []string
		for _, s := range installedServices(files) {
			if !declaredHas(declared, s) {
				installed = append(installed, s)
			}
		}
		if len(installed) > 0 {
			slices.Sort(installed)
			st, err := src.Units.UnitStates(ctx, installed)
			if err != nil {
				return nil, fmt.Errorf("reading unit states: %w", err)
			}
			maps.Copy(obs.Units, st)
			if rr != nil && len(declared) == 0 {
				loadedAt, loadedAtErr = rr.UnitsLoadedAt(ctx)
			}
		}
		if rr != nil && len(obs.Units) > 0 && newerThanLoad(loadedAt, loadedAtErr, files) {
			var loaded []string
			for n, s := range obs.Units {
				if s.LoadState == "loaded" {
					loaded = append(loaded, n)
				}
			}
			slices.Sort(loaded)
			need, err := rr.NeedDaemonReload(ctx, loaded)
			if err != nil {
				return nil, err
			}
			for n := range need {
				s := obs.Units[n]
				s.NeedDaemonReload = true
				obs.Units[n] = s
			}
		}
	}
	if src.Store != nil && !secretsRead && managedBefore(files) {
		if err := readSecrets(ctx, src.Store, obs); err != nil {
			return nil, err
		}
	}
	if src.Store != nil {
		if err := readPinnedImages(ctx, src.Store, out, files, obs); err != nil {
			return nil, err
		}
	}
	if src.Tags != nil {
		if err := readTags(ctx, src.Tags, src.UpdateOnly, out, obs); err != nil {
			return nil, err
		}
	}
	return obs, nil
}

// readPinnedImages resolves the Image= of each container that holds a
// rollback's pin to the image's ID (Observed.ImageIDs). A host without
// pins asks podman for nothing.
func readPinnedImages(ctx context.Context, store StoreReader, out *render.Output, files map[string]host.File, obs *Observed) error {
	for _, u := range out.Units {
		if u.Kind != spec.Container || u.Template || u.Image == "" {
			continue
		}
		f, ok := files[layout.PinPath(u.FileName)]
		if _, ours := render.ParsePin(f.Data); !ok || !ours {
			continue
		}
		if _, done := obs.ImageIDs[u.Image]; done {
			continue
		}
		id, err := store.ImageID(ctx, u.Image)
		if err != nil {
			return fmt.Errorf("inspecting image %q: %w", u.Image, err)
		}
		if obs.ImageIDs == nil {
			obs.ImageIDs = map[string]string{}
		}
		obs.ImageIDs[u.Image] = id
	}
	return nil
}

// shareRendered makes each unit file that holds exactly what is rendered
// for it hold the rendered bytes themselves (render.Unit.Content), not a
// copy: on a converged host every unit file is one, and the planning held
// both, 16 MB for a hundred thousand units.
func shareRendered(files map[string]host.File, out *render.Output) {
	for _, u := range out.Units {
		if u.Content == nil {
			continue
		}
		if f, ok := files[u.Path]; ok && f.Link == "" && f.Streamed == nil && bytes.Equal(f.Data, u.Content) {
			f.Data = u.Content
			files[u.Path] = f
		}
	}
}

func declaredHas(sorted []string, s string) bool {
	_, ok := slices.BinarySearch(sorted, s)
	return ok
}

func readSecrets(ctx context.Context, st StoreReader, obs *Observed) error {
	secs, err := st.Secrets(ctx)
	if err != nil {
		return fmt.Errorf("listing podman secrets: %w", err)
	}
	for _, s := range secs {
		obs.Secrets[s.Name] = s
	}
	return nil
}

// newerThanLoad reports whether any unit file changed after systemd last
// loaded units; when systemd cannot say, it answers yes.
func newerThanLoad(at time.Time, err error, files map[string]host.File) bool {
	if err != nil || at.IsZero() {
		return true
	}
	for p, f := range files {
		if strings.HasPrefix(p, layout.UnitDir+"/") && f.Modified().After(at) {
			return true
		}
	}
	return false
}

// imagesToCheck lists the distinct registry images of containers that are
// meant to run, and the images builds and image units make.
func imagesToCheck(out *render.Output) []string {
	var refs []string
	for _, u := range out.Units {
		switch {
		case u.Kind.Quadlet().Runs() && u.Image != "" && u.State != spec.Stopped && !u.Template:
			refs = append(refs, u.Image)
		case u.Kind.Quadlet().Object == unit.ObjectImage && u.Resource != "":
			refs = append(refs, u.Resource)
		}
	}
	slices.Sort(refs)
	return slices.Compact(refs)
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

// splitLeftovers removes from files what an interrupted apply left behind
// — every name layout.Leftover recognises, and in a config dir every
// version directory its ..data link does not name — with everything
// below them, and returns the topmost of those paths, sorted.
func splitLeftovers(files map[string]host.File) []string {
	var top []string
	for p, f := range files {
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			continue
		}
		dir, base := p[:i], p[i+1:]
		if layout.Leftover(base) {
			top = append(top, p)
			continue
		}
		if _, ok := layout.Version(base); ok && f.Mode.IsDir() && strings.HasPrefix(p, layout.ConfigRoot+"/") {
			if d, ok := files[dir+"/"+layout.DataLink]; ok && d.Link != "" && d.Link != base {
				top = append(top, p)
			}
		}
	}
	if len(top) == 0 {
		return nil
	}
	slices.Sort(top)
	kept := top[:0]
	for _, p := range top {
		if len(kept) > 0 && strings.HasPrefix(p, kept[len(kept)-1]+"/") {
			continue
		}
		kept = append(kept, p)
	}
	set := make(map[string]bool, len(kept))
	for _, p := range kept {
		set[p] = true
	}
	for p := range files {
		for a := p; ; {
			if set[a] {
				delete(files, p)
				break
			}
			i := strings.LastIndexByte(a, '/')
			if i <= 0 {
				break
			}
			a = a[:i]
		}
	}
	return kept
}
