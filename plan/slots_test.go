package plan_test

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/proxy"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// web is a start-first container; img and page vary between deploys.
func webSpec(img, page string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","type":"container","name":"web","proxy":{"listen":":80","port":8080,"drain":"5s"},"probe":{"http":{"port":8080,"path":"/up"}},`+
		`"configFiles":[{"mountPath":"/www/index.html","content":%q}],"unit":{"Container":{"Image":%q}}}`, page, img)
}

// slotHost is a host as the plan sees it, changed by applying a plan's
// actions the way the executor would (files written and removed, units
// started and stopped, the proxy's state saved by a switch).
type slotHost struct {
	obs   *plan.Observed
	ready map[string]string // the proxy's ready slot by site
}

func newSlotHost() *slotHost {
	return &slotHost{obs: &plan.Observed{Files: map[string]host.File{}, Units: map[string]host.UnitState{}, Secrets: map[string]host.Secret{},
		Images: map[string]bool{"registry.example/web:1": true, "registry.example/web:2": true}, UnitsKnown: true, StoreKnown: true,
		Proxy: plan.ProxyFacts{Installed: true}}, ready: map[string]string{}}
}

func (h *slotHost) apply(t *testing.T, p *plan.Plan) {
	t.Helper()
	if !p.Appliable() {
		t.Fatalf("refused: %+v", p.Refusals)
	}
	for _, a := range p.Actions {
		switch a.Op {
		case plan.OpWriteUnit, plan.OpWriteFile:
			h.obs.Files[a.Target] = host.File{Data: a.Data().Content, Mode: fs.FileMode(a.Data().Mode)}
			for d := path.Dir(a.Target); d != "/" && d != layout.ConfigRoot && d != layout.UnitDir; d = path.Dir(d) {
				h.obs.Files[d] = host.File{Mode: fs.ModeDir | 0o755}
			}
		case plan.OpRemoveUnit, plan.OpRemoveFile, plan.OpRemoveSlot:
			for p := range h.obs.Files {
				if p == a.Target || strings.HasPrefix(p, a.Target+"/") {
					delete(h.obs.Files, p)
				}
			}
		case plan.OpStart:
			h.obs.Units[a.Target] = host.UnitState{Name: a.Target, LoadState: "loaded", ActiveState: "active"}
		case plan.OpStop, plan.OpStopSlot:
			h.obs.Units[a.Target] = host.UnitState{Name: a.Target, LoadState: "loaded", ActiveState: "inactive"}
		case plan.OpSwitch:
			h.ready[a.Target] = a.Data().Switch.New
			h.saveState()
		}
	}
}

// saveState writes the proxy's server state as HAProxy dumps it.
func (h *slotHost) saveState() {
	var b strings.Builder
	b.WriteString("1\n# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state\n")
	for site, slot := range h.ready {
		for i, s := range proxy.Slots {
			admin := 5
			if s == slot {
				admin = 4
			}
			fmt.Fprintf(&b, "3 %s %d %s 127.0.0.1 2 %d\n", site, i+1, s, admin)
		}
	}
	h.obs.Files[layout.ProxyState] = host.File{Data: []byte(b.String()), Mode: 0o600}
}

func (h *slotHost) plan(t *testing.T, out *render.Output) *plan.Plan {
	t.Helper()
	return plan.Build(out, h.obs, plan.Options{})
}

func unitOf(p *plan.Plan, file string) *plan.UnitChange {
	for i := range p.Units {
		if p.Units[i].FileName == file {
			return &p.Units[i]
		}
	}
	return nil
}

// TestStartFirstDeploys: a first deploy runs the blue slot and readies
// it; a change goes into the green slot, switched to once ready, and
// blue is drained, stopped and removed after it, all in step 9; the live
// slot's unit file is never written; every apply converges.
func TestStartFirstDeploys(t *testing.T) {
	h := newSlotHost()
	v1 := renderStream(t, webSpec("registry.example/web:1", "one\n"))

	first := h.plan(t, v1)
	got := actions(first)
	want := []string{
		"write-file " + layout.ProxyConfig,
		"write-file /etc/containers/config/web-blue/www/index.html",
		"write-unit " + layout.ProxyUnit,
		"write-unit /etc/containers/systemd/web-blue.container",
		"daemon-reload systemd",
		"start " + layout.ProxyService,
		"start web-blue.service",
		"await-ready web-blue.service",
		"switch web",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("first deploy:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if u := unitOf(first, "web-blue.container"); u == nil || u.Effect != plan.EffectCreate || u.Replacement != nil {
		// A first deploy replaces nothing.
		t.Errorf("web-blue: %+v", u)
	}
	if unitOf(first, "web-green.container") != nil {
		t.Error("the green slot is planned on a first deploy")
	}
	h.apply(t, first)
	if p := h.plan(t, v1); !p.Empty() {
		t.Fatalf("after the first deploy: %v", actions(p))
	}

	// An image change: into green, start-first.
	v2 := renderStream(t, webSpec("registry.example/web:2", "one\n"))
	change := h.plan(t, v2)
	got = actions(change)
	want = []string{
		"write-file /etc/containers/config/web-green/www/index.html",
		"write-unit /etc/containers/systemd/web-green.container",
		"daemon-reload systemd",
		"start web-green.service",
		"await-ready web-green.service",
		"switch web",
		"drain web-blue.service",
		"stop-slot web-blue.service",
		"remove-slot /etc/containers/config/web-blue",
		"remove-slot /etc/containers/systemd/web-blue.container",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("image change:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	green, blue := unitOf(change, "web-green.container"), unitOf(change, "web-blue.container")
	if green == nil || green.Effect != plan.EffectReplace || !strings.Contains(strings.Join(green.Reasons, "; "), "Image") ||
		green.Replacement == nil || green.Replacement.Strategy != plan.StrategyStartFirst {
		t.Errorf("web-green: %+v", green)
	}
	if blue == nil || blue.Effect != plan.EffectRetire || blue.After != "removed" {
		t.Errorf("web-blue: %+v", blue)
	}
	for _, a := range change.Actions {
		if a.Op == plan.OpSwitch && (a.Data().Switch.Old != proxy.Blue || a.Data().Switch.New != proxy.Green) {
			t.Errorf("switch %+v", a.Data().Switch)
		}
	}
	h.apply(t, change)
	if p := h.plan(t, v2); !p.Empty() {
		t.Fatalf("after the image change: %v", actions(p))
	}

	// A config file change: back into blue.
	v3 := renderStream(t, webSpec("registry.example/web:2", "three\n"))
	again := h.plan(t, v3)
	if u := unitOf(again, "web-blue.container"); u == nil || u.Effect != plan.EffectReplace {
		t.Fatalf("config change: %+v\n%v", u, actions(again))
	}
	h.apply(t, again)
	if p := h.plan(t, v3); !p.Empty() {
		t.Fatalf("after the config change: %v", actions(p))
	}
	if _, ok := h.obs.Files["/etc/containers/systemd/web-green.container"]; ok {
		t.Error("the retired green slot's unit file is left")
	}

	// The last start-first container removed: its slot stops in step 2,
	// the proxy with it, and both are pruned.
	none := renderStream(t, `{"apiVersion":"v1","type":"volume","name":"v","unit":{}}`)
	gone := h.plan(t, none)
	got = actions(gone)
	for _, w := range []string{"stop " + layout.ProxyService, "stop web-blue.service", "remove-unit " + layout.ProxyUnit,
		"remove-file " + layout.ProxyConfig, "remove-file " + layout.ProxyState, "remove-unit /etc/containers/systemd/web-blue.container"} {
		if !slices.Contains(got, w) {
			t.Errorf("removal lacks %q:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

// TestStartFirstResumes: a switch an earlier run did not finish is
// finished from what the host shows, whatever point the kill hit.
func TestStartFirstResumes(t *testing.T) {
	h := newSlotHost()
	v1 := renderStream(t, webSpec("registry.example/web:1", "one\n"))
	h.apply(t, h.plan(t, v1))
	v2 := renderStream(t, webSpec("registry.example/web:2", "one\n"))
	p := h.plan(t, v2)
	// Killed once green was started and switched to, before blue was
	// drained: the next plan drains and removes blue.
	var upTo []plan.Action
	for _, a := range p.Actions {
		upTo = append(upTo, a)
		if a.Op == plan.OpSwitch {
			break
		}
	}
	h.apply(t, &plan.Plan{Actions: upTo})
	next := h.plan(t, v2)
	want := []string{"await-ready web-green.service", "switch web", "drain web-blue.service", "stop-slot web-blue.service",
		"remove-slot /etc/containers/config/web-blue", "remove-slot /etc/containers/systemd/web-blue.container"}
	if got := actions(next); !slices.Equal(got, want) {
		t.Fatalf("after a kill past the switch:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	h.apply(t, next)
	if p := h.plan(t, v2); !p.Empty() {
		t.Fatalf("not converged: %v", actions(p))
	}
}

func TestStartFirstNeedsHAProxyOnlyOnAHost(t *testing.T) {
	out := renderStream(t, webSpec("registry.example/web:1", "one\n"))
	h := newSlotHost()
	h.obs.Proxy.Installed = false
	p := h.plan(t, out)
	if len(p.Refusals) != 1 || !strings.Contains(p.Refusals[0].Message, "apt install haproxy") {
		t.Errorf("on a host without HAProxy: refusals %+v", p.Refusals)
	}
	// A diff against a directory cannot know what the host installed.
	h.obs.UnitsKnown = false
	if p := h.plan(t, out); len(p.Refusals) != 0 {
		t.Errorf("without a running system: refusals %+v", p.Refusals)
	}
}
