//go:build integration

package integration

import (
	"strings"
	"testing"
)

// TestUpdateJudgesTheRunningContainer: an update compares the image each
// container runs with what its tag names in the registry, whatever the
// host's local copy of the tag says. Two ways the local tag and the
// running container part: someone pulled the moved tag on the host (the
// local tag names the new image, the container still runs the old one),
// and the local tag was removed (the old image stays, untagged, in use).
// In both, `update --diff` plans a restart naming both images (exit 3),
// `update` serves the tag's image, and a second `update --diff` plans
// nothing. The drift check sees the first case without asking a registry.
func TestUpdateJudgesTheRunningContainer(t *testing.T) {
	t.Parallel()
	r := rollbackHost(t)
	if _, err := r.MakeImage("app:2", "marker-a"); err != nil {
		t.Fatal(err)
	}
	r.writeStack(webSpec{image: "localhost:5000/app:2", conf: "MODE=ok\n"})
	if res := r.syslet("--soak", "2s", rbDir); !res.OK() {
		t.Fatalf("deploy of app:2:\n%s", res)
	}
	// updated moves the tag, lets the case make the host's store disagree
	// with the running container, and checks that an update sees it.
	updated := func(t *testing.T, marker string, local func(), want ...string) {
		r.t = t
		oldImage := r.imageID("web")
		r.pushTo("app:2", marker)
		newDigest := r.registryDigest("app", "2")
		local()
		if got := r.imageID("web"); got != oldImage {
			t.Fatalf("web's image changed before the update: %s → %s", oldImage, got)
		}
		diff := r.syslet("update", "--diff", "--detailed-exitcode", rbDir)
		t.Logf("syslet update --diff:\n%s", diff.Stdout)
		if diff.Code != 3 || !strings.Contains(diff.Stdout, "to   "+newDigest) || !strings.Contains(diff.Stdout, "restarts web.service") {
			t.Errorf("want the update planned with the tag's digest %s (exit 3), got:\n%s", newDigest, diff)
		}
		for _, w := range want {
			if !strings.Contains(diff.Stdout, w) {
				t.Errorf("update --diff does not say %q:\n%s", w, diff.Stdout)
			}
		}
		res := r.syslet("update", "--soak", "2s", rbDir)
		t.Logf("syslet update:\n%s", res.Stdout)
		if !res.OK() {
			t.Fatalf("update:\n%s", res)
		}
		if got := r.serves(); got != marker {
			t.Errorf("web serves %q after the update, want %s", got, marker)
		}
		again := r.syslet("update", "--diff", "--detailed-exitcode", rbDir)
		if again.Code != 0 || strings.Contains(again.Stdout, "Image updates") {
			t.Errorf("a second update --diff plans something:\n%s", again)
		}
	}
	t.Run("pulled on the host, not restarted", func(t *testing.T) {
		var drift string
		updated(t, "marker-b", func() {
			r.MustRun(t, "podman pull -q --tls-verify=false localhost:5000/app:2 >/dev/null")
			res := r.syslet("--diff", "--detailed-exitcode", "--metrics-file", "/root/drift.prom", rbDir)
			drift = res.Stdout + r.MustRun(t, "cat /root/drift.prom")
			t.Logf("drift check after the pull:\n%s", drift)
			if res.Code != 0 || !strings.Contains(res.Stdout, "web.service runs an older image than localhost:5000/app:2 names on this host") {
				t.Errorf("the drift check does not see the container running an older image than its local tag (exit %d; an apply changes nothing, so 0):\n%s", res.Code, res)
			}
			if !strings.Contains(drift, `syslet_drift_units{kind="stale-image"} 1`) {
				t.Errorf("no stale-image metric:\n%s", drift)
			}
		}, "pulled on this host already: restart")
		res := r.syslet("--diff", "--detailed-exitcode", "--metrics-file", "/root/drift.prom", rbDir)
		if res.Code != 0 || !strings.Contains(r.MustRun(t, "cat /root/drift.prom"), `syslet_drift_units{kind="stale-image"} 0`) {
			t.Errorf("after the update the drift check still reports a stale image (exit %d):\n%s\n%s", res.Code, res, r.MustRun(t, "cat /root/drift.prom"))
		}
	})
	t.Run("local tag removed", func(t *testing.T) {
		updated(t, "marker-c", func() {
			r.MustRun(t, "podman untag localhost:5000/app:2")
		}, "pull and restart")
	})
}
