package plan_test

import (
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/plan"
)

// interrupted returns the unfinished part of planning `to` against `from`
// when the run stopped after the given step: every action up to it landed.
func interrupted(t *testing.T, h *hostState, p *plan.Plan, after plan.Step) *plan.Unfinished {
	t.Helper()
	u := &plan.Unfinished{Run: "run-1", Started: time.Unix(1000, 0)}
	for _, a := range p.Actions {
		if a.Step > after {
			u.Actions = append(u.Actions, a)
		}
	}
	return u
}

func TestCarryForward(t *testing.T) {
	from := renderStream(t, base)
	h := install(t, from)
	// The upgrade: web's unit changes (restart), its config dir changes
	// (reload on its own would do), a new oneshot appears.
	upgrade := edit(t, `"Image":"registry.example/web:1"`, `"Image":"registry.example/web:2"`) +
		`{"apiVersion":"v1","type":"container","name":"seed","desiredState":"oneshot","unit":{"Container":{"Image":"registry.example/job:1"}}}` + "\n"
	to := renderStream(t, upgrade)
	first := plan.Build(to, h.obs, plan.Options{})

	// Kill after step 4: units written, nothing reloaded or started. The
	// files now match, web is stopped, seed never ran.
	u := interrupted(t, h, first, plan.StepWriteUnits)
	h2 := install(t, to)
	h2.obs.Units["web.service"] = host.UnitState{Name: "web.service", LoadState: "loaded", ActiveState: "inactive"}
	h2.obs.Units["seed.service"] = host.UnitState{Name: "seed.service", LoadState: "not-found", ActiveState: "inactive"}
	p := plan.Build(to, h2.obs, plan.Options{})
	if countOp(p, plan.OpDaemonReload) != 0 {
		t.Fatalf("the files alone show no daemon-reload, yet got %q (the test's premise is wrong)", actions(p))
	}
	r := plan.CarryForward(p, to, h2.obs, u, nil)
	if r == nil || r.Carried == 0 || r.Run != "run-1" {
		t.Fatalf("resume = %+v, want carried actions of run-1", r)
	}
	got := actions(p)
	for _, want := range []string{"daemon-reload systemd", "start web.service", "start seed.service"} {
		if countOf(got, want) != 1 {
			t.Errorf("want exactly one %q after the resume, got %q", want, got)
		}
	}
	// daemon-reload must come before the starts.
	if idx(got, "daemon-reload systemd") > idx(got, "start seed.service") {
		t.Errorf("daemon-reload after the start: %q", got)
	}

	// The oneshot ran after the interrupted run began (systemd finished the
	// job on its own): it is not run again.
	p = plan.Build(to, h2.obs, plan.Options{})
	plan.CarryForward(p, to, h2.obs, u, map[string]time.Time{"seed.service": time.Unix(1001, 0)})
	if countOf(actions(p), "start seed.service") != 0 {
		t.Errorf("a oneshot that already ran for the earlier run must not run again: %q", actions(p))
	}
	// It ran before the interrupted run (an older run): run it now.
	p = plan.Build(to, h2.obs, plan.Options{})
	plan.CarryForward(p, to, h2.obs, u, map[string]time.Time{"seed.service": time.Unix(999, 0)})
	if countOf(actions(p), "start seed.service") != 1 {
		t.Errorf("a oneshot that did not run for the earlier run must run: %q", actions(p))
	}
}

// Killed in step 9 while a start is still running (web activating: its
// ExecStartPre has not ended): the next run starts it again, so that its
// job joins systemd's and the health gate judges it; one already up is
// not started again.
func TestCarryForwardStartOfAUnitStillActivating(t *testing.T) {
	from := renderStream(t, base)
	h := install(t, from)
	to := renderStream(t, edit(t, `"Image":"registry.example/web:1"`, `"Image":"registry.example/web:2"`))
	first := plan.Build(to, h.obs, plan.Options{})
	u := interrupted(t, h, first, plan.StepReload)
	for state, want := range map[string]int{"activating": 1, "deactivating": 1, "active": 0} {
		h2 := install(t, to)
		h2.obs.Units["web.service"] = host.UnitState{Name: "web.service", LoadState: "loaded", ActiveState: state}
		p := plan.Build(to, h2.obs, plan.Options{})
		plan.CarryForward(p, to, h2.obs, u, nil)
		if got := countOf(actions(p), "start web.service"); got != want {
			t.Errorf("web %s after a kill in step 9: %d start(s) planned, want %d: %q", state, got, want, actions(p))
		}
	}
}

func TestCarryForwardDropsWhatSpecsNoLongerWant(t *testing.T) {
	from := renderStream(t, base)
	h := install(t, from)
	u := &plan.Unfinished{Run: "run-2", Started: time.Unix(1000, 0), Actions: []plan.Action{
		{Op: plan.OpStart, Target: "gone.service", Unit: "gone.container"},          // no spec any more
		{Op: plan.OpStart, Target: "idle.service", Unit: "idle.container"},          // now desiredState stopped
		{Op: plan.OpReload, Target: "web.service", Unit: "web.container"},           // still wanted
		{Op: plan.OpDeleteVolume, Target: "data", Unit: "data.volume", Digest: "x"}, // the spec still declares data: keep it
		{Op: plan.OpDeleteVolume, Target: "old", Unit: "old.volume"},                // unit removed by that run: delete
		{Op: plan.OpWriteFile, Target: "/etc/containers/config/web/etc/web.conf"},   // derivable: not carried
	}}
	p := plan.Build(from, h.obs, plan.Options{})
	r := plan.CarryForward(p, from, h.obs, u, nil)
	got := actions(p)
	want := []string{"delete-volume old", "reload web.service"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("carried %q, want %q", got, want)
	}
	if r.Carried != 2 || r.Unfinished != 6 {
		t.Errorf("resume counts %+v, want 2 carried of 6 unfinished", r)
	}
	for _, a := range p.Actions {
		if !a.Carried {
			t.Errorf("%s %s should be marked carried", a.Op, a.Target)
		}
	}
}

func TestNeedDaemonReloadPlansOne(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	st := h.obs.Units["api.service"]
	st.NeedDaemonReload = true
	h.obs.Units["api.service"] = st
	p := plan.Build(out, h.obs, plan.Options{})
	if got := actions(p); len(got) != 1 || got[0] != "daemon-reload systemd" {
		t.Fatalf("a unit systemd has not reloaded: want one daemon-reload, got %q", got)
	}
}

func countOf(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

func idx(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
