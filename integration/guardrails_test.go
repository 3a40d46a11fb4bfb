//go:build integration

package integration

// Issue 8's acceptance on real test hosts: empty input, a planted symlink,
// a hand edit (drift), adopting hand-written quadlets, and redaction of a
// 0600 config file.

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

// storedSum fingerprints the stored stream; "absent" when there is none.
func storedSum(t *testing.T, h *testhost.Host) string {
	t.Helper()
	return h.MustRun(t, "sha256sum /etc/syslet/config.json 2>/dev/null || echo absent")
}

// 1. Input with no JSON value is invalid (exit 2) for apply, --diff and
// validate: nothing on the host changes and nothing is stored. An explicit
// [] that would remove every managed unit is refused without
// --allow-removals, naming what would go.
func TestGuardEmptyInput(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	if r := h.Run("cat " + specDir + "/*.json | syslet --stdin"); !r.OK() {
		t.Fatalf("apply from stdin:\n%s", r)
	}
	before, stored := snapshot(t, h), storedSum(t, h)
	h.MustRun(t, "mkdir -p /root/empty && touch /root/empty/README")
	for _, cmd := range []string{
		"syslet --stdin </dev/null",
		"printf ' \\n\\t\\n' | syslet --stdin",
		"syslet --diff --stdin </dev/null",
		"syslet validate - </dev/null",
		"syslet /root/empty",
		"syslet validate /root/empty",
	} {
		r := h.Run(cmd)
		if r.Code != 2 || !strings.Contains(r.Stderr+r.Stdout, "no JSON value") && !strings.Contains(r.Stderr+r.Stdout, "no *.json file") {
			t.Errorf("%s: exit %d, want 2 with a reason:\n%s", cmd, r.Code, r)
		}
	}
	r := h.Run("echo '[]' | syslet --stdin")
	if r.Code != 1 || !strings.Contains(r.Stdout, "--allow-removals") || !strings.Contains(r.Stdout, "web.container") {
		t.Errorf("[] must be refused naming the units:\n%s", r)
	}
	if got := snapshot(t, h); got != before {
		t.Errorf("/etc/containers changed")
	}
	if got := storedSum(t, h); got != stored {
		t.Errorf("stored config changed: %s -> %s", stored, got)
	}
	if st := prop(t, h, "web.service", "ActiveState"); st != "active" {
		t.Errorf("web.service is %s", st)
	}
}

// 2. A symlink planted where syslet keeps a container's config files: the
// apply is refused naming it (so is --diff), and the link's target is
// untouched.
func TestGuardSymlinkPlanted(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	apply(t, h, specDir)
	h.MustRun(t, "mkdir -p /root/elsewhere && echo precious > /root/elsewhere/keep && rm -rf /etc/containers/config/web && ln -s /root/elsewhere /etc/containers/config/web")
	editSpec(t, h, "60-web.json", `if .name == "web" then .configFiles[0].content = "<h1>v2</h1>\n" else . end`)
	target := h.MustRun(t, "cd /root/elsewhere && find . -printf '%p %s\\n' | sort && cat keep")
	for _, args := range [][]string{{"--diff", specDir}, {specDir}} {
		r := syslet(h, args...)
		if r.Code != 1 || !strings.Contains(r.Stdout+r.Stderr, "/etc/containers/config/web is a symlink") {
			t.Errorf("syslet %v: exit %d, want 1 naming the link:\n%s", args, r.Code, r)
		}
	}
	if got := h.MustRun(t, "cd /root/elsewhere && find . -printf '%p %s\\n' | sort && cat keep"); got != target {
		t.Errorf("the link's target changed:\n%s\nwas:\n%s", got, target)
	}
}

// 3. A hand-edited managed unit: the plan shows drift, an apply keeps the
// edit, --force replaces it.
func TestGuardDrift(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	apply(t, h, specDir)
	unit := "/etc/containers/systemd/db.container"
	h.MustRun(t, `sed -i '/^\[Container\]/a Environment=TUNED_BY_HAND=1' `+unit)
	edited := h.MustRun(t, "cat "+unit)

	d := syslet(h, "--diff", specDir)
	if !d.OK() || !strings.Contains(d.Stdout, "db.container") || !strings.Contains(d.Stdout, "drift") || !strings.Contains(d.Stdout, "TUNED_BY_HAND") {
		t.Errorf("--diff must show the drift with its diff:\n%s", d)
	}
	apply(t, h, specDir)
	if got := h.MustRun(t, "cat "+unit); got != edited {
		t.Errorf("apply overwrote the hand edit:\n%s", got)
	}
	if r := syslet(h, "--force", specDir); !r.OK() {
		t.Fatalf("apply --force:\n%s", r)
	}
	if got := h.MustRun(t, "cat "+unit); strings.Contains(got, "TUNED_BY_HAND") {
		t.Errorf("--force kept the hand edit:\n%s", got)
	}
	if d := syslet(h, "--diff", specDir); !strings.Contains(d.Stdout, "No changes") {
		t.Errorf("after --force the host must match the specs:\n%s", d)
	}
}

// podmanSecrets fingerprints podman secrets: ID, creation and update time
// of each, so a test can tell that nothing replaced or touched them.
func podmanSecrets(t *testing.T, h *testhost.Host, names ...string) string {
	t.Helper()
	return h.MustRun(t, "podman secret inspect --format '{{.Spec.Name}} {{.ID}} {{.CreatedAt}} {{.UpdatedAt}}' "+strings.Join(names, " "))
}

// 3b. A hand-edited file of a config dir: the plan shows drift (the
// world-readable file with its diff, the 0640 one hidden), an apply keeps
// the edit and neither rewrites the unit nor reloads the service,
// --force replaces it. A dir written before digests were recorded is
// converged, not drift.
func TestGuardDriftConfigDir(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	apply(t, h, specDir)
	dir := "/etc/containers/config/app/etc/app/conf.d"
	unit := "/etc/containers/systemd/app.container"
	// Through the per-file links, as an editor or >> writes.
	h.MustRun(t, "echo 'pool=64 # tuned by hand' >> "+dir+"/10-db.conf && echo 'private-flag-4711=on' >> "+dir+"/20-features.conf")
	edited := h.MustRun(t, "cat "+dir+"/10-db.conf "+dir+"/20-features.conf")
	unitBefore := h.MustRun(t, "stat -c '%Y %s' "+unit+" && sha256sum "+unit)
	inv := invocations(t, h, "app.service")

	d := syslet(h, "--diff", specDir)
	for _, want := range []string{"app.container", "drift", "! " + dir + "/10-db.conf", "-pool=64 # tuned by hand", "! " + dir + "/20-features.conf", "(content hidden: mode 0640"} {
		if !d.OK() || !strings.Contains(d.Stdout, want) {
			t.Errorf("--diff must show %q:\n%s", want, d)
		}
	}
	if strings.Contains(d.Stdout+d.Stderr, "private-flag-4711") {
		t.Errorf("--diff printed the 0640 file's content:\n%s", d)
	}
	t.Logf("--diff of the hand-edited config dir:\n%s", d.Stdout)
	c := cursor(t, h)
	apply(t, h, specDir)
	if got := h.MustRun(t, "cat "+dir+"/10-db.conf "+dir+"/20-features.conf"); got != edited {
		t.Errorf("apply overwrote the hand edits:\n%s", got)
	}
	if got := h.MustRun(t, "stat -c '%Y %s' "+unit+" && sha256sum "+unit); got != unitBefore {
		t.Errorf("apply rewrote the unit of the drifted container:\n%s\nwas:\n%s", got, unitBefore)
	}
	for _, j := range systemdJobs(t, h, c) {
		if strings.Contains(j, "app.service") || strings.HasPrefix(j, "Reloading") {
			t.Errorf("systemd job during the apply that keeps the drift: %s", j)
		}
	}
	if r := syslet(h, "--force", specDir); !r.OK() || !strings.Contains(r.Stdout, "reload") {
		t.Fatalf("apply --force (a reload):\n%s", r)
	}
	if got := h.MustRun(t, "cat "+dir+"/10-db.conf "+dir+"/20-features.conf"); strings.Contains(got, "by hand") || strings.Contains(got, "private-flag") {
		t.Errorf("--force kept the hand edits:\n%s", got)
	}
	if got := invocations(t, h, "app.service"); got["app.service"] != inv["app.service"] {
		t.Errorf("--force restarted app.service instead of reloading it")
	}
	if d := syslet(h, "--diff", specDir); !strings.Contains(d.Stdout, "No changes") {
		t.Errorf("after --force the host must match the specs:\n%s", d)
	}
	// The format before digests: the same dir without its manifest is
	// converged, not drift.
	h.MustRun(t, "rm "+dir+"/..data/..digests")
	if d := syslet(h, "--diff", specDir); !strings.Contains(d.Stdout, "No changes") {
		t.Errorf("a config dir without digests must be converged:\n%s", d)
	}
}

// 4. Hand-written quadlets of the kinds podman's documentation shows
// (volumes, networks, containers using them, podman secrets made by hand
// as an environment variable and as files, health checks, a build and a
// container from it, a oneshot job), started by hand, then adopted: the
// apply of the adopted specs restarts nothing and leaves the secrets as
// they were, and the next plan is empty.
func TestGuardAdopt(t *testing.T) {
	t.Parallel()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket && podman pull -q localhost:5000/busybox:latest")
	h.MustRun(t, "printf 'pw-by-hand-1' | podman secret create dbpass - && printf 'token-by-hand-2' | podman secret create apitoken -")
	secretsBefore := podmanSecrets(t, h, "dbpass", "apitoken")
	root, err := testhost.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	must(t, h.CopyIn(filepath.Join(root, "pkg/app/adopt/testdata/quadlets"), "/root/quadlets"))
	must(t, h.CopyIn(filepath.Join(root, "pkg/app/adopt/testdata/builds/app"), "/etc/containers/builds/app"))
	h.MustRun(t, "mkdir -p /etc/containers/systemd && cp /root/quadlets/* /etc/containers/systemd/ && systemctl daemon-reload")
	services := []string{"web.service", "db.service", "worker.service", "probe.service", "app.service", "edge.service", "job.service", "api.service",
		"data-volume.service", "cache-volume.service", "front-network.service", "back-network.service", "app-build.service"}
	h.MustRun(t, "systemctl start web.service db.service worker.service probe.service app.service edge.service job.service api.service")
	for _, s := range services {
		if s == "app-build.service" {
			continue // a build is a oneshot that ends once the image exists
		}
		if r := h.Eventually("systemctl is-active -q "+s, 60*time.Second); !r.OK() {
			t.Fatalf("%s not active after a start by hand:\n%s", s, h.Run("systemctl status --no-pager "+s))
		}
	}
	// The secrets reach the containers as quadlet's Secret= says.
	if got := h.MustRun(t, `podman exec api sh -c 'echo "$DB_PASSWORD"; cat /run/secrets/apitoken; echo'; podman exec db cat /run/secrets/db-password`); got != "pw-by-hand-1\ntoken-by-hand-2\npw-by-hand-1" {
		t.Fatalf("secrets inside the containers: %q", got)
	}
	before := invocations(t, h, services...)

	r := h.Run("syslet adopt /etc/containers/systemd/*.container /etc/containers/systemd/*.volume /etc/containers/systemd/*.network /etc/containers/systemd/*.build > /root/adopted.json")
	if !r.OK() || strings.Contains(r.Stderr, "note:") || !strings.Contains(r.Stderr, "2 podman secret(s) declared external (apitoken, dbpass") {
		t.Fatalf("adopt:\n%s", r)
	}
	t.Logf("adopt: %s", r.Stderr)
	if got := strings.TrimSpace(h.MustRun(t, `jq -c '[.[] | select(.type == "secret")]' /root/adopted.json`)); got != `[{"apiVersion":"v1","type":"secret","name":"apitoken","external":true},{"apiVersion":"v1","type":"secret","name":"dbpass","external":true}]` {
		t.Errorf("adopted secret specs: %s", got)
	}
	c := cursor(t, h)
	a := syslet(h, "/root/adopted.json")
	if !a.OK() || !strings.Contains(a.Stdout, "taken over") {
		t.Fatalf("applying the adopted specs:\n%s", a)
	}
	if strings.Contains(a.Stdout, "restart") && !strings.Contains(a.Stdout, "0 to change") {
		t.Errorf("the plan of the adopted specs restarts something:\n%s", a.Stdout)
	}
	after := invocations(t, h, services...)
	for _, s := range services {
		if before[s] != after[s] {
			t.Errorf("%s was restarted by the apply of the adopted specs (InvocationID %s -> %s)", s, before[s], after[s])
		}
	}
	// Only the adopted services count: talking to podman's API may start
	// podman.service through its socket.
	for _, j := range systemdJobs(t, h, c) {
		for _, s := range services {
			if strings.HasPrefix(j, "Stopping "+s) || strings.HasPrefix(j, "Starting "+s) {
				t.Errorf("systemd job on an adopted unit during the apply: %s", j)
			}
		}
	}
	if got := podmanSecrets(t, h, "dbpass", "apitoken"); got != secretsBefore {
		t.Errorf("the apply touched the podman secrets made by hand:\n%s\nwas:\n%s", got, secretsBefore)
	}
	t.Logf("apply of the adopted specs:\n%s", a.Stdout)
	if d := syslet(h, "--diff", "/root/adopted.json"); !strings.Contains(d.Stdout, "No changes") {
		t.Errorf("second plan after adopting must be empty:\n%s", d)
	}
}

// 4b. An external secret that does not exist on the host: --diff and
// apply refuse (exit 1) naming the spec and the secret, and the host is
// unchanged: no unit written, no secret created. Once the operator creates
// it, the same specs apply and the container gets its value.
func TestGuardExternalSecretMissing(t *testing.T) {
	t.Parallel()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket && mkdir -p /root/ext /etc/containers")
	h.MustRun(t, `cat > /root/ext/specs.json <<'EOF'
[
  {"apiVersion": "v1", "type": "secret", "name": "vault-pass", "external": true},
  {"apiVersion": "v1", "type": "container", "name": "vault",
   "unit": {"Container": {"Image": "localhost:5000/busybox:latest", "RunInit": "true", "Exec": "sleep infinity",
     "Secret": {"vault-pass": "type=env,target=VAULT_PASS"}}}}
]
EOF`)
	before := snapshot(t, h)
	for _, args := range [][]string{{"--diff", "/root/ext"}, {"/root/ext"}} {
		r := syslet(h, args...)
		out := r.Stdout + r.Stderr
		if r.Code != 1 || !strings.Contains(out, "secret vault-pass") || !strings.Contains(out, "/root/ext/specs.json [0]") || !strings.Contains(out, "does not exist") {
			t.Errorf("syslet %v: exit %d, want 1 naming the missing external secret and its spec:\n%s", args, r.Code, r)
		}
		t.Logf("syslet %v: exit %d\n%s", args, r.Code, out)
	}
	if got := snapshot(t, h); got != before {
		t.Errorf("/etc/containers changed although the plan was refused")
	}
	if got := h.MustRun(t, "podman secret ls --noheading --format '{{.Name}}'"); strings.TrimSpace(got) != "" {
		t.Errorf("syslet created a podman secret: %q", got)
	}
	if r := h.Run("systemctl is-active vault.service"); r.OK() {
		t.Errorf("vault.service runs after a refused apply")
	}

	h.MustRun(t, "printf 'made-later' | podman secret create vault-pass -")
	created := podmanSecrets(t, h, "vault-pass")
	apply(t, h, "/root/ext")
	if r := h.Eventually("podman exec vault sh -c 'test \"$VAULT_PASS\" = made-later'", 60*time.Second); !r.OK() {
		t.Errorf("the container does not see the external secret:\n%s", r)
	}
	if got := podmanSecrets(t, h, "vault-pass"); got != created {
		t.Errorf("the apply touched the external secret:\n%s\nwas:\n%s", got, created)
	}
	if d := syslet(h, "--diff", "/root/ext"); !strings.Contains(d.Stdout, "No changes") {
		t.Errorf("second plan must be empty:\n%s", d)
	}
}

// 5. The content of a 0600 config file appears nowhere in syslet's output
// (plan, apply), in the system journal, or in syslet's run journal.
func TestGuardPrivateContentHidden(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	apply(t, h, specDir)
	const secret = "zq9-private-token-4711"
	editSpec(t, h, "60-web.json", `if .name == "web" then .configFiles[1].content = "H:/www\n# token `+secret+`\n" else . end`)
	c := cursor(t, h)
	d := syslet(h, "--diff", specDir)
	j := syslet(h, "--diff", "--output", "json", specDir)
	a := apply(t, h, specDir)
	for name, out := range map[string]string{"--diff": d.Stdout + d.Stderr, "--output json": j.Stdout + j.Stderr, "apply": a.Stdout + a.Stderr} {
		if strings.Contains(out, secret) || strings.Contains(out, "H:/www") {
			t.Errorf("%s printed the 0600 file's content:\n%s", name, out)
		}
	}
	if !strings.Contains(d.Stdout, "(content hidden: mode 0600") {
		t.Errorf("--diff must describe the hidden change:\n%s", d.Stdout)
	}
	if got := h.MustRun(t, "grep -c "+secret+" /etc/containers/config/web/etc/httpd.conf"); strings.TrimSpace(got) != "1" {
		t.Errorf("the file itself was not written")
	}
	if out, err := h.JournalSince(c); err != nil || strings.Contains(out, secret) {
		t.Errorf("the journal holds the 0600 file's content (or could not be read: %v)", err)
	}
	// Nor syslet's own run journal, nor anything else it keeps.
	if r := h.Run("test -s /var/lib/syslet/runs.jsonl && ! grep -rl " + secret + " /var/lib/syslet /run/syslet"); !r.OK() {
		t.Errorf("syslet's run journal is missing or holds the 0600 file's content:\n%s", r)
	}
}
