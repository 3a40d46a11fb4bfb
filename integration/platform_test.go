//go:build integration

package integration

// Issues 43 and 56: the platforms syslet is proven on. The suite runs on
// trixie (or the platform TESTHOST_RECIPE names); TestOnDebianTesting and
// TestOnPodman6 run a platform suite — core scenarios, each an existing
// test of this package, unchanged — on Debian testing hosts and on podman 6
// hosts in the same run. TestPlatform says which releases a run met, and
// that syslet judged the specs by the host's own podman there.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/unit"
)

// platform is what a test host recipe must run, so that a run names
// exactly what it proved: the podman release (major.minor) and systemd's.
// docs/reference/platforms.md lists the same platforms for users.
type platform struct {
	name    string
	podman  unit.Podman
	systemd int
}

var platforms = map[string]platform{
	"trixie":  {"Debian 13 (trixie)", unit.Podman{Major: 5, Minor: 4}, 257},
	"testing": {"Debian testing (forky)", unit.Podman{Major: 5, Minor: 8}, 262},
	"podman6": {"Debian testing (forky) with podman 6.0.2 built from source", unit.Podman{Major: 6, Minor: 0}, 262},
}

// suiteTest is one test of a platform suite, under its own name.
type suiteTest struct {
	name string
	test func(*testing.T)
}

// platformSuite is what TestOnDebianTesting runs: first deploy, one
// change, rollback, secrets, resume after a kill, webhookd's deploy through
// a real forge, the host's generator and systemd against syslet's key
// tables, and the platform's own test.
var platformSuite = []suiteTest{
	{"TestPlatform", TestPlatform},
	{"TestApplyFreshExamples", TestApplyFreshExamples},
	{"TestImageChangeRestartsOnlyThatContainer", TestImageChangeRestartsOnlyThatContainer},
	{"TestRollbackOnBadChanges", TestRollbackOnBadChanges},
	{"TestSecretsConsumeRotatePrune", TestSecretsConsumeRotatePrune},
	{"TestFaultRandomKills", func(t *testing.T) { randomKills(t, faultCount("SYSLET_FAULT_KILLS", platformKills)) }},
	{"TestGiteaForge", TestGiteaForge},
	{"TestHostGeneratorAgreesWithKeyTable", TestHostGeneratorAgreesWithKeyTable},
	{"TestHostSystemdAgreesWithKeyTable", TestHostSystemdAgreesWithKeyTable},
}

// platformKills is the platform suite's share of random kills: the kills
// themselves are proven on trixie (defaultKills); here, that a killed
// upgrade converges with testing's podman and systemd.
const platformKills = 3

// TestOnDebianTesting is the platform suite on Debian testing (podman
// 5.8, systemd 262): its tests run beside the rest of the suite, each
// under its own name, on hosts of the testing recipe.
func TestOnDebianTesting(t *testing.T) {
	t.Parallel()
	testhost.OnRecipe(t, "testing")
	for _, tc := range platformSuite {
		t.Run(tc.name, tc.test)
	}
}

// podman6Suite is what TestOnPodman6 runs: what an operator moving a
// fleet to podman 6 needs to trust first — first deploy, rollback with its
// image pins, secrets, backups and their restore, update of moved tags,
// the check of specs against the host's podman and its converter, the
// host's generator against the key table, and the podman adapter's calls. The random kills and the forge
// are podman-independent beyond what testing's suite proves (the budget).
var podman6Suite = []suiteTest{
	{"TestPlatform", TestPlatform},
	{"TestApplyFreshExamples", TestApplyFreshExamples},
	{"TestRollbackOnBadChanges", TestRollbackOnBadChanges},
	{"TestSecretsConsumeRotatePrune", TestSecretsConsumeRotatePrune},
	{"TestBackupBeforeDeleteAndRestore", TestBackupBeforeDeleteAndRestore},
	{"TestUpdate", TestUpdate},
	{"TestApplyChecksAgainstHostPodman", TestApplyChecksAgainstHostPodman},
	{"TestHostGeneratorAgreesWithKeyTable", TestHostGeneratorAgreesWithKeyTable},
	// every call syslet's podman adapter makes through the v5 bindings,
	// against the podman 6 API (docs/reference/platforms.md: the bindings)
	{"TestAdaptersInGuest", func(t *testing.T) { adaptersInGuest(t, "podman") }},
}

// TestOnPodman6 is the podman 6 suite on hosts of the podman6 recipe:
// Debian testing with podman 6.0.2, its generator and units built from
// the Go module proxy's source (integration/testhost/recipe-podman6.sh).
func TestOnPodman6(t *testing.T) {
	t.Parallel()
	testhost.OnRecipe(t, "podman6")
	for _, tc := range podman6Suite {
		t.Run(tc.name, tc.test)
	}
}

// hostReleases reads what the guest runs: its OS, podman's release as
// podman's API reports it (what syslet asks), and systemd's.
func hostReleases(t *testing.T, h *testhost.Host) (osName, podman string, systemd int) {
	t.Helper()
	osName = strings.TrimSpace(h.MustRun(t, ". /etc/os-release && echo \"$PRETTY_NAME\""))
	podman = strings.TrimSpace(h.MustRun(t, "curl -sSf --unix-socket /run/podman/podman.sock http://d/v5.0.0/libpod/version | jq -r .Version"))
	m := regexp.MustCompile(`^systemd (\d+) `).FindStringSubmatch(h.MustRun(t, "systemctl --version"))
	if m == nil {
		t.Fatal("systemctl --version: no release")
	}
	systemd, _ = strconv.Atoi(m[1])
	return osName, podman, systemd
}

// TestPlatform: the test host runs the platform its recipe promises (the
// releases are printed), and syslet checks specs against the host's own
// podman: a key podman 5.5 added (ReloadSignal) is refused before
// anything changes where the host runs 5.4, and where it runs a later
// release the same spec is planned against it (the saved plan says which
// release), staged by the host's generator and systemd, deployed, and
// works (a reload signals the container).
func TestPlatform(t *testing.T) {
	t.Parallel()
	recipe := testhost.RecipeOf(t)
	want, ok := platforms[recipe]
	if !ok {
		t.Fatalf("no platform is known for the recipe %q", recipe)
	}
	h := applyHost(t)
	osName, podman, systemd := hostReleases(t, h)
	t.Logf("platform %s: %s, podman %s, systemd %d, kernel %s", recipe, osName, podman, systemd,
		strings.TrimSpace(h.MustRun(t, "uname -r")))
	// and what podman runs with, as podman reports it
	t.Logf("platform %s: %s", recipe, strings.TrimSpace(h.MustRun(t, `curl -sSf --unix-socket /run/podman/podman.sock http://d/v5.0.0/libpod/info |
jq -r '"API \(.version.APIVersion), \(.host.ociRuntime.version | split("\n")[0]), \(.host.conmon.version | split(",")[0]), \(.host.networkBackendInfo.version), \(.store.graphDriverName) storage, \(.host.databaseBackend) database"'`)))
	got, err := unit.ParsePodman(podman)
	must(t, err)
	if got != want.podman || systemd != want.systemd {
		t.Fatalf("the %s test host runs podman %s and systemd %d; its recipe promises podman %s and systemd %d (%s)",
			recipe, podman, systemd, want.podman, want.systemd, want.name)
	}

	reload := unit.Podman{Major: 5, Minor: 5}
	spec := `{"apiVersion":"v1","type":"container","name":"hup","unit":{"Container":{"Image":"localhost:5000/busybox:latest","RunInit":"true",` +
		`"ReloadSignal":"SIGHUP","Exec":"sh -c 'trap \"date +%s%N > /tmp/reloaded\" HUP; while :; do sleep 0.2; done'"}}}`
	must(t, h.WriteFile("/root/hup/hup.json", []byte(spec), 0o644))
	before := snapshot(t, h)
	if got.Less(reload) {
		r := syslet(h, "--soak", testSoak, "/root/hup")
		wantMsg := fmt.Sprintf("[Container] ReloadSignal needs podman 5.5 or later; these specs are checked against podman %s", got)
		if r.Code != 2 || !strings.Contains(r.Stderr, wantMsg) {
			t.Fatalf("podman %s: want exit 2 with %q, got:\n%s", podman, wantMsg, r)
		}
		if snapshot(t, h) != before {
			t.Error("/etc/containers changed after a refused apply")
		}
		t.Logf("podman %s: a 5.5 key is refused, checked against the host's podman %s", podman, got)
		return
	}
	if r := syslet(h, "--diff", "--out", "/root/hup.plan", "/root/hup"); !r.OK() {
		t.Fatalf("podman %s: syslet --diff of a 5.5 key:\n%s", podman, r)
	}
	show := h.MustRun(t, "syslet show /root/hup.plan")
	if !strings.Contains(show, "checked:    against podman "+got.String()) {
		t.Errorf("the saved plan must say it was checked against the host's podman %s:\n%s", got, show)
	}
	apply(t, h, "/root/hup")
	if exec := prop(t, h, "hup.service", "ExecReload"); !strings.Contains(exec, "SIGHUP") {
		t.Fatalf("the host's generator made no reload by signal of ReloadSignal=SIGHUP: ExecReload=%s", exec)
	}
	h.MustRun(t, "systemctl reload hup.service")
	if r := h.Eventually("podman exec hup test -s /tmp/reloaded", 10*time.Second); !r.OK() {
		t.Fatalf("systemctl reload did not signal the container: %s", r)
	}
	t.Logf("podman %s: a 5.5 key is planned against podman %s, staged, deployed, and reloads by signal", podman, got)
}
