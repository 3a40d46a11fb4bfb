//go:build integration

package integration

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/release"
)

// pushTo makes an image with marker and pushes it to localhost:5000/REF
// under another name first, so that the host's own copy of REF keeps its
// tag: the registry's tag moves, as when someone pushes from elsewhere.
func (r *rbHost) pushTo(ref, marker string) {
	r.t.Helper()
	r.MustRun(r.t, "KEEP=1 testhost-mkimage "+ref+"-next "+marker+" >/dev/null && "+
		"podman push -q --tls-verify=false localhost:5000/"+ref+"-next docker://localhost:5000/"+ref+" && podman rmi localhost:5000/"+ref+"-next >/dev/null")
}

// pushBrokenTo pushes an image whose entrypoint runs script to
// localhost:5000/REF, again without touching the host's copy of REF.
func (r *rbHost) pushBrokenTo(ref, script string) {
	r.t.Helper()
	src := r.brokenImage(ref+"-broken", script)
	r.MustRun(r.t, "podman pull -q --tls-verify=false "+src+" >/dev/null && podman push -q --tls-verify=false "+src+" docker://localhost:5000/"+ref+" && podman rmi "+src+" >/dev/null")
}

// registryDigest is the digest the local registry's tag names, asked of
// the registry itself.
func (r *rbHost) registryDigest(repo, tag string) string {
	r.t.Helper()
	out := r.MustRun(r.t, "curl -sSI -H 'Accept: application/vnd.oci.image.manifest.v1+json' -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' -H 'Accept: application/vnd.oci.image.index.v1+json' http://localhost:5000/v2/"+repo+"/manifests/"+tag)
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, "Docker-Content-Digest") {
			return strings.TrimSpace(v)
		}
	}
	r.t.Fatalf("no Docker-Content-Digest in:\n%s", out)
	return ""
}

// TestUpdate: syslet update notices a tag that moved in the registry,
// --diff shows it and changes nothing, an update pulls it and restarts
// only the container that runs it, and a second update plans nothing. A
// tag moved to an image that exits fails the gate and is rolled back to
// the image that ran, history shows the image change, and that digest is
// not tried again; a later good push is updated normally. A registry that
// cannot be asked stops the update naming the image, with nothing changed.
func TestUpdate(t *testing.T) {
	t.Parallel()
	r := rollbackHost(t)
	if _, err := r.MakeImage("app:2", "marker-a"); err != nil {
		t.Fatal(err)
	}
	r.writeStack(webSpec{image: "localhost:5000/app:2", conf: "MODE=ok\n"})
	if res := r.syslet("--soak", "3s", rbDir); !res.OK() {
		t.Fatalf("deploy of app:2:\n%s", res)
	}
	if got := r.serves(); got != "marker-a" {
		t.Fatalf("web serves %q", got)
	}
	if res := r.syslet("update", "--diff", "--detailed-exitcode", rbDir); res.Code != 0 || strings.Contains(res.Stdout, "Image updates") {
		t.Fatalf("update --diff before the tag moved: want nothing (exit 0), got:\n%s", res)
	}
	oldDigest, oldImage := r.registryDigest("app", "2"), r.imageID("web")
	webInv, otherInv := r.invocation("web.service"), r.invocation("other.service")

	r.pushTo("app:2", "marker-b")
	newDigest := r.registryDigest("app", "2")
	if newDigest == oldDigest {
		t.Fatalf("the push did not move the tag (%s)", newDigest)
	}
	t.Run("a plain apply asks no registry", func(t *testing.T) {
		r.t = t
		if res := r.syslet("--diff", "--detailed-exitcode", rbDir); res.Code != 0 {
			t.Errorf("plain --diff after the tag moved: want no changes, got:\n%s", res)
		}
	})
	t.Run("diff", func(t *testing.T) {
		r.t = t
		res := r.syslet("update", "--diff", "--detailed-exitcode", rbDir)
		t.Logf("syslet update --diff:\n%s", res.Stdout)
		if res.Code != 3 || !strings.Contains(res.Stdout, "Image updates:") || !strings.Contains(res.Stdout, "localhost:5000/app:2") ||
			!strings.Contains(res.Stdout, "from "+oldDigest) || !strings.Contains(res.Stdout, "to   "+newDigest) || !strings.Contains(res.Stdout, "restarts web.service") {
			t.Fatalf("want the update with both digests (exit 3), got:\n%s", res)
		}
		if strings.Contains(res.Stdout, "other.service") && strings.Contains(res.Stdout, "restart: ") && strings.Contains(res.Stdout, "stop other.service") {
			t.Errorf("the plan restarts other:\n%s", res.Stdout)
		}
		if got := r.imageID("web"); got != oldImage {
			t.Errorf("--diff changed web's image: %s → %s", oldImage, got)
		}
		if out := r.MustRun(t, "podman image inspect --format '{{.RepoDigests}}' localhost:5000/app:2"); strings.Contains(out, newDigest) {
			t.Errorf("--diff pulled the new image: %s", out)
		}
		if got := r.invocation("web.service"); got != webInv {
			t.Errorf("--diff restarted web")
		}
	})
	t.Run("update", func(t *testing.T) {
		r.t = t
		res := r.syslet("update", "--soak", "3s", rbDir)
		t.Logf("syslet update:\n%s", res.Stdout)
		if !res.OK() || !strings.Contains(res.Stdout, "pull") {
			t.Fatalf("update:\n%s", res)
		}
		if got := r.serves(); got != "marker-b" {
			t.Errorf("web serves %q after the update, want marker-b", got)
		}
		if got := r.imageID("web"); got == oldImage {
			t.Errorf("web still runs %s", got)
		}
		if got := r.invocation("web.service"); got == webInv {
			t.Errorf("web was not restarted")
		}
		if got := r.invocation("other.service"); got != otherInv {
			t.Errorf("other.service was restarted (InvocationID %s → %s)", otherInv, got)
		}
		again := r.syslet("update", "--diff", "--detailed-exitcode", rbDir)
		if again.Code != 0 || strings.Contains(again.Stdout, "Image updates") {
			t.Errorf("a second update plans something:\n%s", again)
		}
		if res := r.syslet("update", rbDir); !res.OK() || !strings.Contains(res.Stdout+res.Stderr, "No changes") {
			t.Errorf("a second update:\n%s", res)
		}
	})
	var goodDigest string // what web runs before the tag moves to an image that exits
	t.Run("tag moved to an image that exits", func(t *testing.T) {
		r.t = t
		goodImage := r.imageID("web")
		goodDigest = r.registryDigest("app", "2")
		r.pushBrokenTo("app:2", "echo app-broken; exit 3")
		badDigest := r.registryDigest("app", "2")
		res := r.syslet("update", "--soak", "3s", rbDir)
		r.rolledBack(res, "exit status 3|restarted", "marker-b", goodImage, otherInv)
		hist := r.MustRun(t, "syslet history -n 2")
		t.Logf("syslet history -n 2:\n%s", hist)
		if !strings.Contains(hist, "image localhost:5000/app:2 "+goodDigest+" → "+badDigest+" (restarts web.service)") {
			t.Errorf("history does not show the image change %s → %s:\n%s", goodDigest, badDigest, hist)
		}
		again := r.syslet("update", "--diff", "--detailed-exitcode", rbDir)
		t.Logf("update --diff after the rollback:\n%s", again.Stdout)
		if again.Code != 0 || strings.Contains(again.Stdout, "Image updates") || !strings.Contains(again.Stdout, "not updated to "+badDigest) ||
			!strings.Contains(again.Stdout, "failed the health gate") {
			t.Errorf("want the failed digest held, and the plan to say why:\n%s", again)
		}
		if res := r.syslet("update", "--soak", "2s", rbDir); !res.OK() {
			t.Errorf("an update with the failed digest held:\n%s", res)
		}
		if got := r.imageID("web"); got != goodImage {
			t.Errorf("the held update ran anyway: web runs %s, want %s", got, goodImage)
		}
	})
	t.Run("a good push after the failed one", func(t *testing.T) {
		r.t = t
		pinnedImage, webInv := r.imageID("web"), r.invocation("web.service")
		r.pushTo("app:2", "marker-d")
		fixed := r.registryDigest("app", "2")
		diff := r.syslet("update", "--diff", "--detailed-exitcode", rbDir)
		t.Logf("syslet update --diff:\n%s", diff.Stdout)
		if diff.Code != 3 || !strings.Contains(diff.Stdout, "from "+goodDigest) || !strings.Contains(diff.Stdout, "to   "+fixed) || !strings.Contains(diff.Stdout, "restarts web.service") {
			t.Fatalf("want the good push planned (exit 3):\n%s", diff)
		}
		res := r.syslet("update", "--soak", "3s", rbDir)
		t.Logf("syslet update:\n%s", res.Stdout)
		if !res.OK() {
			t.Fatalf("update to the good push:\n%s", res)
		}
		if got := r.serves(); got != "marker-d" {
			t.Errorf("web serves %q, want marker-d", got)
		}
		if got := r.imageID("web"); got == pinnedImage {
			t.Errorf("web still runs the pinned image %s", got)
		}
		if r.invocation("web.service") == webInv {
			t.Errorf("web was not restarted")
		}
		if r.invocation("other.service") != otherInv {
			t.Errorf("other.service was restarted")
		}
		if out := r.Run("test -e /etc/containers/systemd/web.container.d/99-syslet-pin.conf"); out.OK() {
			t.Errorf("the rollback's pin is still installed")
		}
		if again := r.syslet("update", "--diff", "--detailed-exitcode", rbDir); again.Code != 0 || strings.Contains(again.Stdout, "Image updates") {
			t.Errorf("after the good update, update --diff plans something:\n%s", again)
		}
		gen := r.MustRun(t, "cat $(ls -d /var/lib/syslet/generations/*.json | tail -1)")
		if !strings.Contains(gen, `"digest":"`+fixed+`"`) {
			t.Errorf("the newest generation does not record web's digest %s:\n%.600s", fixed, gen)
		}
	})
	t.Run("registry cannot be asked", func(t *testing.T) {
		r.t = t
		r.MustRun(t, "podman tag localhost:5000/busybox:latest localhost:5999/gone:1")
		gone := `{"apiVersion":"v1","type":"container","name":"gone","unit":{"Container":{"Image":"localhost:5999/gone:1","RunInit":"true","Exec":"sleep 2147483647"}}}`
		r.writeStack(webSpec{image: "localhost:5000/app:2", conf: "MODE=ok\n"}, gone)
		if res := r.syslet("--soak", "2s", rbDir); !res.OK() {
			t.Fatalf("deploy of gone:\n%s", res)
		}
		before := r.MustRun(t, unitsAndFiles("web.service other.service gone.service"))
		res := r.syslet("update", rbDir)
		t.Logf("syslet update with a registry that does not answer:\n%s", res)
		if res.Code != 1 || !strings.Contains(res.Stdout+res.Stderr, `"localhost:5999/gone:1"`) {
			t.Errorf("want exit 1 naming the image, got:\n%s", res)
		}
		if after := r.MustRun(t, unitsAndFiles("web.service other.service gone.service")); after != before {
			t.Errorf("the host changed:\n%s\n---\n%s", before, after)
		}
	})
	t.Run("podman's own timer is running", func(t *testing.T) {
		r.t = t
		r.writeStack(webSpec{image: "localhost:5000/app:2", conf: "MODE=ok\n", keys: map[string]any{"AutoUpdate": "registry"}})
		if res := r.syslet("--diff", rbDir); strings.Contains(res.Stdout, "podman-auto-update.timer is running") {
			t.Errorf("the timer is stopped, yet the plan says it runs:\n%s", res)
		}
		r.MustRun(t, "systemctl start podman-auto-update.timer")
		res := r.syslet("--diff", rbDir)
		t.Logf("syslet --diff with AutoUpdate= and the timer running:\n%s", res.Stdout)
		if !strings.Contains(res.Stdout, "podman-auto-update.timer is running on this host") || !strings.Contains(res.Stdout, "web.service (AutoUpdate=registry)") {
			t.Errorf("want the plan to warn of the timer:\n%s", res)
		}
		r.MustRun(t, "systemctl stop podman-auto-update.timer")
	})
	t.Run("packaged timer", func(t *testing.T) {
		r.t = t
		root, err := testhost.ModuleRoot()
		must(t, err)
		for _, u := range release.UpdateUnits {
			must(t, r.CopyIn(filepath.Join(root, release.Packaging, u), "/etc/systemd/system/"+u))
		}
		r.MustRun(t, "ln -sf /usr/local/bin/syslet /usr/bin/syslet && systemctl daemon-reload")
		if out := r.MustRun(t, "systemd-analyze verify --man=no /etc/systemd/system/syslet-update.service /etc/systemd/system/syslet-update.timer 2>&1"); strings.TrimSpace(out) != "" {
			t.Errorf("systemd-analyze verify: %s", out)
		}
		if st := strings.TrimSpace(r.Run("systemctl is-enabled syslet-update.timer").Stdout); st != "disabled" {
			t.Errorf("syslet-update.timer is %q, want disabled until an operator enables it", st)
		}
		// The service updates the stored specs, as a plain syslet applies them.
		r.writeStack(webSpec{image: "localhost:5000/app:2", conf: "MODE=ok\n"})
		if res := r.Run("syslet --stdin < " + rbDir + "/stack.json"); !res.OK() {
			t.Fatalf("storing the specs:\n%s", res)
		}
		otherInv := r.invocation("other.service")
		r.pushTo("app:2", "marker-c")
		if res := r.Run("systemctl start syslet-update.service"); !res.OK() {
			log, _ := r.JournalSince("", "-u", "syslet-update.service", "-o", "cat")
			t.Fatalf("syslet-update.service:\n%s\n%s", res, log)
		}
		log, _ := r.JournalSince("", "-u", "syslet-update.service", "-o", "cat")
		t.Logf("syslet-update.service:\n%s", log)
		if got := r.serves(); got != "marker-c" {
			t.Errorf("web serves %q after syslet-update.service, want marker-c", got)
		}
		if got := r.invocation("other.service"); got != otherInv {
			t.Errorf("other.service was restarted")
		}
	})
}

// unitsAndFiles is a command printing the units' InvocationIDs and the
// unit directory's listing (with times): equal before and after a run
// that must change nothing.
func unitsAndFiles(units string) string {
	return "systemctl show -P InvocationID " + units + "; ls -lR --time-style=full-iso /etc/containers/systemd"
}
