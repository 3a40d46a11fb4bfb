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
// one syslet apply of the same specs takes the host over. The stack holds
// what the earlier tool read leniently (issue 21): a config dir written
// with a trailing slash (legacy-proxy), Restart=/WantedBy= it overwrote and
// a Network map value it ignored (legacy-cache), a oneshot with Type=notify
// it overwrote (legacy-job), a volume without unit whose marker says
// RemovalAllowed=false (legacy-scratch). Only legacy-web and legacy-proxy,
// whose config mounts move to syslet's layout (the documented move),
// restart; every other service keeps its InvocationID, the volume keeps
// its data, the image is not rebuilt, and a second plan is empty.
func TestMigrateFromEarlierSyslet(t *testing.T) {
	t.Parallel()
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
	services := []string{"legacy-net-network.service", "legacy-data-volume.service", "legacy-scratch-volume.service", "legacy-tool-build.service",
		"legacy-db.service", "legacy-tool.service", "legacy-web.service", "legacy-proxy.service", "legacy-cache.service", "legacy-job.service"}
	for _, s := range services {
		if r := h.Run("systemctl start " + s); !r.OK() {
			t.Fatalf("starting %s as the earlier syslet would: %s\n%s", s, r, h.Run("journalctl -n 30 --no-pager -u "+s).Stdout)
		}
	}
	h.MustRun(t, "podman exec legacy-db sh -c 'echo kept > /data/marker'")
	image := strings.TrimSpace(h.MustRun(t, "podman image inspect --format '{{.Id}}' localhost/legacy-tool:1"))
	moved := []string{"legacy-web.service", "legacy-proxy.service"}
	unchanged := []string{"legacy-net-network.service", "legacy-data-volume.service", "legacy-scratch-volume.service",
		"legacy-db.service", "legacy-tool.service", "legacy-cache.service", "legacy-job.service"}
	before := invocations(t, h, append(unchanged, moved...)...)
	// What the earlier tool's overwrites gave the services, before and
	// after: syslet must leave them so.
	policies := func() string {
		return h.MustRun(t, "systemctl show -p Restart --value legacy-cache.service; systemctl show -p Type --value legacy-job.service; "+
			"systemctl show -p WantedBy --value legacy-cache.service | tr ' ' '\\n' | sort | tr '\\n' ' '; echo; "+
			"podman inspect --format '{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}' legacy-cache")
	}
	policiesBefore := policies()
	// (default.target is graphical.target's alias on the test host.)
	if policiesBefore != "always\noneshot\ngraphical.target multi-user.target \nlegacy-net \n" {
		t.Fatalf("the earlier host's services: %q", policiesBefore)
	}

	plan := syslet(h, "--diff", "--output", "json", "/root/earlier")
	if !plan.OK() {
		t.Fatalf("plan: %s", plan)
	}
	for _, op := range []string{`"delete-volume"`, `"delete-network"`, `"delete-image"`, `"remove-unit"`, `"recreate"`, `"rebuild"`} {
		if strings.Contains(plan.Stdout, op) {
			t.Errorf("the takeover plan holds %s:\n%s", op, plan.Stdout)
		}
	}
	if !strings.Contains(plan.Stdout, `"rule": "removal-allowed-default"`) {
		t.Errorf("the plan does not warn that legacy-scratch.volume loses RemovalAllowed=false:\n%s", plan.Stdout)
	}

	r := apply(t, h, "/root/earlier")
	t.Logf("apply:\n%s", r.Stdout)

	after := invocations(t, h, append(unchanged, moved...)...)
	for _, u := range unchanged {
		if after[u] != before[u] {
			t.Errorf("%s was restarted (InvocationID %s → %s)", u, before[u], after[u])
		}
	}
	for _, u := range moved {
		if after[u] == before[u] {
			t.Errorf("%s was not restarted, but its config mounts moved", u)
		}
		if st := prop(t, h, u, "ActiveState"); st != "active" {
			t.Errorf("%s is %s", u, st)
		}
	}
	if got := policies(); got != policiesBefore {
		t.Errorf("the services' restart policy, type, wants or networks changed: %q → %q", policiesBefore, got)
	}
	if got := h.MustRun(t, "podman exec legacy-web cat /etc/web/web.conf /etc/web/conf.d/10-site.conf /srv/index.html"); got != "port=8080\nsite=legacy\n<h1>legacy</h1>\n" {
		t.Errorf("legacy-web sees %q through its moved mounts", got)
	}
	if got := h.MustRun(t, "podman exec legacy-proxy cat /etc/nginx/conf.d/default.conf"); got != "proxy=legacy\n" {
		t.Errorf("legacy-proxy sees %q through its moved config dir", got)
	}
	if got := strings.TrimSpace(h.MustRun(t, "podman exec legacy-db cat /data/marker")); got != "kept" {
		t.Errorf("volume data: %q", got)
	}
	if got := strings.TrimSpace(h.MustRun(t, "podman image inspect --format '{{.Id}}' localhost/legacy-tool:1")); got != image {
		t.Errorf("image rebuilt: %s → %s", image, got)
	}
	for _, c := range []string{"legacy-web", "legacy-proxy"} {
		if out := h.MustRun(t, "ls /etc/containers/config/"+c); strings.Contains(out, "-") {
			t.Errorf("the earlier layout of %s was not pruned: %q", c, out)
		}
	}

	// Converged: a fresh plan has nothing to do, and says so in the
	// earlier syslet's words.
	second := syslet(h, "--diff", "--detailed-exitcode", "/root/earlier")
	t.Logf("second plan (exit %d):\n%s", second.Code, second.Stdout)
	if second.Code != 0 || !strings.Contains(second.Stdout, "No changes detected.") {
		t.Errorf("second plan is not empty (exit %d):\n%s", second.Code, second.Stdout)
	}

	// docs/how-to/migrate.md's way to keep another restart policy: a drop-in, which
	// comes after syslet's line and which syslet leaves alone.
	must(t, h.WriteFile("/etc/containers/systemd/legacy-cache.container.d/restart.conf", []byte("[Service]\nRestart=on-failure\n"), 0o644))
	h.MustRun(t, "systemctl daemon-reload")
	if got := strings.TrimSpace(h.MustRun(t, "systemctl show -p Restart --value legacy-cache.service")); got != "on-failure" {
		t.Errorf("with the drop-in, legacy-cache.service has Restart=%s", got)
	}
	if d := syslet(h, "--diff", "--detailed-exitcode", "/root/earlier"); d.Code != 0 {
		t.Errorf("a drop-in of the operator's is not left alone (exit %d):\n%s", d.Code, d.Stdout)
	}
}
