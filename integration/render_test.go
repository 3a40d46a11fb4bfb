//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

// rendered is what `syslet render` wrote, as found in the guest.
type rendered struct {
	units    []string          // file names under etc/containers/systemd
	services map[string]string // unit file name -> systemd service name
	ports    []string          // "IP:PORT" of every PublishPort=, as reachable from inside the guest
}

// serviceName maps a quadlet file name to the service quadlet generates for it.
func serviceName(unit string) string {
	ext := filepath.Ext(unit)
	base := strings.TrimSuffix(unit, ext)
	switch ext {
	case ".container":
		return base + ".service"
	case ".volume", ".network", ".build", ".image", ".pod", ".kube":
		return base + "-" + ext[1:] + ".service"
	}
	return ""
}

// renderAndInstall copies the spec directory specs into the guest, runs `syslet render` there, checks
// the result with the guest's own quadlet generator, installs it under /etc/containers and
// daemon-reloads.
func renderAndInstall(t *testing.T, h *testhost.Host, specs string) rendered {
	t.Helper()
	if err := h.CopyIn(specs, "/root/specs"); err != nil {
		t.Fatal(err)
	}
	r := h.Run("syslet render /root/specs --out /tmp/out")
	if !r.OK() {
		t.Fatalf("syslet render failed:\n%s", r)
	}
	units := strings.Fields(h.MustRun(t, "cd /tmp/out/etc/containers/systemd && ls -1"))
	if len(units) == 0 {
		t.Fatalf("syslet render wrote no units; tree:\n%s", h.Run("find /tmp/out").Stdout)
	}
	t.Logf("rendered: %s\n%s", strings.Join(units, " "), h.Run("cd /tmp/out && find . -type f | sort").Stdout)

	// The guest's quadlet (podman 5.4.2) is the judge of what syslet writes.
	dry := h.Run("QUADLET_UNIT_DIRS=/tmp/out/etc/containers/systemd /usr/libexec/podman/quadlet -dryrun -no-kmsg-log")
	if !dry.OK() || strings.Contains(dry.Stderr, "unsupported") || strings.Contains(dry.Stderr, "rror") {
		t.Fatalf("the guest's quadlet rejects the rendered units:\n%s", dry)
	}

	h.MustRun(t, "cp -a /tmp/out/etc/containers/. /etc/containers/ && systemctl daemon-reload")
	res := rendered{units: units, services: map[string]string{}}
	for _, u := range units {
		svc := serviceName(u)
		if svc == "" {
			continue
		}
		res.services[u] = svc
		if got := strings.TrimSpace(h.Run("systemctl show -P LoadState " + svc).Stdout); got != "loaded" {
			t.Errorf("%s from %s: LoadState=%q after daemon-reload\n%s", svc, u, got, h.Run("journalctl -b -q --no-pager -t quadlet-generator").Stdout)
		}
		if strings.HasSuffix(u, ".container") {
			body, err := h.ReadFile("/etc/containers/systemd/" + u)
			if err != nil {
				t.Fatal(err)
			}
			res.ports = append(res.ports, publishedPorts(string(body))...)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return res
}

// publishedPorts returns "IP:PORT" for every PublishPort= of a .container file.
func publishedPorts(unit string) []string {
	var out []string
	for _, line := range strings.Split(unit, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "PublishPort=")
		if !ok {
			continue
		}
		v = strings.SplitN(v, "/", 2)[0] // drop /tcp
		parts := strings.Split(v, ":")
		switch len(parts) {
		case 3: // ip:host:container
			ip := parts[0]
			if ip == "" || ip == "0.0.0.0" {
				ip = "127.0.0.1"
			}
			if parts[1] != "" {
				out = append(out, ip+":"+parts[1])
			}
		case 2: // host:container
			out = append(out, "127.0.0.1:"+parts[0])
		}
	}
	return out
}

// specMeta is the part of a spec these tests read: which containers are meant to run.
type specMeta struct {
	Type         string `json:"type"`
	Name         string `json:"name"`
	DesiredState string `json:"desiredState"`
}

// readSpecs reads every spec in a directory of *.json files (each an object or an array of them).
func readSpecs(t *testing.T, dir string) []specMeta {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no specs in %s (%v)", dir, err)
	}
	var all []specMeta
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(strings.NewReader(string(data)))
		for dec.More() { // a file may hold several JSON values (one per line)
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var list []specMeta
			if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
				err = json.Unmarshal(raw, &list)
			} else {
				var one specMeta
				err = json.Unmarshal(raw, &one)
				list = []specMeta{one}
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			all = append(all, list...)
		}
	}
	return all
}

// startAndCheck starts the services of every container meant to run (and so their volumes, networks
// and builds), then checks that each reached its state: running services active, oneshot ones
// finished with success, every volume/network/build service done.
func startAndCheck(t *testing.T, h *testhost.Host, r rendered, specs []specMeta) {
	t.Helper()
	state := map[string]string{} // container name -> desired state
	for _, s := range specs {
		if s.Type == "container" {
			state[s.Name] = s.DesiredState
		}
	}
	var start []string
	for u, svc := range r.services {
		name := strings.TrimSuffix(u, filepath.Ext(u))
		if strings.HasSuffix(u, ".container") && state[name] == "stopped" {
			continue
		}
		start = append(start, svc)
	}
	sort.Strings(start)
	cur, err := h.JournalCursor()
	if err != nil {
		t.Fatal(err)
	}
	// Pull registry images first, as syslet's step 1 does: podman 5.4 can
	// lose a layer when a .build and a container pull the same base image
	// at the same moment ("layer not known" from the build).
	h.MustRun(t, `grep -h '^Image=' /etc/containers/systemd/*.container | cut -d= -f2- | grep -v '\.build$' | sort -u | xargs -r -n1 podman pull -q`)
	t0 := time.Now()
	res := h.Run("timeout 300 systemctl start " + testhost.QuoteArgs(start...))
	t.Logf("systemctl start %s: exit %d in %s", strings.Join(start, " "), res.Code, time.Since(t0).Round(time.Millisecond))

	units := make([]string, 0, len(r.services))
	for u := range r.services {
		units = append(units, u)
	}
	sort.Strings(units)
	for _, u := range units {
		svc := r.services[u]
		name := strings.TrimSuffix(u, filepath.Ext(u))
		show := func() map[string]string {
			out := h.Run("systemctl show -p ActiveState,SubState,Result,Type,ExecMainStatus " + svc).Stdout
			m := map[string]string{}
			for _, l := range strings.Split(out, "\n") {
				if k, v, ok := strings.Cut(l, "="); ok {
					m[k] = v
				}
			}
			return m
		}
		p := show()
		switch {
		case !strings.HasSuffix(u, ".container"):
			// volume, network, build: oneshot services; quadlet gives volumes and networks
			// RemainAfterExit=yes (active), builds not (inactive once done)
			if p["Result"] != "success" || p["ExecMainStatus"] != "0" ||
				(p["ActiveState"] != "active" && !strings.HasSuffix(u, ".build")) {
				t.Errorf("%s (%s): %v, want a successful run", svc, u, p)
			}
		case state[name] == "stopped":
			if p["ActiveState"] == "active" {
				t.Errorf("%s: desiredState stopped but %v", svc, p)
			}
		case state[name] == "oneshot" || p["Type"] == "oneshot":
			if p["Result"] != "success" || p["ExecMainStatus"] != "0" || p["ActiveState"] == "failed" {
				t.Errorf("oneshot %s: %v, want a successful run", svc, p)
			}
		default:
			// a running service: active now, and still active a moment later (not crash-looping)
			if p["ActiveState"] != "active" || p["SubState"] != "running" {
				t.Errorf("%s: %v, want active/running", svc, p)
				continue
			}
			time.Sleep(time.Second)
			if p = show(); p["ActiveState"] != "active" {
				t.Errorf("%s: no longer active a second after start: %v", svc, p)
			}
		}
	}
	if t.Failed() || !res.OK() {
		log, _ := h.JournalSince(cur, "--no-hostname")
		t.Fatalf("services did not reach their states (start: %s)\njournal since start:\n%s", res, tail(log, 120))
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// checkPorts checks that every published port answers HTTP inside the guest and returns the bodies.
func checkPorts(t *testing.T, h *testhost.Host, ports []string) map[string]string {
	t.Helper()
	bodies := map[string]string{}
	for _, p := range ports {
		r := h.Eventually("curl -sS -m 5 -o /tmp/body -w '%{http_code}' http://"+p+"/ | grep -v '^000$' && cat /tmp/body", 30*time.Second)
		if !r.OK() {
			t.Errorf("published port %s does not answer:\n%s", p, r)
			continue
		}
		code, body, _ := strings.Cut(r.Stdout, "\n")
		bodies[p] = body
		t.Logf("%s answers HTTP %s: %q", p, code, tail(body, 3))
	}
	return bodies
}

// TestRenderExamples renders the repository's examples/ with syslet inside a real host, installs the
// result, starts every container and checks them.
func TestRenderExamples(t *testing.T) {
	t.Parallel()
	root, err := testhost.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	examples := filepath.Join(root, "examples")
	specs := readSpecs(t, examples)

	h := startWithSyslet(t)
	r := renderAndInstall(t, h, examples)
	for _, s := range specs { // every spec that becomes a quadlet file is there
		ext := map[string]string{"container": ".container", "volume": ".volume", "network": ".network", "build": ".build"}[s.Type]
		if ext != "" && r.services[s.Name+ext] == "" {
			t.Errorf("spec %s %q: no %s%s rendered (got %v)", s.Type, s.Name, s.Name, ext, r.units)
		}
	}
	createExampleSecrets(t, h) // web uses the example secret; render does not store secrets
	startAndCheck(t, h, r, specs)
	if len(r.ports) == 0 {
		t.Fatal("the examples publish no port; the test wants at least one")
	}
	checkPorts(t, h, r.ports)
}

// TestRenderInline renders a small inline spec that uses an image made for the test, and checks that the
// container serves that image's content on its published port.
func TestRenderInline(t *testing.T) {
	t.Parallel()
	h := startWithSyslet(t)
	ref, err := h.MakeImage("hello:v1", "hello-from-v1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spec := fmt.Sprintf(`[
  {"apiVersion": "v1", "type": "volume", "name": "hello-data", "unit": {}},
  {"apiVersion": "v1", "type": "container", "name": "hello",
   "unit": {"Container": {"Image": %q, "RunInit": "true", "Exec": "httpd -f -p 8081 -h /www",
            "PublishPort": "127.0.0.1:8081:8081", "Volume": "hello-data.volume:/data"}}}
]`, ref)
	if err := os.WriteFile(filepath.Join(dir, "hello.json"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	r := renderAndInstall(t, h, dir)
	startAndCheck(t, h, r, readSpecs(t, dir))
	bodies := checkPorts(t, h, []string{"127.0.0.1:8081"})
	if got := strings.TrimSpace(bodies["127.0.0.1:8081"]); got != "hello-from-v1" {
		t.Errorf("hello serves %q, want the marker of %s", got, ref)
	}
	if out := h.MustRun(t, "podman volume inspect --format '{{.Name}}' $(podman inspect --format '{{range .Mounts}}{{.Name}}{{end}}' hello)"); strings.TrimSpace(out) == "" {
		t.Errorf("hello has no named volume mounted")
	}
}

// TestRenderRejectsInvalidSpec: `syslet render` exits 2 on an invalid spec and writes nothing.
func TestRenderRejectsInvalidSpec(t *testing.T) {
	t.Parallel()
	h := startWithSyslet(t)
	if err := h.WriteFile("/root/bad/bad.json", []byte(`{"apiVersion": "v1", "type": "no-such-type", "name": "x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := h.Run("syslet render /root/bad --out /tmp/badout")
	if r.Err != nil || r.Code != 2 {
		t.Fatalf("syslet render of an invalid spec: want exit 2\n%s", r)
	}
	if out := h.Run("find /tmp/badout -type f 2>/dev/null").Stdout; out != "" {
		t.Errorf("render of an invalid spec wrote files:\n%s", out)
	}
}

// TestQuadletRejectsBrokenUnit: the guest's real quadlet generator rejects a unit with an unknown key,
// naming the key, and generates no service for it; so the checks above would catch a renderer that
// writes one.
func TestQuadletRejectsBrokenUnit(t *testing.T) {
	t.Parallel()
	h := testhost.Start(t)
	unit := "[Container]\nImage=localhost:5000/busybox:latest\nBogus=1\n"
	if err := h.WriteFile("/root/broken/broken.container", []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	r := h.Run("QUADLET_UNIT_DIRS=/root/broken /usr/libexec/podman/quadlet -dryrun -no-kmsg-log")
	if r.Err != nil || r.Code == 0 {
		t.Fatalf("quadlet accepted a unit with an unknown key:\n%s", r)
	}
	if !strings.Contains(r.Stderr, "unsupported key 'Bogus'") {
		t.Errorf("quadlet's error does not name the key:\n%s", r)
	}
	// installed for real: the generator skips it, so there is no broken.service to start
	h.MustRun(t, "cp /root/broken/broken.container /etc/containers/systemd/ && systemctl daemon-reload")
	if got := strings.TrimSpace(h.Run("systemctl show -P LoadState broken.service").Stdout); got != "not-found" {
		t.Errorf("broken.service LoadState=%q, want not-found", got)
	}
	if r := h.Run("systemctl start broken.service"); r.Code == 0 {
		t.Errorf("broken.service started:\n%s", r)
	}
}
