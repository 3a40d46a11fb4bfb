package deploy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/host/stage"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/probe"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/unit"
)

// fakeHost is one machine in memory: a systemd that only knows the unit
// files it loaded at its last daemon-reload (as the real one does: a start
// before the reload fails), a podman with image and secret stores, and a
// stager. Files are real, under root, which stands for the host's "/".
// Every change is recorded in calls, in order, so tests assert on what the
// host was asked to do rather than on what deploy says it did.
type fakeHost struct {
	root string

	mu    sync.Mutex
	calls []string
	// fail makes the call of that name ("pull IMAGE", "daemon-reload",
	// "start UNIT", "stage") fail with the error.
	fail map[string]error
	// before, when set, runs before each recorded call, outside mu (a test
	// blocks, cancels or closes Stop there).
	before func(call string)

	// systemd
	loaded   map[string][]byte // service → the unit file it was loaded from
	loadedAt time.Time
	active   map[string]bool
	started  map[string]time.Time // LastStarted
	logs     map[string][]string  // LastLog
	closed   int
	// blockStates makes UnitStates wait for its context (a hung systemd).
	blockStates bool
	// starts counts each unit's starts (its InvocationID); crashOn makes
	// a service fail after it started when the unit it was loaded from
	// holds that text (an image that exits at once), as such a container
	// does under Restart=always: each read of its health finds it
	// restarted once more.
	starts  map[string]int
	crashOn map[string]string
	// failStartOn makes a start fail when the unit holds that text.
	failStartOn map[string]string
	// unhealthyOn makes a container fail its health check when its
	// service was loaded from a unit holding that text; imageOf is the
	// image ID a container runs (Containers) by "name@image".
	unhealthyOn map[string]string
	// badProbeOn makes a container's probe answer 503 "db unreachable"
	// when its service was loaded from a unit holding that text; probes
	// counts the tries per container.
	badProbeOn map[string]string
	probes     map[string]int
	imageOf    map[string]string
	// imageIDs are what an image reference resolves to now (ImageID).
	imageIDs map[string]string

	// podman
	images       map[string]bool
	secrets      map[string]host.Secret
	secretData   map[string][]byte
	version      string
	versionErr   error
	versionCalls int
	// tags are what each registry tag names now (TagDigest), repoDigests
	// the repository digests of the images the host holds (ImageDigests).
	tags        map[string]string
	repoDigests map[string][]string
	// volumes, when set, hold each volume's content (a string standing for
	// its tar): the start of NAME-volume.service creates volume NAME, and
	// VolumeUsers are the services whose unit mounts NAME.volume. nil
	// keeps no volume data, and every delete goes without a backup.
	volumes map[string]string

	// stager
	stageWarnings []string
	stageErr      error
	stageKept     string     // the staging directory the stager says it kept
	staged        [][]string // the verify list of each Check
}

var (
	_ Systemd = (*fakeSystemd)(nil)
	_ Podman  = (*fakePodman)(nil)
	_ Stager  = (*fakeStager)(nil)
)

// The three views of one fakeHost, one value per interface as the live
// adapters are: a type assertion made on one of them (plan.Observe asks
// its unit reader for ReloadReader) sees only what that adapter offers.
type (
	fakeSystemd struct{ *fakeHost }
	fakePodman  struct{ *fakeHost }
	fakeStager  struct{ *fakeHost }
)

func newHost(t *testing.T) *fakeHost {
	t.Helper()
	return &fakeHost{
		root:        t.TempDir(),
		fail:        map[string]error{},
		loaded:      map[string][]byte{},
		active:      map[string]bool{},
		started:     map[string]time.Time{},
		logs:        map[string][]string{},
		images:      map[string]bool{},
		secrets:     map[string]host.Secret{},
		secretData:  map[string][]byte{},
		version:     "5.4.2",
		starts:      map[string]int{},
		crashOn:     map[string]string{},
		failStartOn: map[string]string{},
		unhealthyOn: map[string]string{},
		badProbeOn:  map[string]string{},
		probes:      map[string]int{},
		imageOf:     map[string]string{},
		imageIDs:    map[string]string{},
	}
}

// live is the Request.Host seam.
func (h *fakeHost) live(context.Context, *Request) (*Live, error) {
	return &Live{Systemd: fakeSystemd{h}, Podman: fakePodman{h}, Stager: fakeStager{h}}, nil
}

// call records a change and returns its injected failure.
func (h *fakeHost) call(c string) error {
	if h.before != nil {
		h.before(c)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, c)
	return h.fail[c]
}

// Calls returns the recorded calls; with prefixes, only those starting
// with one of them.
func (h *fakeHost) Calls(prefixes ...string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, c := range h.calls {
		if len(prefixes) == 0 || slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(c, p) }) {
			out = append(out, c)
		}
	}
	return out
}

// reset forgets the recorded calls (between the runs of one test).
func (h *fakeHost) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = nil
}

// systemd

func (s fakeSystemd) UnitStates(ctx context.Context, names []string) (map[string]host.UnitState, error) {
	if s.blockStates {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]host.UnitState{}
	for _, n := range names {
		st := host.UnitState{Name: n, LoadState: "not-found", ActiveState: "inactive", SubState: "dead"}
		if _, ok := s.loaded[n]; ok {
			st.LoadState = "loaded"
		}
		if s.active[n] {
			st.ActiveState, st.SubState = "active", "running"
		}
		out[n] = st
	}
	return out, nil
}

func (s fakeSystemd) UnitsLoadedAt(context.Context) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loadedAt, nil
}

// NeedDaemonReload names the units whose file on disk is not the one
// systemd loaded.
func (s fakeSystemd) NeedDaemonReload(_ context.Context, names []string) (map[string]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	disk := s.unitFiles()
	out := map[string]bool{}
	for _, n := range names {
		if d, ok := disk[n]; ok && !bytes.Equal(d, s.loaded[n]) {
			out[n] = true
		}
	}
	return out, nil
}

// unitFiles reads the quadlet files under root, by service name.
func (h *fakeHost) unitFiles() map[string][]byte {
	out := map[string][]byte{}
	dir := layout.Under(h.root, layout.UnitDir)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Type().IsRegular() {
			if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				out[unit.DefaultService(e.Name())] = b
			}
		}
	}
	return out
}

func (s fakeSystemd) DaemonReload(context.Context) error {
	if err := s.call("daemon-reload"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loaded = s.unitFiles()
	s.loadedAt = time.Now()
	return nil
}

// Jobs lands every unit in order. A start of a unit systemd has not loaded
// fails as systemd's would; a oneshot runs and ends inactive.
func (s fakeSystemd) Jobs(_ context.Context, op host.JobOp, names []string, landed func(int, error)) {
	for i, n := range names {
		err := s.call(string(op) + " " + n)
		if err == nil {
			err = s.job(op, n)
		}
		landed(i, err)
	}
}

func (s fakeSystemd) job(op host.JobOp, n string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	file, ok := s.loaded[n]
	switch op {
	case host.JobStop:
		if !ok && !s.active[n] {
			return fmt.Errorf("unit %s: %w", n, host.ErrNotFound)
		}
		s.active[n] = false
	case host.JobStart:
		if !ok {
			return &host.JobError{Unit: n, Op: "start", Result: "unit not loaded"}
		}
		if v, isVol := strings.CutSuffix(n, "-volume.service"); isVol && s.volumes != nil {
			if _, ok := s.volumes[v]; !ok {
				s.volumes[v] = ""
			}
		}
		if c := s.failStartOn[n]; c != "" && bytes.Contains(file, []byte(c)) {
			return &host.JobError{Unit: n, Op: "start", Result: "failed"}
		}
		s.started[n] = time.Now()
		s.starts[n]++
		s.active[n] = !bytes.Contains(file, []byte("Type=oneshot"))
	case host.JobReload:
		if !s.active[n] {
			return &host.JobError{Unit: n, Op: "reload", Result: "state inactive/dead"}
		}
	}
	return nil
}

func (s fakeSystemd) Health(_ context.Context, names []string) (map[string]host.UnitHealth, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]host.UnitHealth{}
	for _, n := range names {
		if _, ok := s.loaded[n]; !ok {
			continue
		}
		h := host.UnitHealth{ActiveState: "inactive", SubState: "dead", Result: "success", ExecMainCode: 1,
			InvocationID: fmt.Sprintf("inv-%s-%d", n, s.starts[n])}
		if s.active[n] {
			h.ActiveState, h.SubState = "active", "running"
		}
		if c := s.crashOn[n]; c != "" && s.active[n] && bytes.Contains(s.loaded[n], []byte(c)) {
			// Each look finds it restarted once more by Restart=.
			s.starts[n]++
			h.NRestarts = uint32(s.starts[n] - 1)
			h.InvocationID = fmt.Sprintf("inv-%s-%d", n, s.starts[n])
			h.ActiveState, h.SubState, h.Result, h.ExecMainStatus = "activating", "auto-restart", "exit-code", 1
			if h.NRestarts > 5 {
				h.ActiveState, h.SubState = "failed", "failed"
			}
		}
		out[n] = h
	}
	return out, nil
}

func (s fakeSystemd) LastLog(_ context.Context, name string, _ time.Time, n int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.logs[name]
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return l, nil
}

func (s fakeSystemd) LastStarted(_ context.Context, names []string) (map[string]time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]time.Time{}
	for _, n := range names {
		if t, ok := s.started[n]; ok {
			out[n] = t
		}
	}
	return out, nil
}

func (s fakeSystemd) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed++
}

// podman

func (p fakePodman) Secrets(context.Context) ([]host.Secret, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Collect(maps.Values(p.secrets)), nil
}

func (p fakePodman) ImageExists(_ context.Context, ref string) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if strings.HasPrefix(ref, "sha256:") || strings.HasPrefix(ref, "id-") {
		// An image ID a container ran: podman keeps it.
		return true, nil
	}
	return p.images[ref], nil
}

func (p fakePodman) ImageID(_ context.Context, ref string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.imageIDs[ref], nil
}

func (p fakePodman) PullImage(_ context.Context, ref string, _ io.Writer) error {
	if err := p.call("pull " + ref); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.images[ref] = true
	return nil
}

func (p fakePodman) PullImageWith(ctx context.Context, ref string, _ host.PullOptions, w io.Writer) error {
	return p.PullImage(ctx, ref, w)
}

func (p fakePodman) RemoveImage(_ context.Context, ref string) error {
	return p.call("rmi " + ref)
}
func (p fakePodman) RemoveVolume(_ context.Context, name string) error {
	if err := p.call("rmvol " + name); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.volumes, name)
	return nil
}

// ExportVolume writes what the volume holds; without volume data (nil
// volumes) it finds none, so deletes take no backup.
func (p fakePodman) ExportVolume(_ context.Context, name string, w io.Writer) error {
	p.mu.Lock()
	data, ok := p.volumes[name]
	p.mu.Unlock()
	if !ok {
		return fmt.Errorf("volume %s: %w", name, host.ErrNotFound)
	}
	_, err := io.WriteString(w, data)
	return err
}

func (p fakePodman) VolumeSizes(context.Context) (map[string]int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int64{}
	for v, data := range p.volumes {
		out[v] = int64(len(data))
	}
	return out, nil
}

func (p fakePodman) CreateVolume(_ context.Context, name string) error {
	if err := p.call("mkvol " + name); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.volumes[name]; !ok && p.volumes != nil {
		p.volumes[name] = ""
	}
	return nil
}

// ImportVolume writes the tar over what the volume holds: an import into
// a fresh volume, or into one holding the start of the same tar, leaves
// exactly the tar; into any other, both ("old+tar").
func (p fakePodman) ImportVolume(_ context.Context, name string, r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if err := p.call("import " + name); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old, ok := p.volumes[name]
	if !ok {
		return fmt.Errorf("importing into volume %s: %w", name, host.ErrNotFound)
	}
	// Files of the tar are written whole; others stay beside them.
	if !strings.HasPrefix(string(data), old) {
		data = append([]byte(old+"+"), data...)
	}
	p.volumes[name] = string(data)
	return nil
}

// VolumeUsers are the services whose loaded unit mounts the volume.
func (p fakePodman) VolumeUsers(_ context.Context, name string) (services, others []string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for svc, file := range p.loaded {
		if bytes.Contains(file, []byte("Volume="+name+".volume:")) {
			services = append(services, svc)
		}
	}
	slices.Sort(services)
	return services, nil, nil
}
func (p fakePodman) RemoveNetwork(_ context.Context, name string) error {
	return p.call("rmnet " + name)
}

// CreateSecret keeps a copy of the value: deploy wipes its own once the run
// is over.
func (p fakePodman) CreateSecret(_ context.Context, name string, data []byte, labels map[string]string) error {
	if err := p.call("secret " + name); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.secrets[name] = host.Secret{Name: name, ID: "id-" + name, Labels: maps.Clone(labels)}
	p.secretData[name] = bytes.Clone(data)
	return nil
}

func (p fakePodman) RemoveSecret(_ context.Context, name string) error {
	if err := p.call("rmsecret " + name); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.secrets, name)
	delete(p.secretData, name)
	return nil
}

func (p fakePodman) Containers(context.Context) (map[string]host.Container, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]host.Container{}
	for svc, up := range p.active {
		name := strings.TrimSuffix(svc, ".service")
		if !up || strings.Contains(name, "-") && (strings.HasSuffix(name, "-volume") || strings.HasSuffix(name, "-network") || strings.HasSuffix(name, "-build")) {
			continue
		}
		// The image a container runs follows the Image= it was loaded
		// with: imageOf["web@registry.example/web:1"] names its ID.
		ref := ""
		for _, l := range strings.Split(string(p.loaded[svc]), "\n") {
			if v, ok := strings.CutPrefix(l, "Image="); ok {
				ref = v
			}
		}
		id := p.imageOf[name+"@"+ref]
		if id == "" {
			id = "id-" + name + "-" + fakeImageName.Replace(ref)
		}
		out[name] = host.Container{Name: name, ImageID: id, Image: "image-of-" + name, State: "running"}
	}
	return out, nil
}

func (p fakePodman) ContainerHealth(_ context.Context, name string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.unhealthyOn[name]; c != "" && bytes.Contains(p.loaded[name+".service"], []byte(c)) {
		return "unhealthy", nil
	}
	return "healthy", nil
}

func (p fakePodman) Probe(_ context.Context, name string, pr *probe.Probe) probe.Answer {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.probes[name]++
	if c := p.badProbeOn[name]; c != "" && bytes.Contains(p.loaded[name+".service"], []byte(c)) {
		return pr.HTTP.JudgeHTTP(503, []byte("db unreachable"))
	}
	return pr.HTTP.JudgeHTTP(200, []byte("ok"))
}

func (p fakePodman) Version(context.Context) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.versionCalls++
	return p.version, p.versionErr
}

// stager

func (s fakeStager) Check(_ context.Context, future, _ map[string][]byte, verify []string) (stage.Result, error) {
	if err := s.call("stage"); err != nil {
		return stage.Result{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range verify {
		if _, ok := future[v]; !ok {
			return stage.Result{}, fmt.Errorf("fake stager: %s verified but not in the future set", v)
		}
	}
	s.staged = append(s.staged, slices.Clone(verify))
	return stage.Result{Warnings: s.stageWarnings, Kept: s.stageKept}, s.stageErr
}

// syncBuffer is a bytes.Buffer safe for the goroutines of a run (the lock
// wait and the executor's log write to stderr).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// ran is one Run and everything it left to look at: its outcome and
// error, what it told its view, and the text a person's view drew of it.
type ran struct {
	out            *view.Outcome
	err            error
	view           *seenView
	stdout, stderr string
}

// request is an apply of path on h, with deadlines short enough for a
// test and a lock wait that cannot hang the suite.
func (h *fakeHost) request(path string) Request {
	return Request{
		Path: path, Root: h.root, Host: h.live,
		LockTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		StartTimeout: 5 * time.Second, PullTimeout: 5 * time.Second, StopTimeout: 5 * time.Second, ReloadTimeout: 5 * time.Second,
	}
}

func (h *fakeHost) run(t *testing.T, req Request) ran {
	t.Helper()
	v := newSeenView()
	req.View = v
	out, err := Run(context.Background(), req)
	return ran{out: out, err: err, view: v, stdout: v.stdout.String(), stderr: v.stderr.String()}
}

// apply runs path and fails the test unless it succeeds.
func (h *fakeHost) apply(t *testing.T, path string) ran {
	t.Helper()
	r := h.run(t, h.request(path))
	if r.err != nil {
		t.Fatalf("apply %s: %v\nstdout:\n%s\nstderr:\n%s", path, r.err, r.stdout, r.stderr)
	}
	return r
}

// file reads a host path under root; "" when it does not exist.
func (h *fakeHost) file(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(layout.Under(h.root, p))
	if errors.Is(err, os.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (h *fakeHost) exists(p string) bool { return existsUnder(h.root, p) }

// existsUnder reports whether host path p exists under root, without
// following a final symlink.
func existsUnder(root, p string) bool {
	_, err := os.Lstat(layout.Under(root, p))
	return err == nil
}

// runs reads the run journal back.
func (h *fakeHost) runs(t *testing.T) []*runlog.RunInfo {
	t.Helper()
	runs, err := runlog.Open(h.root).Runs()
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// last is the journal's last run; the test fails when there is none.
func (h *fakeHost) last(t *testing.T) *runlog.RunInfo {
	t.Helper()
	runs := h.runs(t)
	if len(runs) == 0 {
		t.Fatal("the run journal holds no run")
	}
	return runs[len(runs)-1]
}

// managedTrees lists every file under the trees syslet writes, relative to
// root: empty on a host nothing was applied to.
func (h *fakeHost) managedTrees(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, d := range []string{layout.UnitDir, layout.ConfigRoot, layout.BuildRoot} {
		base := layout.Under(h.root, d)
		_ = filepath.WalkDir(base, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				rel, _ := filepath.Rel(h.root, p)
				out = append(out, "/"+rel)
			}
			return nil
		})
	}
	return out
}

// writeSpecs writes a spec stream into a file of its own and returns its
// path.
func writeSpecs(t *testing.T, stream string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "specs.json")
	if err := os.WriteFile(p, []byte(stream), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// intentOps lists "op target" of a journal run's intent.
func intentOps(ri *runlog.RunInfo) []string {
	var out []string
	for _, a := range ri.Intent.Actions {
		out = append(out, a.Op+" "+a.Target)
	}
	return out
}

func (p fakePodman) TagDigest(_ context.Context, ref string) (string, error) {
	if err := p.call("tag-digest " + ref); err != nil {
		return "", err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tags[ref], nil
}

func (p fakePodman) ImageDigests(_ context.Context, ref string) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ds, ok := p.repoDigests[ref]; ok {
		return ds, nil
	}
	// An image ID a container runs (Containers): the image of the
	// reference it was made of.
	for name, ds := range p.repoDigests {
		if strings.HasSuffix(ref, "-"+fakeImageName.Replace(name)) {
			return ds, nil
		}
	}
	return nil, nil
}

// fakeImageName writes a reference into the fake's image IDs.
var fakeImageName = strings.NewReplacer("/", "_", ":", "_")
