//go:build integration

package integration

// Issue 4's acceptance, one test each, on real test hosts: syslet applies
// examples/ (and variants of it edited in the guest with jq) and every
// claim is checked against systemd, podman and the journal — not against
// syslet's own output alone.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

const specDir = "/root/examples"

// applyHost boots a host with syslet installed, podman's API socket on and
// examples/ copied to /root/examples.
func applyHost(t *testing.T) *testhost.Host {
	t.Helper()
	h := startWithSyslet(t)
	root, err := testhost.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.CopyIn(filepath.Join(root, "examples"), specDir); err != nil {
		t.Fatal(err)
	}
	encryptExamples(t, h, specDir) // the example secret, for this guest's key
	h.MustRun(t, "systemctl enable --now podman.socket")
	return h
}

// syslet runs syslet in the guest with the given arguments.
func syslet(h *testhost.Host, args ...string) testhost.Result {
	return h.Run("syslet " + testhost.QuoteArgs(args...))
}

// testSoak is the health gate's soak window for the applies of tests that
// are not about the gate (its own tests use the default and their own):
// every container still has to come up and stay up, for a second.
const testSoak = "1s"

// apply runs `syslet DIR` and fails the test unless it exits 0.
func apply(t *testing.T, h *testhost.Host, dir string) testhost.Result {
	t.Helper()
	r := syslet(h, "--soak", testSoak, dir)
	if !r.OK() {
		t.Fatalf("apply of %s failed:\n%s", dir, r)
	}
	return r
}

// editSpec rewrites a spec file in the guest with a jq filter applied to
// each top-level JSON value of the file (objects, arrays, NDJSON alike).
func editSpec(t *testing.T, h *testhost.Host, file, filter string) {
	t.Helper()
	editFile(t, h, filepath.Join(specDir, file), filter)
}

// editFile is editSpec for any spec file in the guest.
func editFile(t *testing.T, h *testhost.Host, p, filter string) {
	t.Helper()
	h.MustRun(t, fmt.Sprintf("jq -c %s %s > %s.new && mv %s.new %s", testhost.Quote(filter), p, p, p, p))
}

// prop reads one systemd property of a unit.
func prop(t *testing.T, h *testhost.Host, unit, name string) string {
	t.Helper()
	return strings.TrimSpace(h.MustRun(t, "systemctl show -P "+name+" "+unit))
}

// invocations returns each unit's InvocationID: it changes on every start,
// so an unchanged ID proves a unit was not restarted.
func invocations(t *testing.T, h *testhost.Host, units ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, u := range units {
		m[u] = prop(t, h, u, "InvocationID")
	}
	return m
}

// snapshot fingerprints /etc/containers: every path with mode, size, link
// target and mtime, and every file's content hash.
func snapshot(t *testing.T, h *testhost.Host) string {
	t.Helper()
	return h.MustRun(t, `cd /etc/containers && { find . -printf '%p %m %s %l %T@\n' | sort; find . -type f -exec sha256sum {} + | sort; } | sha256sum`)
}

type journalEntry struct {
	At      time.Time
	Message string
	Fields  map[string]string
}

// journal returns the guest journal entries after cursor that match the
// journalctl match arguments (e.g. "_PID=1"), with their real-time stamps.
func journal(t *testing.T, h *testhost.Host, cursor string, matches ...string) []journalEntry {
	t.Helper()
	out, err := h.JournalSince(cursor, append([]string{"-o", "json"}, matches...)...)
	if err != nil {
		t.Fatal(err)
	}
	var es []journalEntry
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var raw map[string]any
		if json.Unmarshal(sc.Bytes(), &raw) != nil {
			continue
		}
		e := journalEntry{Fields: map[string]string{}}
		for k, v := range raw {
			if s, ok := v.(string); ok {
				e.Fields[k] = s
			}
		}
		e.Message = e.Fields["MESSAGE"]
		us, _ := strconv.ParseInt(e.Fields["__REALTIME_TIMESTAMP"], 10, 64)
		e.At = time.UnixMicro(us)
		es = append(es, e)
	}
	return es
}

func cursor(t *testing.T, h *testhost.Host) string {
	t.Helper()
	c, err := h.JournalCursor()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// systemdJobs lists the job messages systemd (PID 1) logged: starts, stops,
// reloads of units and daemon reloads.
func systemdJobs(t *testing.T, h *testhost.Host, since string) []string {
	t.Helper()
	var jobs []string
	for _, e := range journal(t, h, since, "_PID=1") {
		for _, p := range []string{"Starting ", "Started ", "Stopping ", "Stopped ", "Reloading", "Reloaded ", "Finished ", "Deactivated "} {
			if strings.HasPrefix(e.Message, p) {
				jobs = append(jobs, e.Message)
				break
			}
		}
	}
	return jobs
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var stack = []string{"app.service", "db.service", "web.service", "migrate.service"}

// 1. Fresh apply of examples/: every container active, a published port
// answers; a second apply in a fresh process changes nothing and makes
// systemd do nothing (no daemon-reload, no job: read from PID 1's journal).
func TestApplyFreshExamples(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	r := apply(t, h, specDir)
	t.Logf("first apply:\n%s\n%s", r.Stdout, r.Stderr)
	for _, u := range []string{"app.service", "db.service", "web.service", "backend-network.service", "db-data-volume.service", "web-cache-volume.service"} {
		if got := prop(t, h, u, "ActiveState"); got != "active" {
			t.Errorf("%s is %s, want active", u, got)
		}
	}
	if got := prop(t, h, "migrate.service", "Result"); got != "success" {
		t.Errorf("oneshot migrate.service result %q, want success", got)
	}
	if got := h.Eventually("curl -fsS http://127.0.0.1:8080/", 10*time.Second); !got.OK() || !strings.Contains(got.Stdout, "<h1>shop</h1>") {
		t.Errorf("web does not answer on its published port:\n%s", got)
	}
	if got := h.Eventually("curl -fsS http://127.0.0.1:9000/settings", 10*time.Second); !got.OK() || !strings.Contains(got.Stdout, "reviews=off") {
		t.Errorf("app does not answer on its published port:\n%s", got)
	}
	before := invocations(t, h, stack...)
	c := cursor(t, h)
	r2 := apply(t, h, specDir)
	if !strings.Contains(r2.Stdout, "No changes") {
		t.Errorf("second apply should report no changes:\n%s", r2)
	}
	if jobs := deployJobs(t, h, c); len(jobs) > 0 {
		t.Errorf("second apply made systemd work (want no daemon-reload and no job):\n%s", strings.Join(jobs, "\n"))
	}
	if after := invocations(t, h, stack...); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("units were restarted by a no-op apply: %v -> %v", before, after)
	}
	if d := syslet(h, "--diff", "--detailed-exitcode", specDir); d.Code != 0 {
		t.Errorf("--diff --detailed-exitcode on a converged host: exit %d\n%s", d.Code, d)
	}
}

// 2. An image tag change restarts only that container, and the new image
// is pulled before the old container is stopped.
func TestImageChangeRestartsOnlyThatContainer(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	apply(t, h, specDir)
	ref, err := h.MakeImage("busybox:v2", "marker-v2")
	must(t, err)
	before := invocations(t, h, stack...)
	editSpec(t, h, "60-web.json", fmt.Sprintf(`if .name == "web" then .unit.Container.Image = %q else . end`, ref))
	c := cursor(t, h)
	r := apply(t, h, specDir)
	t.Logf("apply:\n%s", r.Stdout)
	after := invocations(t, h, stack...)
	for _, u := range stack {
		changed := before[u] != after[u]
		if changed != (u == "web.service") {
			t.Errorf("%s restarted=%v; only web.service should restart", u, changed)
		}
	}
	if m := strings.TrimSpace(h.MustRun(t, "podman exec web cat /etc/testhost-marker")); m != "marker-v2" {
		t.Errorf("web runs image marker %q, want marker-v2", m)
	}
	var pulled, stopping time.Time
	for _, e := range journal(t, h, c, "PODMAN_EVENT=pull", "_SYSTEMD_UNIT=podman.service") {
		// The event's own time: journald may store it a little later.
		if e.Fields["PODMAN_NAME"] == ref && pulled.IsZero() {
			pulled, err = time.Parse(time.RFC3339Nano, e.Fields["PODMAN_TIME"])
			must(t, err)
		}
	}
	for _, e := range journal(t, h, c, "_PID=1") {
		if strings.HasPrefix(e.Message, "Stopping web.service") && stopping.IsZero() {
			stopping = e.At
		}
	}
	if pulled.IsZero() || stopping.IsZero() || !pulled.Before(stopping) {
		t.Errorf("want the pull of %s before web.service stops: pulled %v, stopping %v", ref, pulled, stopping)
	}
	t.Logf("pulled %s at %s, web.service stopping at %s", ref, pulled.Format(time.StampMicro), stopping.Format(time.StampMicro))
}

// 3. A change to a config dir alone reloads the container in place: same
// main PID, and the new content is visible inside.
func TestConfigDirChangeReloads(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	apply(t, h, specDir)
	pid := prop(t, h, "app.service", "MainPID")
	inv := prop(t, h, "app.service", "InvocationID")
	editSpec(t, h, "50-app.json", `.configDirs[0].files[1].content = "checkout=on\nreviews=on\nbeta=yes\n"`)
	d := syslet(h, "--diff", specDir)
	if !strings.Contains(d.Stdout, "app.service    active  active   reload") && !strings.Contains(d.Stdout, "reload: config dir") {
		t.Errorf("plan should classify app as reload:\n%s", d.Stdout)
	}
	c := cursor(t, h)
	apply(t, h, specDir)
	jobs := strings.Join(systemdJobs(t, h, c), "\n")
	if !strings.Contains(jobs, "Reloading app.service") || strings.Contains(jobs, "Stopping app.service") || strings.Contains(jobs, "Reloading...") {
		t.Errorf("want exactly a reload of app.service (no stop, no daemon-reload), systemd did:\n%s", jobs)
	}
	if got := prop(t, h, "app.service", "MainPID"); got != pid || prop(t, h, "app.service", "InvocationID") != inv {
		t.Errorf("app.service main PID %s -> %s: a reload must not restart it", pid, got)
	}
	if got := h.MustRun(t, "podman exec app cat /etc/app/conf.d/20-features.conf"); !strings.Contains(got, "beta=yes") {
		t.Errorf("new config not visible in the container: %q", got)
	}
	if got := h.Eventually("curl -fsS http://127.0.0.1:9000/settings | grep -q beta=yes", 10*time.Second); !got.OK() {
		t.Errorf("the app did not reload its settings on SIGHUP:\n%s", h.Run("curl -sS http://127.0.0.1:9000/settings"))
	}
	if got := h.MustRun(t, "ls -a /etc/containers/config/app/etc/app/conf.d | tr '\\n' ' '"); !strings.Contains(got, "..data") || strings.Count(got, "..v") != 1 {
		t.Errorf("config dir should hold ..data and exactly one version: %s", got)
	}
}

// 4. A plain config file change restarts the container; a Description-only
// change rewrites the unit and daemon-reloads without a restart.
func TestConfigFileRestartsDescriptionDoesNot(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	apply(t, h, specDir)
	webPID := prop(t, h, "web.service", "MainPID")
	editSpec(t, h, "60-web.json", `if .name == "web" then .configFiles[0].content = "<h1>shop v2</h1>\n" else . end`)
	apply(t, h, specDir)
	if got := prop(t, h, "web.service", "MainPID"); got == webPID {
		t.Errorf("a config file change must restart web.service (main PID %s unchanged)", got)
	}
	if got := h.Eventually("curl -fsS http://127.0.0.1:8080/ | grep -q 'shop v2'", 10*time.Second); !got.OK() {
		t.Errorf("web does not serve the new file:\n%s", got)
	}

	dbPID := prop(t, h, "db.service", "MainPID")
	editSpec(t, h, "30-db.json", `.unit.Unit.Description = "shop database, primary"`)
	c := cursor(t, h)
	r := apply(t, h, specDir)
	if !strings.Contains(r.Stdout, "metadata-only") {
		t.Errorf("plan should say metadata-only:\n%s", r.Stdout)
	}
	jobs := strings.Join(systemdJobs(t, h, c), "\n")
	if !strings.Contains(jobs, "Reloading...") || strings.Contains(jobs, "db.service") {
		t.Errorf("want a daemon-reload and no job on db.service, systemd did:\n%s", jobs)
	}
	if got := prop(t, h, "db.service", "MainPID"); got != dbPID {
		t.Errorf("db.service main PID %s -> %s: a metadata-only change must not restart", dbPID, got)
	}
	if got := prop(t, h, "db.service", "Description"); got != "shop database, primary" {
		t.Errorf("systemd still has description %q", got)
	}
}

// 5. Removing specs: the container is stopped and its unit and config dir
// go; a Delete volume is removed from podman and a Retain one kept; a unit
// whose installed marker says RemovalAllowed=false is kept and reported; a
// hand-written unit without the marker is untouched.
func TestRemovedSpecs(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	prev := specDir + "/demo-previous"
	must(t, h.WriteFile(prev+"/70-pinned.json", []byte(`{"apiVersion":"v1","type":"container","name":"pinned","removalAllowed":false,"unit":{"Container":{"Image":"localhost:5000/busybox:latest","RunInit":"true","Exec":"sleep infinity"}}}`), 0o644))
	apply(t, h, prev)
	hand := "[Unit]\nDescription=written by hand\n[Container]\nImage=localhost:5000/busybox:latest\nExec=sleep infinity\n"
	must(t, h.WriteFile("/etc/containers/systemd/hand.container", []byte(hand), 0o644))
	h.MustRun(t, "test -f /etc/containers/config/legacy/etc/legacy.conf && podman volume exists legacy-cache && podman volume exists legacy-archive")

	r := apply(t, h, specDir)
	t.Logf("apply:\n%s", r.Stdout)
	if st := prop(t, h, "legacy.service", "ActiveState"); st == "active" {
		t.Errorf("legacy.service still %s", st)
	}
	if got := h.Run("ls /etc/containers/systemd/legacy.container /etc/containers/config/legacy /etc/containers/systemd/legacy-cache.volume /etc/containers/systemd/legacy-archive.volume 2>&1"); got.OK() {
		t.Errorf("removed units or config dir still exist:\n%s", got)
	}
	if h.Run("podman volume exists legacy-cache").OK() {
		t.Errorf("volume legacy-cache (reclaimPolicy Delete) was not removed")
	}
	if !h.Run("podman volume exists legacy-archive").OK() {
		t.Errorf("volume legacy-archive (reclaimPolicy Retain) was removed")
	}
	if !h.Run("test -f /etc/containers/systemd/pinned.container").OK() || prop(t, h, "pinned.service", "ActiveState") != "active" {
		t.Errorf("pinned.container (RemovalAllowed=false) must be kept and keep running")
	}
	if !strings.Contains(r.Stdout, "pinned.container: kept") {
		t.Errorf("the plan must report the kept unit:\n%s", r.Stdout)
	}
	if got, _ := h.ReadFile("/etc/containers/systemd/hand.container"); string(got) != hand {
		t.Errorf("hand-written unit changed:\n%s", got)
	}
	if !strings.Contains(r.Stdout, "hand.container: not managed by syslet") {
		t.Errorf("the plan must report the unmanaged unit:\n%s", r.Stdout)
	}
}

// 6. A volume change its installed marker does not allow is refused with
// nothing changed; a network change recreates the network and restarts
// the containers attached to it.
func TestVolumeRefusedNetworkRecreated(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	apply(t, h, specDir)
	before := snapshot(t, h)
	volCreated := h.MustRun(t, "podman volume inspect db-data --format '{{.CreatedAt}}'")
	editSpec(t, h, "20-volumes.json", `map(if .name == "db-data" then .unit.Volume.Label = ["app=shop", "tier=data"] else . end)`)
	r := syslet(h, specDir)
	if r.Code != 1 || !strings.Contains(r.Stdout+r.Stderr, "forbids") {
		t.Errorf("want a refusal (exit 1) for changing db-data:\n%s", r)
	}
	if snapshot(t, h) != before || h.MustRun(t, "podman volume inspect db-data --format '{{.CreatedAt}}'") != volCreated {
		t.Errorf("a refused plan changed the host")
	}
	editSpec(t, h, "20-volumes.json", `map(if .name == "db-data" then .unit.Volume.Label = "app=shop" else . end)`)

	netID := h.MustRun(t, "podman network inspect backend --format '{{.ID}}'")
	inv := invocations(t, h, "app.service", "db.service", "web.service")
	editSpec(t, h, "10-network.json", `.unit.Network.Subnet = "10.89.20.0/24"`)
	r = apply(t, h, specDir)
	t.Logf("apply:\n%s", r.Stdout)
	if got := h.MustRun(t, "podman network inspect backend --format '{{.ID}}'"); got == netID {
		t.Errorf("network backend was not recreated")
	}
	if got := h.MustRun(t, "podman network inspect backend --format '{{range .Subnets}}{{.Subnet}}{{end}}'"); !strings.Contains(got, "10.89.20.0/24") {
		t.Errorf("network subnet %q", got)
	}
	after := invocations(t, h, "app.service", "db.service", "web.service")
	for u := range inv {
		if inv[u] == after[u] {
			t.Errorf("%s is attached to backend and was not restarted", u)
		}
		if st := prop(t, h, u, "ActiveState"); st != "active" {
			t.Errorf("%s is %s after the network was recreated", u, st)
		}
	}
}

// 7. A build spec builds its image in place (never pulled) and the
// dependent container runs it; a context change rebuilds and restarts.
func TestBuildInPlace(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	c := cursor(t, h)
	apply(t, h, specDir)
	img := strings.TrimSpace(h.MustRun(t, "podman image inspect localhost/app:latest --format '{{.ID}}'"))
	// syslet pulls through podman's API service; quadlet's `podman run`
	// logs a "pull" event even for a local image, so only the API's count.
	for _, e := range journal(t, h, c, "PODMAN_EVENT=pull", "_SYSTEMD_UNIT=podman.service") {
		if strings.Contains(e.Fields["PODMAN_NAME"], "app") {
			t.Errorf("syslet pulled the app image instead of building it: %s", e.Message)
		}
	}
	if len(journal(t, h, c, "PODMAN_EVENT=build", "_SYSTEMD_UNIT=app-build.service")) == 0 {
		t.Errorf("no podman build event from app-build.service")
	}
	if cat := h.MustRun(t, "curl -sS http://127.0.0.1:5000/v2/_catalog"); strings.Contains(cat, "app") {
		t.Errorf("the registry knows an app image: %s", cat)
	}
	if got := strings.TrimSpace(h.MustRun(t, "podman inspect app --format '{{.ImageName}}'")); got != "localhost/app:latest" {
		t.Errorf("app runs %q", got)
	}
	inv := prop(t, h, "app.service", "InvocationID")
	editSpec(t, h, "40-app-build.json", `.contextFiles[0].content |= sub("load\n"; "load\necho build=2 >> /tmp/settings\n")`)
	r := apply(t, h, specDir)
	if !strings.Contains(r.Stdout, "rebuild") {
		t.Errorf("plan should rebuild app:\n%s", r.Stdout)
	}
	if got := strings.TrimSpace(h.MustRun(t, "podman image inspect localhost/app:latest --format '{{.ID}}'")); got == img {
		t.Errorf("image was not rebuilt (ID %s)", got)
	}
	if prop(t, h, "app.service", "InvocationID") == inv {
		t.Errorf("app.service was not restarted onto the new image")
	}
	if got := h.Eventually("curl -fsS http://127.0.0.1:9000/settings | grep -q build=2", 10*time.Second); !got.OK() {
		t.Errorf("the rebuilt app does not run the new context:\n%s", h.Run("curl -sS http://127.0.0.1:9000/settings"))
	}
}

// 8. A nonexistent image stops the apply at step 1: /etc/containers is
// byte-identical before and after, and the running container is untouched.
func TestPullFailureChangesNothing(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	apply(t, h, specDir)
	before := snapshot(t, h)
	inv := prop(t, h, "web.service", "InvocationID")
	editSpec(t, h, "60-web.json", `if .name == "web" then .unit.Container.Image = "localhost:5000/busybox:does-not-exist" else . end`)
	r := syslet(h, specDir)
	out := r.Stdout + r.Stderr
	if r.Code != 1 || !strings.Contains(out, "FAILED 1. pull-image") || !strings.Contains(out, "not reached") {
		t.Errorf("want a failure at step 1 with the rest not reached:\n%s", r)
	}
	if snapshot(t, h) != before {
		t.Errorf("/etc/containers changed after a failed pull")
	}
	if prop(t, h, "web.service", "InvocationID") != inv || prop(t, h, "web.service", "ActiveState") != "active" {
		t.Errorf("web.service was touched by an apply that failed at step 1")
	}
}

// 9. A unit option the host's quadlet rejects stops the run at staging:
// the host is byte-identical and the message names the spec.
func TestStagingRejects(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	apply(t, h, specDir)
	before := snapshot(t, h)
	// (A key the host's generator does not know, such as Memory= before
	// podman 5.5, no longer reaches staging: the converter check for the
	// host's podman refuses it first; validate_podman_test.go shows that.)
	// A value only systemd judges: quadlet passes it, systemd-analyze
	// verify complains. (Not Restart=: syslet sets a running container's.)
	editSpec(t, h, "60-web.json", `if .name == "web" then .unit.Service.RestartSec = "sometimes" else . end`)
	r := syslet(h, specDir)
	out := r.Stdout + r.Stderr
	if r.Code != 1 || !strings.Contains(out, "systemd-analyze verify") || !strings.Contains(out, specDir+"/60-web.json [0]") {
		t.Errorf("want a verify failure naming the spec:\n%s", r)
	}
	// Told once, as the run's last word.
	if n := strings.Count(out, "Failed to parse RestartSec"); n != 1 || !strings.Contains(lastLines(out, 2), "Failed to parse RestartSec") {
		t.Errorf("verify's message is told %d times, want once, at the end:\n%s", n, r)
	}
	if snapshot(t, h) != before {
		t.Errorf("the host changed although verify failed")
	}
	// A systemd key typo no longer reaches staging: it is refused with
	// the key meant, before the plan, as validate refuses it in CI.
	editSpec(t, h, "60-web.json", `if .name == "web" then .unit.Service.TimeoutStarSec = "60" else . end`)
	if r := syslet(h, "--diff", specDir); r.Code != 2 || !strings.Contains(r.Stderr+r.Stdout, "60-web.json: [0].unit.Service.TimeoutStarSec: systemd does not know key TimeoutStarSec in [Service]: did you mean TimeoutStartSec?") {
		t.Errorf("want the typo refused offline, naming spec, field and the key meant:\n%s", r)
	}
	editSpec(t, h, "60-web.json", `if .name == "web" then del(.unit.Service.TimeoutStarSec) else . end`)
	// The staging directory is kept for inspection, 0700, and named.
	kept := regexp.MustCompile(`the staged units are kept in (/tmp/syslet-stage-[0-9]+) `).FindStringSubmatch(r.Stderr)
	if kept == nil {
		t.Errorf("the kept staging directory is not named:\n%s", r.Stderr)
	} else {
		t.Logf("staging failure: %s", r.Stderr)
		if got := h.MustRun(t, "stat -c %a "+kept[1]+" && grep -c RestartSec=sometimes "+kept[1]+"/units/web.container"); got != "700\n1\n" {
			t.Errorf("kept staging directory %s: %q, want mode 700 and the staged web.container", kept[1], got)
		}
	}
	// A unit someone else broke before does not block syslet. One whose
	// conversion depends on what syslet changes (it joins web's network
	// namespace) is converted with it and reported as a warning; one that
	// has nothing to do with it is not syslet's to judge, and not named.
	must(t, h.WriteFile("/etc/containers/systemd/other.container", []byte("[Container]\nImage=localhost:5000/busybox:latest\nNetwork=web.container\nBogus=1\n"), 0o644))
	must(t, h.WriteFile("/etc/containers/systemd/unrelated.container", []byte("[Container]\nImage=localhost:5000/busybox:latest\nBogus=2\n"), 0o644))
	editSpec(t, h, "60-web.json", `if .name == "web" then del(.unit.Service.RestartSec) | .unit.Container.Label = ["app=shop", "tier=frontend", "rev=2"] else . end`)
	r = syslet(h, specDir)
	if !r.OK() || !strings.Contains(r.Stderr, "other.container") || !strings.Contains(r.Stderr, "already so on the host") || strings.Contains(r.Stderr, "Bogus=2") {
		t.Errorf("a unit broken before syslet's change must only warn, and only when it depends on the change:\n%s", r)
	}
}

// 10. The oneshot job runs to completion once and later applies never run
// it again; a running container that died is started by the next apply.
func TestOneshotOnceAndCrashRecovery(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	c := cursor(t, h)
	apply(t, h, specDir)
	h.MustRun(t, "test -f $(podman volume inspect db-data --format '{{.Mountpoint}}')/migrated")
	inv := prop(t, h, "migrate.service", "InvocationID")
	editSpec(t, h, "60-web.json", `if .name == "web" then .configFiles[0].content = "<h1>again</h1>\n" else . end`)
	apply(t, h, specDir)
	apply(t, h, specDir)
	if prop(t, h, "migrate.service", "InvocationID") != inv {
		t.Errorf("migrate.service ran again on a later apply")
	}
	runs := 0
	for _, j := range systemdJobs(t, h, c) {
		if strings.HasPrefix(j, "Starting migrate.service") {
			runs++
		}
	}
	if runs != 1 {
		t.Errorf("migrate.service started %d times, want 1", runs)
	}

	// web dies behind syslet's back (stopped outside syslet; quadlet
	// containers end "failed" with exit 143).
	h.MustRun(t, "systemctl stop web.service")
	if st := prop(t, h, "web.service", "ActiveState"); st == "active" {
		t.Fatalf("web.service still active after stop")
	}
	d := syslet(h, "--diff", specDir)
	if !strings.Contains(d.Stdout, "web.container") || !strings.Contains(d.Stdout, "not running") {
		t.Errorf("plan should start web again:\n%s", d.Stdout)
	}
	apply(t, h, specDir)
	if st := prop(t, h, "web.service", "ActiveState"); st != "active" {
		t.Errorf("web.service is %s after the apply, want active", st)
	}
	if got := h.Eventually("curl -fsS http://127.0.0.1:8080/", 10*time.Second); !got.OK() {
		t.Errorf("web does not answer after recovery:\n%s", got)
	}
}

// Specs pushed on stdin (`cat *.json | ssh root@host syslet --stdin`) are
// applied and stored (0600), so a later plain `syslet` re-applies them.
func TestStdinPushIsStored(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	r := h.Run("cat " + specDir + "/*.json | syslet --stdin")
	if !r.OK() {
		t.Fatalf("apply from stdin:\n%s", r)
	}
	if got := strings.TrimSpace(h.MustRun(t, "stat -c %a /etc/syslet/config.json")); got != "600" {
		t.Errorf("/etc/syslet/config.json mode %s, want 600", got)
	}
	if got := prop(t, h, "web.service", "ActiveState"); got != "active" {
		t.Errorf("web.service %s after the stdin apply", got)
	}
	d := h.Run("syslet --diff --detailed-exitcode")
	if d.Code != 0 || !strings.Contains(d.Stdout, "No changes") {
		t.Errorf("plain syslet should re-read the stored specs and find nothing to do:\n%s", d)
	}
	// Each command that reads them for want of a PATH says so, and who
	// stores them: an apply from stdin, or a rollback.
	const label = "/etc/syslet/config.json (stored by the last apply from stdin or rollback, at "
	if !strings.Contains(d.Stdout, "9 spec(s) from "+label) {
		t.Errorf("a plain run's header does not name the stored specs truly:\n%s", d)
	}
	if st := h.Run("syslet status"); !st.OK() || !strings.Contains(st.Stderr, "syslet status: the services of "+label) {
		t.Errorf("syslet status does not say it reads the stored specs:\n%s", st)
	}
	// Invalid input on stdin changes nothing, not even the stored copy.
	stored := h.MustRun(t, "sha256sum /etc/syslet/config.json")
	bad := h.RunInput(strings.NewReader(`{"apiVersion":"v1","type":"container","name":"x"}`), "syslet --stdin")
	if bad.Code != 2 || !strings.Contains(bad.Stderr, "stdin: [0].unit.Container: [Container] Image is required") {
		t.Errorf("invalid stdin: want exit 2 naming stdin and the field:\n%s", bad)
	}
	if h.MustRun(t, "sha256sum /etc/syslet/config.json") != stored {
		t.Errorf("invalid input replaced the stored specs")
	}
}

// A unit that does not come up is reported with its last journal lines and
// a non-zero exit; the other units of the step are still started. "sick"
// declares a health check that never passes and Notify=healthy, so its
// start job waits for health until --timeout.
func TestFailedStartIsReportedWithLog(t *testing.T) {
	t.Parallel()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket")
	specs := `{"apiVersion":"v1","type":"container","name":"sick","unit":{"Container":{"Image":"localhost:5000/busybox:latest","RunInit":"true","Exec":"sh -c 'echo sick-marker; exec sleep 1000'","HealthCmd":"false","HealthInterval":"1s","Notify":"healthy"}}}
{"apiVersion":"v1","type":"container","name":"zfine","unit":{"Container":{"Image":"localhost:5000/busybox:latest","RunInit":"true","Exec":"sleep 1000"}}}
`
	must(t, h.WriteFile("/root/sick/specs.json", []byte(specs), 0o644))
	t0 := time.Now()
	r := syslet(h, "--timeout", "15s", "/root/sick")
	took := time.Since(t0)
	out := r.Stdout + r.Stderr
	if r.Code != 1 || !strings.Contains(out, "FAILED 9. start sick.service") || !strings.Contains(out, "| ") {
		t.Errorf("want a reported start failure with journal lines:\n%s", r)
	}
	if !strings.Contains(out, "sick-marker") || !strings.Contains(out, "did not become active within 15s") {
		t.Errorf("the failure should say it timed out and show sick.service's own log lines:\n%s", out)
	}
	if st := prop(t, h, "zfine.service", "ActiveState"); st != "active" {
		t.Errorf("zfine.service is %s: a failed start must not stop the other starts", st)
	}
	if took > 90*time.Second {
		t.Errorf("--timeout 15s did not bound the wait (took %s)", took)
	}
	t.Logf("apply took %s:\n%s", took.Round(time.Millisecond), r.Stdout)
}

// lastLines is the last n lines of out.
func lastLines(out string, n int) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
