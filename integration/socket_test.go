//go:build integration

package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/loadclient/load"
)

// A container whose socket systemd holds is replaced without refusing a
// connection: an image change, a config change and the automatic
// rollback of a dead image, each deployed by syslet while a load client in
// the host sends requests, each with no failed request and the same
// listening socket (its inode) before and after. A plain container
// beside it is still stopped and started.
func TestSocketHeldDeploysDropNothing(t *testing.T) {
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket && mkdir -p /srv/specs")
	v1 := serverImage(t, h, "srv:v1", map[string]string{"MARKER": "v1"})
	v2 := serverImage(t, h, "srv:v2", map[string]string{"MARKER": "v2"})
	dead := serverImage(t, h, "srv:dead", map[string]string{"DIE": "1"})
	write := func(web, conf, plain string) {
		t.Helper()
		ws, _ := json.Marshal(map[string]any{"apiVersion": "v1", "type": "container", "name": "web",
			"socket":      map[string]any{"Socket": map[string]any{"ListenStream": "0.0.0.0:8080"}},
			"configFiles": []map[string]string{{"mountPath": "/etc/web.conf", "content": conf}},
			"unit":        map[string]any{"Container": map[string]any{"Image": web}}})
		ps, _ := json.Marshal(map[string]any{"apiVersion": "v1", "type": "container", "name": "plain",
			"unit": map[string]any{"Container": map[string]any{"Image": plain, "PublishPort": "127.0.0.1:8081:8080"}}})
		must(t, h.WriteFile("/srv/specs/stack.json", []byte(string(ws)+"\n"+string(ps)+"\n"), 0o644))
	}
	inode := func() string {
		return h.MustRun(t, "ss -Hltne 'sport = :8080' | grep -o 'ino:[0-9]*'")
	}
	serves := func(want string) {
		t.Helper()
		if got := strings.TrimSpace(h.MustRun(t, "curl -sS -m 10 http://127.0.0.1:8080/")); got != want {
			t.Errorf("web serves %q, want %q", got, want)
		}
	}

	write(v1, "a=1\n", v1)
	if res := h.Run("syslet /srv/specs"); !res.OK() {
		t.Fatalf("first deploy: %s%s", res.Stdout, res.Stderr)
	}
	serves("v1")
	first := inode()
	if first == "" {
		t.Fatal("nothing listens on :8080")
	}

	// deploy runs one change under load and checks what the acceptance
	// asks: no failed request, the socket's inode unchanged.
	deploy := func(name string, code int, check func(out string)) {
		t.Helper()
		l := startLoad(t, h, "http://127.0.0.1:8080/", 700, 5*time.Minute)
		time.Sleep(2 * time.Second)
		t0 := guestNow(t, h)
		res := h.Run("syslet --soak 3s /srv/specs")
		t1 := guestNow(t, h)
		time.Sleep(2 * time.Second)
		rs := l.stop(t)
		s := load.Summarize(rs, t0, t1)
		t.Logf("%s: %s; socket %s → %s", name, s, first, inode())
		if res.Code != code {
			t.Fatalf("%s: syslet exited %d, want %d:\n%s%s", name, res.Code, code, res.Stdout, res.Stderr)
		}
		check(res.Stdout)
		if s.Failed != 0 {
			t.Errorf("%s: %d request(s) failed (%v), first at %s", name, s.Failed, s.Kinds, s.FirstFail.Format(time.StampMicro))
			t.Logf("journal: %s", h.Run("journalctl -u web.service -u web.socket -o short-precise --no-pager -n 60").Stdout)
		}
		if s.Requests < 100 {
			t.Errorf("%s: only %d requests during the deploy", name, s.Requests)
		}
		if now := inode(); now != first {
			t.Errorf("%s: the socket's inode changed: %s → %s", name, first, now)
		}
	}
	restarted := func(out string) {
		if !strings.Contains(out, "web.service: restarted behind its socket web.socket") {
			t.Errorf("the run does not say web was restarted behind its socket:\n%s", out)
		}
	}

	// The plan says how each is replaced, and why.
	write(v2, "a=1\n", v2)
	diff := h.MustRun(t, "syslet --diff /srv/specs")
	t.Logf("--diff:\n%s", diff)
	for _, want := range []string{"replaced: socket held (web.socket)", "stop-start: no socket, no probe", "restart web.service (its socket stays open)"} {
		if !strings.Contains(diff, want) {
			t.Errorf("--diff does not say %q:\n%s", want, diff)
		}
	}
	deploy("image change", 0, func(out string) {
		t.Logf("the run:\n%s", out)
		restarted(out)
		if !strings.Contains(out, "plain.service: stopped and started again") {
			t.Errorf("the plain container was not stopped and started:\n%s", out)
		}
	})
	serves("v2")

	write(v2, "a=2\n", v2)
	deploy("config change", 0, restarted)
	serves("v2")

	write(dead, "a=2\n", v2)
	deploy("rollback of a dead image", 4, func(out string) {
		if !strings.Contains(out, "ROLLED BACK") {
			t.Errorf("the dead image was not rolled back:\n%s", out)
		}
	})
	serves("v2")
	if st := strings.TrimSpace(h.MustRun(t, "systemctl is-active web.socket web.service || true")); st != "active\nactive" {
		t.Errorf("after the rollback web.socket, web.service are %q", st)
	}

	// Staged: systemd-analyze verify reads the socket unit beside the
	// service, and a value systemd refuses stops the run before any step.
	bad, _ := json.Marshal(map[string]any{"apiVersion": "v1", "type": "container", "name": "web",
		"socket": map[string]any{"Socket": map[string]any{"ListenStream": "0.0.0.0:8080", "Backlog": "lots"}},
		"unit":   map[string]any{"Container": map[string]any{"Image": v2}}})
	must(t, h.WriteFile("/srv/specs/stack.json", bad, 0o644))
	if res := h.Run("syslet /srv/specs"); res.OK() || !strings.Contains(res.Stdout+res.Stderr, "web.socket") {
		t.Errorf("a socket systemd refuses was not stopped by staging:\n%s%s", res.Stdout, res.Stderr)
	} else {
		t.Logf("staging refused the socket:\n%s", res.Stdout+res.Stderr)
	}
	if now := inode(); now != first {
		t.Errorf("a refused run changed the socket: %s → %s", first, now)
	}

	// Removed from the specs, the socket goes with its container.
	must(t, h.WriteFile("/srv/specs/stack.json", []byte("[]"), 0o644))
	h.MustRun(t, "syslet --allow-removals /srv/specs")
	if r := h.Run("test -e /etc/systemd/system/web.socket || systemctl is-active -q web.socket"); r.OK() {
		t.Errorf("web.socket is left behind: %s", h.Run("systemctl status web.socket --no-pager").Stdout)
	}
	if r := h.Run("ss -Hltn 'sport = :8080' | grep -q ."); r.OK() {
		t.Errorf("something still listens on :8080")
	}
}
