package plan

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path"
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
	// Proxy reads the reverse proxy's files and facts (proxy.go); nil:
	// the host has none.
	Proxy ProxyReader
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
	// Containers are the IDs of the images the running containers of
	// registry tags were created from, by podman's container name
	// (running.go); ImageIDs then holds the IDs their tags name.
	Containers map[string]string `json:"-"`
	// UnitsKnown and StoreKnown say whether systemd and podman were read.
	// Without them the plan assumes the host matches its installed files.
	UnitsKnown bool `json:"unitsKnown"`
	StoreKnown bool `json:"storeKnown"`
	// Proxy is what the host says of the reverse proxy of the start-first
	// containers beyond its files (which are in Files): read when the
	// Sources have a ProxyReader.
	Proxy ProxyFacts `json:"-"`
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
	declared := declaredServices(out)
	first, err := readDeclared(ctx, src, out, declared, obs)
	if err != nil {
		return nil, err
	}
	files := first.files
	maps.Copy(files, first.proxyFiles)
	shareRendered(files, out)
	obs.Files, obs.Leftovers = files, splitLeftovers(files)
	if obs.Units == nil {
		obs.Units = map[string]host.UnitState{}
	}
	if src.Units != nil {
		if err := readInstalledStates(ctx, src.Units, declared, first, obs); err != nil {
			return nil, err
		}
	}
	if src.Store != nil && !first.secretsRead && managedBefore(files) {
		if err := readSecrets(ctx, src.Store, obs); err != nil {
			return nil, err
		}
	}
	if src.Store != nil {
		if err := readPinnedImages(ctx, src.Store, out, files, obs); err != nil {
			return nil, err
		}
		if err := readRunning(ctx, src.Store, out, obs); err != nil {
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

// declaredServices are the services systemd is asked about first, sorted:
// the specs' (a template has none of its own), and podman's update timer
// when a container sets AutoUpdate=.
func declaredServices(out *render.Output) []string {
	declared := make([]string, 0, len(out.Units))
	for _, u := range out.Units {
		if !u.Template {
			declared = append(declared, u.Service)
		}
	}
	if out.Proxy != nil {
		declared = append(declared, layout.ProxyService)
	}
	if autoUpdated(out) {
		// Whether podman's own updates would restart containers behind
		// syslet's back: the plan says so (updates.go).
		declared = append(declared, AutoUpdateTimer)
	}
	slices.Sort(declared)
	return slices.Compact(declared)
}

// firstRead is what the first, side by side, reading of the host found
// besides what it put in Observed: the managed trees, when systemd last
// loaded its units, whether the secret store was read, and the proxy's
// files.
type firstRead struct {
	files       map[string]host.File
	proxyFiles  map[string]host.File
	loadedAt    time.Time
	loadedAtErr error
	secretsRead bool
}

// readDeclared reads the managed trees, and asks systemd and podman about
// what the specs name, side by side, into obs.
func readDeclared(ctx context.Context, src Sources, out *render.Output, declared []string, obs *Observed) (firstRead, error) {
	var (
		wg                         sync.WaitGroup
		first                      firstRead
		filesErr, unitsErr, stoErr error
		proxyErr                   error
	)
	wg.Go(func() {
		first.files, filesErr = src.Files.ReadTree(layout.UnitDir, layout.ConfigRoot, layout.BuildRoot, layout.KubeRoot)
		if filesErr == nil {
			filesErr = readSockets(src.Files, first.files)
		}
	})
	if src.Proxy != nil {
		wg.Go(func() { first.proxyFiles, obs.Proxy, proxyErr = src.Proxy.ReadProxy(ctx) })
	}
	if src.Units != nil && len(declared) > 0 {
		wg.Go(func() {
			if obs.Units, unitsErr = src.Units.UnitStates(ctx, declared); unitsErr != nil {
				return
			}
			if rr, ok := src.Units.(ReloadReader); ok {
				first.loadedAt, first.loadedAtErr = rr.UnitsLoadedAt(ctx)
			}
		})
	}
	if src.Store != nil {
		// The secret store is read when secrets are declared (external
		// ones too: they must exist), or (Observe) when syslet has managed
		// this host before, to prune secrets it no longer declares: a
		// fresh host with no secrets never needs podman for it.
		first.secretsRead = len(out.Secrets) > 0 || len(out.ExternalSecrets) > 0
		wg.Go(func() {
			if first.secretsRead {
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
		return first, fmt.Errorf("reading installed files: %w", filesErr)
	case unitsErr != nil:
		return first, fmt.Errorf("reading unit states: %w", unitsErr)
	case stoErr != nil:
		return first, stoErr
	case proxyErr != nil:
		return first, fmt.Errorf("reading the proxy's files: %w", proxyErr)
	}
	return first, nil
}

// readInstalledStates asks systemd about what the trees add to the
// declared services (units installed but no longer declared) and, when a
// unit file is newer than systemd's last load, which units it has not
// loaded the current file of (NeedDaemonReload), into obs.
func readInstalledStates(ctx context.Context, units UnitReader, declared []string, first firstRead, obs *Observed) error {
	rr, _ := units.(ReloadReader)
	loadedAt, loadedAtErr := first.loadedAt, first.loadedAtErr
	var installed []string
	if _, ok := first.proxyFiles[layout.ProxyUnit]; ok && !declaredHas(declared, layout.ProxyService) {
		installed = append(installed, layout.ProxyService)
	}
	for _, s := range installedServices(first.files) {
		if !declaredHas(declared, s) {
			installed = append(installed, s)
		}
	}
	if len(installed) > 0 {
		slices.Sort(installed)
		st, err := units.UnitStates(ctx, installed)
		if err != nil {
			return fmt.Errorf("reading unit states: %w", err)
		}
		maps.Copy(obs.Units, st)
		if rr != nil && len(declared) == 0 {
			loadedAt, loadedAtErr = rr.UnitsLoadedAt(ctx)
		}
	}
	if rr == nil || len(obs.Units) == 0 || !newerThanLoad(loadedAt, loadedAtErr, first.files) {
		return nil
	}
	var loaded []string
	for n, s := range obs.Units {
		if s.LoadState == "loaded" {
			loaded = append(loaded, n)
		}
	}
	slices.Sort(loaded)
	need, err := rr.NeedDaemonReload(ctx, loaded)
	if err != nil {
		return err
	}
	for n := range need {
		s := obs.Units[n]
		s.NeedDaemonReload = true
		obs.Units[n] = s
	}
	return nil
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
		if err := readImageID(ctx, store, u.Image, obs); err != nil {
			return err
		}
	}
	return nil
}

// readImageID reads the ID of the image ref names into Observed.ImageIDs,
// once per image.
func readImageID(ctx context.Context, store StoreReader, ref string, obs *Observed) error {
	if _, done := obs.ImageIDs[ref]; done {
		return nil
	}
	id, err := store.ImageID(ctx, ref)
	if err != nil {
		return fmt.Errorf("inspecting image %q: %w", ref, err)
	}
	if obs.ImageIDs == nil {
		obs.ImageIDs = map[string]string{}
	}
	obs.ImageIDs[ref] = id
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

// readSockets adds to files the socket units in layout.SocketDir (the
// directory's *.socket files, not what is under it): the ones syslet
// wrote for containers, and any other of a name a spec's socket would
// take. The rest of the directory is the administrator's.
func readSockets(r FileReader, files map[string]host.File) error {
	all, err := r.ReadTree(layout.SocketDir)
	if err != nil {
		return err
	}
	for p, f := range all {
		if dir, name := path.Split(p); dir == layout.SocketDir+"/" && strings.HasSuffix(name, ".socket") && !f.Mode.IsDir() {
			files[p] = f
		}
	}
	return nil
}
