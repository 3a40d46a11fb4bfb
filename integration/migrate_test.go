//go:build integration

package integration

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/syslet/syslet/integration/testhost"
)

// TestMigrateFromEarlierSyslet is the migration acceptance on a real host:
// the files the earlier syslet left (cmd/syslet/testdata/earlier/root:
// sorted unit lines, its config layout, build units without
// SetWorkingDirectory) are installed and started as it would have, then
// one syslet apply of the same specs takes the host over. Only legacy-web,
// whose config mounts move, restarts; the volume keeps its data, the image
// is not rebuilt, and a second plan is empty.
func TestMigrateFromEarlierSyslet(t *testing.T) {
	h := startWithSyslet(t)
	root, err := testhost.ModuleRoot()
	must(t, err)
	fixture := filepath.Join(root, "cmd", "syslet", "testdata", "earlier")
	must(t, h.CopyIn(filepath.Join(fixture, "root", "etc", "containers"), "/etc/containers"))
	must(t, h.CopyIn(filepath.Join(fixture, "specs"), "/root/earlier"))
	// The modes the earlier syslet wrote (its default 0644; git keeps no
	// modes, and a checkout under umask 002 gives 0664).
	h.MustRun(t, "find /etc/containers/builds /etc/containers/config /etc/containers/systemd -type f -exec chmod 0644 {} +")
	h.MustRun(t, "systemctl enable --now podman.socket")

	// Deploy the way the earlier syslet did: its units, one daemon-reload,
	// then start everything.
	h.MustRun(t, "systemctl daemon-reload")
	services := []string{"legacy-net-network.service", "legacy-data-volume.service", "legacy-tool-build.service",
		"legacy-db.service", "legacy-tool.service", "legacy-web.service"}
	for _, s := range services {
		if r := h.Run("systemctl start " + s); !r.OK() {
			t.Fatalf("starting %s as the earlier syslet would: %s\n%s", s, r, h.Run("journalctl -n 30 --no-pager -u "+s).Stdout)
		}
	}
	h.MustRun(t, "podman exec legacy-db sh -c 'echo kept > /data/marker'")
	image := strings.TrimSpace(h.MustRun(t, "podman image inspect --format '{{.Id}}' localhost/legacy-tool:1"))
	unchanged := []string{"legacy-net-network.service", "legacy-data-volume.service", "legacy-db.service", "legacy-tool.service"}
	before := invocations(t, h, append(unchanged, "legacy-web.service")...)

	plan := syslet(h, "--diff", "--output", "json", "/root/earlier")
	if !plan.OK() {
		t.Fatalf("plan: %s", plan)
	}
	for _, op := range []string{`"delete-volume"`, `"delete-network"`, `"delete-image"`, `"remove-unit"`, `"recreate"`, `"rebuild"`} {
		if strings.Contains(plan.Stdout, op) {
			t.Errorf("the takeover plan holds %s:\n%s", op, plan.Stdout)
		}
	}

	r := apply(t, h, "/root/earlier")
	t.Logf("apply:\n%s", r.Stdout)

	after := invocations(t, h, append(unchanged, "legacy-web.service")...)
	for _, u := range unchanged {
		if after[u] != before[u] {
			t.Errorf("%s was restarted (InvocationID %s → %s)", u, before[u], after[u])
		}
	}
	if after["legacy-web.service"] == before["legacy-web.service"] {
		t.Errorf("legacy-web.service was not restarted, but its config mounts moved")
	}
	if st := prop(t, h, "legacy-web.service", "ActiveState"); st != "active" {
		t.Errorf("legacy-web.service is %s", st)
	}
	if got := h.MustRun(t, "podman exec legacy-web cat /etc/web/web.conf /etc/web/conf.d/10-site.conf /srv/index.html"); got != "port=8080\nsite=legacy\n<h1>legacy</h1>\n" {
		t.Errorf("legacy-web sees %q through its moved mounts", got)
	}
	if got := strings.TrimSpace(h.MustRun(t, "podman exec legacy-db cat /data/marker")); got != "kept" {
		t.Errorf("volume data: %q", got)
	}
	if got := strings.TrimSpace(h.MustRun(t, "podman image inspect --format '{{.Id}}' localhost/legacy-tool:1")); got != image {
		t.Errorf("image rebuilt: %s → %s", image, got)
	}
	if out := h.MustRun(t, "ls /etc/containers/config/legacy-web"); strings.Contains(out, "-") {
		t.Errorf("the earlier layout was not pruned: %q", out)
	}

	// Converged: a fresh plan has nothing to do.
	if second := syslet(h, "--diff", "--detailed-exitcode", "/root/earlier"); second.Code != 0 {
		t.Errorf("second plan is not empty (exit %d):\n%s", second.Code, second.Stdout)
	}
}
