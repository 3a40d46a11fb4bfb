//go:build integration

package integration

// Issue 24's acceptance on a fresh test host: the .deb a release builds
// (TestMain builds it with package release) installs a working host with
// dpkg alone — no Go, no repository in the guest, only the .deb and the
// example specs copied in. Every claim is checked against dpkg, systemd,
// podman and the file system, not against syslet's own words.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/release"
)

func TestPackageInstallsAWorkingHost(t *testing.T) {
	t.Parallel()
	h := testhost.Start(t)
	root, err := testhost.ModuleRoot()
	must(t, err)
	if r := h.Run("command -v go syslet webhookd; ls /usr/local/go /root/syslet 2>/dev/null"); r.Stdout != "" {
		t.Fatalf("the guest is not fresh (Go, syslet or the repository found):\n%s", r)
	}
	const deb = "/root/syslet.deb"
	debPath, err := debFile()
	must(t, err)
	must(t, h.CopyIn(debPath, deb))
	must(t, h.CopyIn(filepath.Join(root, "examples"), specDir))
	h.MustRun(t, "rm -f "+specDir+"/*.sh") // specs only: no repository tooling in the guest

	// Install: dpkg alone resolves the dependencies from what the host has.
	h.MustRun(t, "dpkg -i "+deb)
	pkgInfo := h.MustRun(t, `dpkg-query -W -f '${Status}|${Version}|${Depends}|${Conffiles}' syslet`)
	for _, want := range []string{"install ok installed", stamp.PackageVersion() + "-1", "podman (>= 5.4), systemd", layout.WebhookdConfig + " "} {
		if !strings.Contains(pkgInfo, want) {
			t.Errorf("dpkg-query: want %q in %s", want, pkgInfo)
		}
	}
	modes := map[string]string{
		release.BinDir + "/syslet":                      "755 root root",
		release.BinDir + "/webhookd":                    "755 root root",
		release.UnitDir + "/" + release.ServiceName:     "644 root root",
		layout.ConfigHome:                               "700 root root",
		layout.WebhookdConfig:                           "600 root root",
		layout.StateHome:                                "700 root root",
		release.DocDir + "/copyright":                   "644 root root",
		"/usr/share/man/man1/syslet.1.gz":               "644 root root",
		"/usr/share/man/man8/webhookd.8.gz":             "644 root root",
		"/usr/share/man/man5/syslet-specs.5.gz":         "644 root root",
		"/usr/share/bash-completion/completions/syslet": "644 root root",
	}
	for _, c := range release.Completions {
		modes[c.Deb] = "644 root root"
	}
	for _, m := range release.Monitoring {
		modes[release.MonitoringDir+"/"+m] = "644 root root"
	}
	for p, want := range modes {
		if got := strings.TrimSpace(h.Run("stat -c '%a %U %G' " + p).Stdout); got != want {
			t.Errorf("%s: mode and owner %q, want %q", p, got, want)
		}
	}
	if v := h.MustRun(t, "syslet version"); !strings.Contains(v, stamp.Version) || !strings.Contains(v, "commit "+stamp.Commit) {
		t.Errorf("syslet version = %q, want version %s and commit %s", v, stamp.Version, stamp.Commit)
	}
	if v := h.MustRun(t, "webhookd --version"); !strings.Contains(v, stamp.Version) || !strings.Contains(v, stamp.Commit) {
		t.Errorf("webhookd --version = %q, want %s and %s", v, stamp.Version, stamp.Commit)
	}

	// Validate, then apply examples/ (its secret encrypted for this guest).
	h.MustRun(t, "systemctl enable --now podman.socket")
	encryptExamples(t, h, specDir)
	if r := syslet(h, "validate", specDir); !r.OK() {
		t.Fatalf("syslet validate:\n%s", r)
	}
	apply(t, h, specDir)
	for _, u := range []string{"app.service", "db.service", "web.service"} {
		if got := prop(t, h, u, "ActiveState"); got != "active" {
			t.Errorf("%s is %s after the apply, want active", u, got)
		}
	}
	if got := h.Eventually("curl -fsS http://127.0.0.1:8080/", 10*time.Second); !got.OK() || !strings.Contains(got.Stdout, "<h1>shop</h1>") {
		t.Errorf("web does not answer on its published port:\n%s", got)
	}
	// Stored specs (an apply from stdin keeps them) are syslet's own file.
	h.MustRun(t, "cat "+specDir+"/*.json | syslet --stdin")

	// webhookd: the packaged unit with a written config, deploying the same
	// specs from a repository on a signed push (a converged host: no change).
	w := &whHost{Host: h, t: t, secret: "0123456789abcdef0123456789abcdef"}
	host := strings.TrimSpace(h.MustRun(t, "hostname"))
	w.specDir = "hosts/" + host
	h.MustRun(t, "git init -q --bare -b main "+whBare+" && git init -q -b main "+whWork+
		" && git -C "+whWork+" remote add origin "+whBare+
		" && git -C "+whWork+" config user.email ops@example && git -C "+whWork+" config user.name ops"+
		" && mkdir -p "+whWork+"/"+w.specDir+" && cp "+specDir+"/*.json "+whWork+"/"+w.specDir+"/")
	commit := w.commit("the example stack")
	must(t, h.WriteFile(whSecret, []byte(w.secret+"\n"), 0o600))
	must(t, h.WriteFile(layout.WebhookdConfig, []byte(fmt.Sprintf("listen: 127.0.0.1:9090\nrepos:\n  - name: infra\n    url: %s\n    path: hosts/{hostname}\n    secretFile: %s\n", whBare, whSecret)), 0o600))
	if r := h.Run("systemctl enable --now " + release.ServiceName); !r.OK() {
		log, _ := h.JournalSince("", "-u", release.ServiceName, "-n", "30", "-o", "cat")
		t.Fatalf("systemctl enable --now webhookd:\n%s\n%s", r, log)
	}
	if got := prop(t, h, release.ServiceName, "FragmentPath"); got != release.UnitDir+"/"+release.ServiceName {
		t.Errorf("webhookd runs from %s, want the packaged unit", got)
	}
	if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: commit}); code != 202 {
		t.Fatalf("signed push: %d %s", code, reply)
	}
	st := w.waitStatus("the pushed commit applied", func(s whStatus) bool { return s.LastApplied == commit })
	if st.Last == nil || st.Last.Result != "success" {
		t.Errorf("webhookd's deploy: %+v", st.Last)
	}
	units := snapshot(t, h)
	inv := invocations(t, h, stack...)

	// Remove: the host's units, their config, the containers and syslet's
	// own config and journal stay; webhookd stops and its unit goes.
	h.MustRun(t, "dpkg -r syslet")
	if r := h.Run("command -v syslet webhookd; test -e " + release.UnitDir + "/" + release.ServiceName + " && echo unit"); r.Stdout != "" {
		t.Errorf("dpkg -r left programs or the unit:\n%s", r)
	}
	if got := prop(t, h, release.ServiceName, "ActiveState"); got == "active" {
		t.Errorf("webhookd still runs after dpkg -r")
	}
	checkHostKept(t, h, units, inv, "dpkg -r")
	h.MustRun(t, "test -s "+layout.Journal+" && test -s "+layout.StoredSpecs+" && test -f "+layout.WebhookdConfig)

	// Purge: syslet's own files go — stored specs, webhookd's config, state,
	// journal; a file the operator put into /etc/syslet stays, and so does
	// everything of the host's.
	h.MustRun(t, "dpkg -P syslet")
	for _, p := range []string{layout.StoredSpecs, layout.WebhookdConfig, layout.StateHome, layout.RunHome,
		"/etc/systemd/system/multi-user.target.wants/" + release.ServiceName} {
		if h.Run("test -e " + p + " || test -L " + p).OK() {
			t.Errorf("dpkg -P left %s", p)
		}
	}
	h.MustRun(t, "test -s "+whSecret) // the operator's, not syslet's
	if out := h.MustRun(t, "dpkg-query -W -f '${db:Status-Abbrev}' syslet 2>/dev/null || true"); strings.HasPrefix(out, "ii") || strings.HasPrefix(out, "rc") {
		t.Errorf("dpkg still knows syslet after purge: %q", out)
	}
	checkHostKept(t, h, units, inv, "dpkg -P")
	if out := h.MustRun(t, "journalctl -q -o cat -u "+release.ServiceName+" | wc -l"); strings.TrimSpace(out) == "0" {
		t.Errorf("the systemd journal lost webhookd's entries")
	}

	// Reinstall: the same specs plan nothing and a second apply changes nothing.
	h.MustRun(t, "dpkg -i "+deb)
	if r := syslet(h, "--diff", "--detailed-exitcode", specDir); r.Code != 0 {
		t.Errorf("plan after reinstall: exit %d (want 0, nothing to do)\n%s", r.Code, r)
	}
	if r := apply(t, h, specDir); !strings.Contains(r.Stdout, "No changes") {
		t.Errorf("apply after reinstall should change nothing:\n%s", r)
	}
	checkHostKept(t, h, units, inv, "reinstall and apply")
}

// checkHostKept fails unless /etc/containers is what it was and the
// stack's containers run without having been restarted.
func checkHostKept(t *testing.T, h *testhost.Host, units string, inv map[string]string, after string) {
	t.Helper()
	if got := snapshot(t, h); got != units {
		t.Errorf("after %s /etc/containers changed", after)
	}
	for u, id := range inv {
		if got := prop(t, h, u, "InvocationID"); got != id {
			t.Errorf("after %s %s was restarted or stopped (invocation %s → %s)", after, u, id, got)
		}
	}
	for _, c := range []string{"app", "db", "web"} {
		if r := h.Run("podman container inspect -f '{{.State.Status}}' " + c); strings.TrimSpace(r.Stdout) != "running" {
			t.Errorf("after %s container %s is not running:\n%s", after, c, r)
		}
	}
}
