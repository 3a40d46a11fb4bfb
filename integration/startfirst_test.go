//go:build integration

package integration

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/loadclient/load"
	"github.com/syslet/syslet/integration/testhost"
)

// startFirstSpec is a start-first container behind syslet's proxy on
// port 8080, running img, its marker overridden by env when set.
func startFirstSpec(img, marker string) string {
	env := ""
	if marker != "" {
		env = fmt.Sprintf(`,"Environment":"MARKER=%s"`, marker)
	}
	return fmt.Sprintf(`{"apiVersion":"v1","type":"container","name":"web","removalAllowed":true,`+
		`"proxy":{"listen":"0.0.0.0:8080","port":8080,"drain":"5s"},"probe":{"http":{"port":8080,"path":"/up"},"interval":"200ms","deadline":"10s"},"unit":{"Container":{"Image":%q%s}}}`, img, env)
}

// deployUnderLoad runs syslet on /srv/specs with spec as web.json while
// the load client sends 200 requests a second through the proxy, from 3 s
// before to 3 s after, and returns syslet's result and what the client
// saw over the whole run.
func deployUnderLoad(t *testing.T, h *testhost.Host, spec string) (testhost.Result, load.Summary) {
	t.Helper()
	l := startLoad(t, h, "http://127.0.0.1:8080/", 200, 3*time.Minute)
	time.Sleep(3 * time.Second)
	must(t, h.WriteFile("/srv/specs/web.json", []byte(spec), 0o644))
	t0 := guestNow(t, h)
	r := h.Run("syslet /srv/specs")
	t1 := guestNow(t, h)
	time.Sleep(3 * time.Second)
	rs := l.stop(t)
	during := load.Summarize(rs, t0, t1)
	whole := load.Summarize(rs, time.Time{}, time.Time{})
	t.Logf("during the deploy (%s): %s", t1.Sub(t0).Round(time.Millisecond), during)
	t.Logf("whole run: %s", whole)
	return r, whole
}

// proxied is what the proxy answers on port 8080.
func proxied(t *testing.T, h *testhost.Host) string {
	t.Helper()
	return strings.TrimSpace(h.MustRun(t, "curl -sf http://127.0.0.1:8080/"))
}

// proxyStat is `show stat` of syslet's proxy, asked over its runtime API
// (perl: the guest has no socat).
func proxyStat(t *testing.T, h *testhost.Host) string {
	t.Helper()
	return h.MustRun(t, `perl -MIO::Socket::UNIX -e '$s=IO::Socket::UNIX->new(Peer=>"/run/syslet-proxy/admin.sock") or die $!; print $s "show stat -1 4 -1\n"; print while <$s>'`)
}

// sessionsOf is the total sessions (stot) the proxy sent to server of
// backend, from `show stat`.
func sessionsOf(t *testing.T, stat, backend, server string) int {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stat), "\n")
	cols := strings.Split(strings.TrimPrefix(lines[0], "# "), ",")
	idx := -1
	for i, c := range cols {
		if c == "stot" {
			idx = i
		}
	}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) > idx && f[0] == backend && f[1] == server {
			n, err := strconv.Atoi(f[idx])
			must(t, err)
			return n
		}
	}
	t.Fatalf("no server %s/%s in the proxy's stat:\n%s", backend, server, stat)
	return 0
}

// TestStartFirst deploys a start-first container behind syslet's proxy
// and changes it under load: its image, its configuration, and a dead
// image that the run rolls back. None of them fails a request, the dead
// image's container never gets one, an upgrade of HAProxy is a reload of
// the proxy that fails none either, and removing the container leaves
// nothing of the proxy behind.
func TestStartFirst(t *testing.T) {
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket")
	v1 := serverImage(t, h, "sf:v1", map[string]string{"MARKER": "v1"})
	v2 := serverImage(t, h, "sf:v2", map[string]string{"MARKER": "v2"})
	// A dead image: it runs and answers GET /, but its probe never passes.
	dead := serverImage(t, h, "sf:dead", map[string]string{"MARKER": "dead", "UP_STATUS": "503"})
	h.MustRun(t, "mkdir -p /srv/specs")
	must(t, h.WriteFile("/srv/specs/web.json", []byte(startFirstSpec(v1, "")), 0o644))
	t.Logf("first deploy:\n%s", h.MustRun(t, "syslet /srv/specs"))
	if got := proxied(t, h); got != "v1" {
		t.Fatalf("after the first deploy the proxy answers %q, want v1", got)
	}

	deployEach(t, h, []change{
		{"image change", startFirstSpec(v2, ""), "v2"},
		{"config change", startFirstSpec(v2, "v2-config"), "v2-config"},
	})

	// The dead image: its slot never becomes ready, so the run fails and
	// rolls back, and the proxy never sends it a request.
	live, deadSlot := idleSlot(t, h)
	// The proxy counts a server's sessions since it started: the dead
	// slot's server served an earlier image before.
	before := sessionsOf(t, proxyStat(t, h), "web", deadSlot)
	r, s := deployUnderLoad(t, h, startFirstSpec(dead, ""))
	t.Logf("dead image: syslet said (exit %d):\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	if r.OK() {
		t.Errorf("dead image: syslet exited 0, want a failed run that rolled back")
	}
	if s.Failed != 0 {
		t.Errorf("dead image: %d of %d requests failed (%v), want 0", s.Failed, s.Requests, s.Kinds)
	}
	if got := proxied(t, h); got != "v2-config" {
		t.Errorf("dead image: after the rollback the proxy answers %q, want v2-config", got)
	}
	if n := sessionsOf(t, proxyStat(t, h), "web", deadSlot) - before; n != 0 {
		t.Errorf("dead image: the proxy sent %d session(s) to the dead slot %s, want 0", n, deadSlot)
	} else {
		t.Logf("dead image: the proxy sent 0 sessions to the dead slot %s", deadSlot)
	}
	// The dead container says, as it stops, what it served: its probe's
	// requests, and not one of the clients'.
	served := h.MustRun(t, "journalctl -q -o cat -u web-"+deadSlot+".service | grep 'testserver dead: stopped' | tail -1")
	t.Logf("the dead slot's container, as it stopped: %s", served)
	if !strings.Contains(served, `"/up":`) || strings.Contains(served, `"/":`) {
		t.Errorf("dead image: its container served %q, want its probe's requests and no GET /", served)
	}
	if after := h.MustRun(t, "ls /etc/containers/systemd/"); after != live {
		t.Errorf("dead image: the unit files after the rollback are\n%s\nwant those before it\n%s", after, live)
	}

	// HAProxy upgraded under the proxy (the package manager replaces the
	// binary: the running master's is then deleted): the next run reloads
	// the proxy, which runs the new binary, and fails no request.
	h.MustRun(t, "cp /usr/sbin/haproxy /tmp/haproxy.new && mv /tmp/haproxy.new /usr/sbin/haproxy")
	if exe := h.MustRun(t, "readlink /proc/$(head -1 /run/syslet-proxy/haproxy.pid)/exe"); !strings.Contains(exe, "(deleted)") {
		t.Fatalf("after the upgrade the proxy's master runs %q, want a deleted binary", exe)
	}
	r, s = deployUnderLoad(t, h, startFirstSpec(v2, "v2-config"))
	t.Logf("proxy upgrade: syslet said:\n%s", r.Stdout)
	if !r.OK() || !regexp.MustCompile(`(?m)syslet-proxy\.service.*reload`).MatchString(r.Stdout) {
		t.Errorf("proxy upgrade: want a run that reloads syslet-proxy.service, got:\n%s", r)
	}
	if s.Failed != 0 {
		t.Errorf("proxy upgrade: %d of %d requests failed (%v), want 0", s.Failed, s.Requests, s.Kinds)
	}
	if exe := h.MustRun(t, "readlink /proc/$(head -1 /run/syslet-proxy/haproxy.pid)/exe"); strings.Contains(exe, "(deleted)") {
		t.Errorf("after the reload the proxy's master still runs %q", exe)
	}
	if got := proxied(t, h); got != "v2-config" {
		t.Errorf("proxy upgrade: the proxy answers %q, want v2-config", got)
	}
	noDangling(t, h, "after the proxy upgrade", "haproxy.service", "syslet-proxy.service", "web-")

	// The last start-first container removed: the proxy goes with it.
	must(t, h.WriteFile("/srv/specs/web.json", []byte("[]"), 0o644))
	t.Logf("removal: syslet said:\n%s", h.MustRun(t, "syslet --allow-removals /srv/specs"))
	noDangling(t, h, "after the removal", "haproxy.service", "syslet-proxy", "web-")
	left := h.Run("ls /etc/containers/systemd/ | grep web-; ls -d /etc/syslet/proxy /var/lib/syslet/proxy /etc/systemd/system/syslet-proxy.service 2>/dev/null").Stdout
	t.Logf("after the removal, what is left of web's slots and the proxy: %q", left)
	if strings.TrimSpace(left) != "" {
		t.Errorf("after the removal files are left:\n%s", left)
	}
}

// change is one deploy of a start-first test: its name, the spec, and
// what the proxy answers after it.
type change struct{ name, spec, want string }

// deployEach deploys each change under load: syslet succeeds, no request
// fails, and the proxy then answers what the change serves.
func deployEach(t *testing.T, h *testhost.Host, changes []change) {
	t.Helper()
	for _, c := range changes {
		r, s := deployUnderLoad(t, h, c.spec)
		t.Logf("%s: syslet said:\n%s", c.name, r.Stdout)
		if !r.OK() {
			t.Fatalf("%s: syslet failed:\n%s", c.name, r)
		}
		if s.Failed != 0 {
			t.Errorf("%s: %d of %d requests failed (%v), want 0", c.name, s.Failed, s.Requests, s.Kinds)
		}
		if got := proxied(t, h); got != c.want {
			t.Errorf("%s: the proxy answers %q, want %q", c.name, got, c.want)
		}
	}
}

// idleSlot is the listing of the unit directory and the slot that does
// not run now: the one a change starts next.
func idleSlot(t *testing.T, h *testhost.Host) (listing, slot string) {
	t.Helper()
	listing = h.MustRun(t, "ls /etc/containers/systemd/")
	if strings.Contains(listing, "web-blue.container") {
		return listing, "green"
	}
	return listing, "blue"
}

// noDangling checks that no unit matching the patterns is failed, or
// loaded without a file (systemctl list-units --all), and logs them.
func noDangling(t *testing.T, h *testhost.Host, when string, patterns ...string) {
	t.Helper()
	out := h.MustRun(t, "systemctl list-units --all --no-legend --plain "+strings.Join(quoteAll(patterns), " ")+" '*web*' || true")
	t.Logf("%s, systemctl list-units --all: %q", when, out)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(l, "not-found") || strings.Contains(l, " failed ") {
			t.Errorf("%s: a dangling unit: %s", when, l)
		}
	}
}

func quoteAll(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = "'" + p + "*'"
	}
	return out
}
