package plan_test

import (
	"os"
	"strings"
	"testing"

	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// replacementOf is the replacement the plan decided for a unit file, nil
// when it decided none.
func replacementOf(p *plan.Plan, file string) *plan.Replacement {
	for _, u := range p.Units {
		if u.FileName == file {
			return u.Replacement
		}
	}
	return nil
}

func TestStopStartIsNamedWithItsReason(t *testing.T) {
	h := install(t, renderStream(t, base))
	out := renderStream(t, edit(t, "registry.example/web:1", "registry.example/web:2"))
	p := plan.Build(out, h.obs, plan.Options{})
	r := replacementOf(p, "web.container")
	if r == nil || r.Strategy != plan.StrategyStopStart || r.String() != "stop-start: no socket, no probe" {
		t.Fatalf("web's replacement = %+v, want stop-start for want of a socket or a probe", r)
	}
	// Only a container the plan replaces is given one: api, unchanged,
	// and a stopped container are not.
	for _, f := range []string{"api.container", "idle.container", "job.container"} {
		if r := replacementOf(p, f); r != nil {
			t.Errorf("%s is not replaced, yet has a replacement %+v", f, r)
		}
	}
}

// sockets is a container whose socket systemd holds, beside a plain one.
const sockets = `
{"apiVersion":"v1","type":"container","name":"web","socket":{"Socket":{"ListenStream":"0.0.0.0:8080"}},"unit":{"Container":{"Image":"registry.example/web:1"}}}
{"apiVersion":"v1","type":"container","name":"api","unit":{"Container":{"Image":"registry.example/api:1","PublishPort":"8081:8080"}}}
`

func planOf(t *testing.T, installed, desired string) *plan.Plan {
	t.Helper()
	h := install(t, renderStream(t, installed))
	return plan.Build(renderStream(t, desired), h.obs, plan.Options{})
}

// An image change of a container its socket holds is one restart in step
// 9, after the daemon-reload, with no stop in step 2; the plain container
// beside it is stopped and started as before.
func TestSocketHeldContainerIsRestartedInStepNine(t *testing.T) {
	changed := strings.ReplaceAll(sockets, ":1", ":2")
	p := planOf(t, sockets, changed)
	got := actions(p)
	has(t, got, "restart web.service", "stop api.service", "start api.service", "daemon-reload systemd")
	hasNot(t, got, "stop web.service", "start web.service", "stop web.socket")
	for _, a := range p.Actions {
		if a.Op == plan.OpRestart && a.Step != plan.StepStart {
			t.Errorf("the restart is in step %d, want %d", a.Step, plan.StepStart)
		}
	}
	if r := replacementOf(p, "web.container"); r == nil || r.Strategy != plan.StrategySocketHeld || r.String() != "replaced: socket held (web.socket)" {
		t.Errorf("web's replacement = %+v, want socket held", r)
	}
	if r := replacementOf(p, "api.container"); r == nil || r.Strategy != plan.StrategyStopStart {
		t.Errorf("api's replacement = %+v, want stop-start", r)
	}
}

// A change of the socket itself closes it: the socket and its container
// are stopped in step 2 and started again in step 9, and the plan says
// why.
func TestSocketChangeClosesItWithItsContainer(t *testing.T) {
	changed := strings.Replace(sockets, `"ListenStream":"0.0.0.0:8080"`, `"ListenStream":"0.0.0.0:8080","Backlog":"1024"`, 1)
	p := planOf(t, sockets, changed)
	has(t, actions(p), "stop web.socket", "stop web.service", "start web.service")
	hasNot(t, actions(p), "restart web.service")
	r := replacementOf(p, "web.container")
	if r == nil || r.Strategy != plan.StrategyStopStart || !r.Closes() || !strings.Contains(r.Reason, "web.socket changes") {
		t.Errorf("web's replacement = %+v, want a stop-start that closes its socket", r)
	}
}

// A socket the specs no longer ask for is stopped and its file removed;
// the container, no longer socket-activated, is stopped and started.
func TestDroppedSocketIsStoppedAndRemoved(t *testing.T) {
	plain := strings.Replace(sockets, `"socket":{"Socket":{"ListenStream":"0.0.0.0:8080"}},`, "", 1)
	p := planOf(t, sockets, plain)
	has(t, actions(p), "stop web.socket", "remove-file /etc/systemd/system/web.socket", "stop web.service", "start web.service")
	if r := replacementOf(p, "web.container"); r == nil || r.Strategy != plan.StrategyStopStart || r.Closes() {
		t.Errorf("web's replacement = %+v, want a plain stop-start", r)
	}
	// Unchanged, the socket is left alone.
	p = planOf(t, sockets, sockets)
	if got := actions(p); len(got) != 0 {
		t.Errorf("a converged host plans %q", got)
	}
}

// The socket unit is a plain systemd unit beside the quadlet, marked as
// syslet's, and the container wants it and starts after it.
func TestSocketIsRenderedBesideItsContainer(t *testing.T) {
	out := renderStream(t, sockets)
	var web *render.Unit
	for _, u := range out.Units {
		if u.FileName == "web.container" {
			web = u
		}
	}
	if web == nil || web.Socket == nil {
		t.Fatal("web has no socket")
	}
	want := render.SocketHeader + `web.container (its [X-Syslet] marker records this file's digest).
[Unit]
Description=socket of the web container

[Socket]
ListenStream=0.0.0.0:8080
TriggerLimitIntervalSec=0

[Install]
WantedBy=sockets.target

[X-Syslet]
Owner=web.container
`
	if got := string(web.Socket.Content); got != want || web.Socket.Path != "/etc/systemd/system/web.socket" {
		t.Errorf("socket %s:\n%s\nwant:\n%s", web.Socket.Path, got, want)
	}
	unitText := string(web.Bytes())
	for _, l := range []string{"Wants=web.socket", "After=web.socket", "StartLimitIntervalSec=0", "FileDigest=sha256:"} {
		if !strings.Contains(unitText, l) {
			t.Errorf("web.container lacks %s:\n%s", l, unitText)
		}
	}
}

// A socket unit edited by hand is drift like any file syslet wrote: held
// unless forced, and --force puts the specs' socket back.
func TestHandEditedSocketIsDrift(t *testing.T) {
	out := renderStream(t, sockets)
	h := install(t, out)
	p := "/etc/systemd/system/web.socket"
	cur, err := os.ReadFile(h.root.Path(p))
	must(t, err)
	must(t, os.WriteFile(h.root.Path(p), []byte(strings.Replace(string(cur), "ListenStream=0.0.0.0:8080", "ListenStream=0.0.0.0:9999", 1)), 0o644))
	h.reread(t)
	pl := plan.Build(out, h.obs, plan.Options{})
	if effect(pl, "web.container") != plan.EffectDrift || len(pl.Actions) != 0 {
		t.Fatalf("a hand-edited socket: effect %s, actions %q; want drift and nothing done", effect(pl, "web.container"), actions(pl))
	}
	forced := plan.Build(out, h.obs, plan.Options{Force: true})
	has(t, actions(forced), "write-file "+p, "stop web.socket", "stop web.service", "start web.service")
}
