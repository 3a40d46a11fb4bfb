//go:build integration

package integration

// Issue 14 on a real host (podman 5.4.2; on podman 6.0 in TestOnPodman6):
// an apply checks the units with podman's quadlet converter for the podman
// the host runs, as its API reports it, before reading or staging anything;
// and the host's real generator agrees with syslet's key-by-release table
// over the corpus.

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/unit"
)

// newerKey is, for the release a test host runs, a [Container] key of the
// next release (with a value) that syslet's key table gates.
var newerKey = map[unit.Podman]struct{ key, value, needs string }{
	{Major: 5, Minor: 4}: {"ReloadSignal", "SIGHUP", "5.5"},
	{Major: 6, Minor: 0}: {"ImageVolume", "tmpfs", "6.1"},
}

// TestApplyChecksAgainstHostPodman: a key newer than the host's podman and
// a unit its converter rejects both stop an apply (and a --diff) with exit
// 2 and the spec's path, before staging, with the host untouched; the
// release is read from podman's API; and `syslet validate` in CI says the
// same thing for --podman of the host's release.
func TestApplyChecksAgainstHostPodman(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	version := strings.TrimSpace(h.MustRun(t, "podman version --format '{{.Server.Version}}'"))
	release, err := unit.ParsePodman(version)
	must(t, err)
	newer, ok := newerKey[release]
	if !ok {
		t.Fatalf("the test host runs podman %q; this test knows a newer key for %v only", version, slices.Collect(maps.Keys(newerKey)))
	}
	newerFilter := fmt.Sprintf(`if .name == "web" then .unit.Container.%s = %q else . end`, newer.key, newer.value)
	newerFinding := fmt.Sprintf("%s needs podman %s", newer.key, newer.needs)
	apply(t, h, specDir)
	before := snapshot(t, h)
	inv := prop(t, h, "web.service", "InvocationID")

	for _, tc := range []struct {
		name, filter, want string
	}{
		{"key newer than the host", newerFilter,
			fmt.Sprintf("%s/60-web.json: [0].unit.Container.%s: [Container] %s or later; these specs are checked against podman %s", specDir, newer.key, newerFinding, release)},
		{"converter rejects",
			`if .name == "web" then .unit.Container.Group = "101" else . end`,
			specDir + "/60-web.json: [0].unit.Container.Group: podman's quadlet converter rejects web.container: invalid Group set without User"},
	} {
		h.MustRun(t, "cp "+specDir+"/60-web.json /root/60-web.json.orig")
		editSpec(t, h, "60-web.json", tc.filter)
		for _, args := range [][]string{{specDir}, {"--diff", specDir}} {
			r := syslet(h, args...)
			if r.Code != 2 || !strings.Contains(r.Stderr, tc.want+"\n") || strings.Contains(r.Stdout+r.Stderr, "staging") {
				t.Errorf("%s: syslet %v: want exit 2 with\n  %s\nand no staging, got:\n%s", tc.name, args, tc.want, r)
			}
		}
		// CI, with no host: the same finding for the same podman (for a
		// newer key, followed by the hint to say which podman with --podman).
		r := syslet(h, "validate", "--podman", release.String(), specDir)
		if r.Code != 2 || !strings.Contains(r.Stdout, tc.want) {
			t.Errorf("%s: validate --podman %s: want exit 2 with the same finding, got:\n%s", tc.name, release, r)
		}
		if snapshot(t, h) != before {
			t.Errorf("%s: /etc/containers changed", tc.name)
		}
		h.MustRun(t, "mv /root/60-web.json.orig "+specDir+"/60-web.json")
	}
	// The converter check runs beside the wait for the apply lock: while
	// another apply holds the lock, specs it rejects are reported at once,
	// not after the lock is released or the wait times out.
	h.MustRun(t, "cp "+specDir+"/60-web.json /root/60-web.json.orig")
	editSpec(t, h, "60-web.json", newerFilter)
	// A service holding the lock as an apply does (flock), outside the SSH
	// session so that it outlives the command that starts it.
	h.MustRun(t, `mkdir -p /run/syslet && systemd-run --quiet --unit=lockholder bash -c 'exec 9>/run/syslet/apply.lock; flock 9; exec sleep 300' &&
for i in $(seq 50); do flock -n /run/syslet/apply.lock true || break; sleep 0.1; done; ! flock -n /run/syslet/apply.lock true`)
	r := syslet(h, "--lock-timeout", "90s", specDir)
	h.MustRun(t, "systemctl stop lockholder")
	if r.Code != 2 || !strings.Contains(r.Stderr, newerFinding) || strings.Contains(r.Stderr, "within") {
		t.Errorf("invalid specs while another apply holds the lock: want exit 2 with the finding at once, got:\n%s", r)
	}
	h.MustRun(t, "mv /root/60-web.json.orig "+specDir+"/60-web.json")
	if prop(t, h, "web.service", "InvocationID") != inv {
		t.Error("web.service was restarted by applies that were refused")
	}
	// The release comes from podman's API, asked only when the verdict
	// depends on it (a key or value newer than 5.4): with the API down,
	// such specs cannot be judged, and the run says why.
	h.MustRun(t, "systemctl stop podman.socket podman.service")
	h.MustRun(t, "cp "+specDir+"/60-web.json /root/60-web.json.orig")
	editSpec(t, h, "60-web.json", newerFilter)
	if r := syslet(h, "--diff", specDir); r.Code != 1 || !strings.Contains(r.Stderr, "podman") || !strings.Contains(r.Stderr, "podman.socket") {
		t.Errorf("a %s key with podman's API down: want exit 1 naming podman's socket, got:\n%s", newer.needs, r)
	}
	h.MustRun(t, "mv /root/60-web.json.orig "+specDir+"/60-web.json")
	h.MustRun(t, "systemctl start podman.socket")
	// --podman is for --root only: on a host the host's podman decides.
	if r := syslet(h, "--diff", "--podman", "5.8", specDir); r.Code != 64 || !strings.Contains(r.Stderr, "--podman only applies with --root") {
		t.Errorf("--podman on a host: want a usage error, got:\n%s", r)
	}
	// And the examples, unchanged, are still a no-op.
	if r := syslet(h, "--diff", "--detailed-exitcode", specDir); r.Code != 0 {
		t.Errorf("examples after the refused applies: want no changes, got:\n%s", r)
	}
}

// usesFeature returns what the first value-level feature (unit.Features) a
// unit file uses does, or "".
func usesFeature(t *testing.T, data []byte) string {
	t.Helper()
	f, err := unit.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Sections {
		for _, e := range s.Entries {
			for _, ft := range unit.Features {
				if ft.Section == s.Name && slices.Contains(ft.Keys, e.Key) && ft.Matches(e.Value) {
					return ft.What
				}
			}
		}
	}
	return ""
}

var generatorError = regexp.MustCompile(`converting "([^"]+)": (.*)$`)

// TestHostGeneratorAgreesWithKeyTable runs the corpus of pkg/load/quadletcheck
// through the host's own generator (podman 5.4.2's on trixie, 5.8's on
// Debian testing): the units syslet calls valid for the host's release it
// accepts, the ones syslet gates as needing a later release it refuses for
// the key syslet names (or, for a [Unit] dependency on a quadlet file,
// leaves untranslated), and the ones the converter rejects it rejects too.
func TestHostGeneratorAgreesWithKeyTable(t *testing.T) {
	t.Parallel()
	root, err := testhost.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	corpus := filepath.Join(root, "pkg", "load", "quadletcheck", "testdata", "corpus")
	h := startWithSyslet(t)
	if err := h.CopyIn(corpus, "/root/corpus"); err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(h.MustRun(t, "podman version --format '{{.Client.Version}}'"))
	release, err := unit.ParsePodman(version)
	must(t, err)
	r := h.Run("QUADLET_UNIT_DIRS=/root/corpus /usr/libexec/podman/quadlet -dryrun -no-kmsg-log")
	rejected := map[string]string{}
	for _, line := range strings.Split(r.Stderr, "\n") {
		if m := generatorError.FindStringSubmatch(line); m != nil {
			rejected[m[1]] = m[2]
		}
	}
	ents, err := os.ReadDir(corpus)
	if err != nil {
		t.Fatal(err)
	}
	unsupported := regexp.MustCompile(`^unsupported key '([^']+)' in group '([^']+)'`)
	n := 0
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(corpus, e.Name()))
		if err != nil || filepath.Ext(e.Name()) == ".json" || filepath.Ext(e.Name()) == ".md" {
			continue
		}
		n++
		needs, reject := unit.OldestPodman, false // a unit of the corpus names what it needs when it is newer
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "## podman "); ok {
				if needs, err = unit.ParsePodman(v); err != nil {
					t.Fatal(err)
				}
			}
			reject = reject || strings.HasPrefix(line, "## reject ")
		}
		msg, refused := rejected[e.Name()]
		switch {
		case release.Less(needs):
			// syslet refuses these for the host's release. Its generator must not
			// treat them as the linked 5.8 converter does: it refuses the
			// key syslet gates, or it does not know the value feature
			// syslet gates (refusing it, or ignoring it — then the
			// generated unit shows the feature was not applied).
			m := unsupported.FindStringSubmatch(msg)
			feature := usesFeature(t, data)
			k := unit.KindOf(e.Name())
			typeSince, _ := unit.KeySince(k.Section, k.TypeKey)
			switch {
			case release.Less(typeSince):
				// A type the host's podman does not have (.artifact before
				// 5.7): its generator skips the file, no service is made.
				if refused || strings.Contains(r.Stdout, unit.DefaultService(e.Name())) {
					t.Errorf("%s: podman %s has no %s units, yet it converted the file (refused=%v %s)", e.Name(), version, filepath.Ext(e.Name()), refused, msg)
				}
			case m != nil:
				if since, ok := unit.KeySince(m[2], m[1]); !ok || !release.Less(since) {
					t.Errorf("%s: podman %s refuses [%s] %s, which syslet's table says %s knows", e.Name(), version, m[2], m[1], release)
				}
			case feature == "":
				t.Errorf("%s needs podman %s per syslet, but uses no newer key or feature syslet knows; podman %s says: refused=%v %s", e.Name(), needs, version, refused, msg)
			case !refused && strings.HasPrefix(feature, "naming a quadlet unit"):
				// The dependency line reaches the service untranslated.
				for _, line := range strings.Split(string(data), "\n") {
					if k, _, ok := strings.Cut(line, "="); ok && slices.Contains(unit.DependencyKeys, k) && !strings.Contains(r.Stdout, "\n"+line+"\n") {
						t.Errorf("%s: podman %s translated %q; syslet gates that as 5.5", e.Name(), version, line)
					}
				}
			}
			t.Logf("%s (podman %s): podman %s refused=%v %s", e.Name(), needs, version, refused, msg)
		case refused != reject:
			t.Errorf("%s: podman %s refuses it: %v (%s); syslet's corpus says reject=%v", e.Name(), version, refused, msg, reject)
		}
	}
	if n < 100 {
		t.Fatalf("ran %d corpus units", n)
	}
	t.Logf("podman %s's generator over %d corpus units: %d refused, all as syslet expects for podman %s", version, n, len(rejected), release)
}
