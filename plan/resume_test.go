package plan_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/digest"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/spec"
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
		{Op: plan.OpStart, Target: "gone.service", Unit: "gone.container"},                                  // no spec any more
		{Op: plan.OpStart, Target: "idle.service", Unit: "idle.container"},                                  // now desiredState stopped
		{Op: plan.OpReload, Target: "web.service", Unit: "web.container"},                                   // still wanted
		{Op: plan.OpDeleteVolume, Target: "data", Unit: "data.volume", Payload: &plan.Payload{Digest: "x"}}, // the spec still declares data: keep it
		{Op: plan.OpDeleteVolume, Target: "old", Unit: "old.volume"},                                        // unit gone: nothing shows "old" is syslet's
		{Op: plan.OpWriteFile, Target: "/etc/containers/config/web/etc/web.conf"},                           // derivable: not carried
	}}
	p := plan.Build(from, h.obs, plan.Options{})
	r := plan.CarryForward(p, from, h.obs, u, nil)
	got := actions(p)
	want := []string{"reload web.service"}
	if len(got) != len(want) || got[0] != want[0] {
		t.Fatalf("carried %q, want %q", got, want)
	}
	if r.Carried != 1 || r.Unfinished != 6 {
		t.Errorf("resume counts %+v, want 1 carried of 6 unfinished", r)
	}
	if len(p.Notes) != 1 || p.Notes[0].Unit != "old.volume" || !strings.Contains(p.Notes[0].Message, "delete volume old, but no unit carrying syslet's marker names it, installed or in the last good generation") {
		t.Errorf("notes %+v, want one saying why old was left alone", p.Notes)
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

// TestCarryForwardDeletesOnlyWhatSysletManages: a journal line naming a
// delete is acted on only when the installed unit it names carries
// syslet's marker, names that very object and allows its deletion, and
// the specs still want the unit the earlier run wrote (a recreate).
func TestCarryForwardDeletesOnlyWhatSysletManages(t *testing.T) {
	from := renderStream(t, base)
	h := install(t, from)
	var dataDigest string
	for _, u := range from.Units {
		if u.FileName == "data.volume" {
			dataDigest = digest.Of(u.Bytes()).Hex()
		}
	}
	for _, tt := range []struct {
		name string
		a    plan.Action
		want bool
	}{
		{"forged line, no unit", plan.Action{Op: plan.OpDeleteVolume, Target: "victim-volume"}, false},
		{"forged line, a unit that does not name it", plan.Action{Op: plan.OpDeleteVolume, Target: "victim-volume", Unit: "data.volume", Payload: &plan.Payload{Digest: dataDigest}}, false},
		{"forged line, a network op on a volume unit", plan.Action{Op: plan.OpDeleteNetwork, Target: "data", Unit: "data.volume", Payload: &plan.Payload{Digest: dataDigest}}, false},
		{"a unit syslet does not manage", plan.Action{Op: plan.OpDeleteVolume, Target: "systemd-hand", Unit: "hand.volume"}, false},
		{"the recreate the earlier run was making", plan.Action{Op: plan.OpDeleteVolume, Target: "data", Unit: "data.volume", Payload: &plan.Payload{Digest: dataDigest}}, true},
		{"a unit the earlier run removed, in the last generation", plan.Action{Op: plan.OpDeleteVolume, Target: "old", Unit: "old.volume"}, true},
		{"a unit the earlier run removed, kept by its marker", plan.Action{Op: plan.OpDeleteVolume, Target: "kept", Unit: "kept.volume"}, false},
		{"a forged unit name, in the last generation under another name", plan.Action{Op: plan.OpDeleteVolume, Target: "victim-volume", Unit: "old.volume"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obs := *h.obs
			obs.Files = maps.Clone(h.obs.Files)
			obs.Files["/etc/containers/systemd/hand.volume"] = host.File{Data: []byte("[Volume]\n"), Mode: 0o644}
			acts := []plan.Action{tt.a}
			if tt.a.Data().Digest != "" {
				acts = append(acts, plan.Action{Op: plan.OpWriteUnit, Target: "/etc/containers/systemd/" + tt.a.Unit, Unit: tt.a.Unit, Payload: &plan.Payload{Digest: tt.a.Data().Digest}})
			}
			u := &plan.Unfinished{Run: "run-9", Started: time.Unix(1000, 0), Actions: acts, Managed: map[string]plan.Managed{
				"old.volume":  {Kind: spec.Volume, Name: "old", Deletable: true},
				"kept.volume": {Kind: spec.Volume, Name: "kept", Deletable: false},
			}}
			p := plan.Build(from, &obs, plan.Options{})
			plan.CarryForward(p, from, &obs, u, nil)
			deleted := slices.ContainsFunc(p.Actions, func(a plan.Action) bool { return a.Op == tt.a.Op })
			if deleted != tt.want {
				t.Errorf("carried %q, want the delete carried: %v (notes %+v)", actions(p), tt.want, p.Notes)
			}
		})
	}
}

// A volume's delete planned without an export (its marker said
// Backup=false) is carried forward without one: the resumed run exports
// nothing the earlier run meant to let go.
func TestCarryForwardKeepsNoBackup(t *testing.T) {
	from := renderStream(t, base)
	h := install(t, from)
	for _, noBackup := range []bool{true, false} {
		a := plan.Action{Op: plan.OpDeleteVolume, Target: "old", Unit: "old.volume"}
		if noBackup {
			a.Payload = &plan.Payload{NoBackup: true}
		}
		u := &plan.Unfinished{Run: "run-9", Started: time.Unix(1000, 0), Actions: []plan.Action{a},
			Managed: map[string]plan.Managed{"old.volume": {Kind: spec.Volume, Name: "old", Deletable: true}}}
		p := plan.Build(from, h.obs, plan.Options{})
		plan.CarryForward(p, from, h.obs, u, nil)
		i := slices.IndexFunc(p.Actions, func(a plan.Action) bool { return a.Op == plan.OpDeleteVolume })
		if i < 0 || p.Actions[i].Data().NoBackup != noBackup {
			t.Errorf("NoBackup %v: carried %+v", noBackup, p.Actions)
		}
	}
}

// An image unit's image outlives it as a build's does (the kind table
// says so, Object): a run that removed a stale image unit under
// reclaimPolicy Delete and stopped before deleting its image is finished
// by the next, and a rollback never deletes it.
func TestImageUnitsImageGoesAsABuilds(t *testing.T) {
	img := `{"apiVersion":"v1","type":"image","name":"bb","reclaimPolicy":"Delete","unit":{"Image":{"Image":"registry.example/bb:1"}}}` + "\n"
	from := renderStream(t, base+img)
	to := renderStream(t, base)
	h := install(t, from)
	p := plan.Build(to, h.obs, plan.Options{})
	i := slices.IndexFunc(p.Actions, func(a plan.Action) bool { return a.Op == plan.OpDeleteImage })
	if i < 0 {
		t.Fatalf("removing the image unit deletes no image: %q", actions(p))
	}
	if kept := plan.Build(to, h.obs, plan.Options{Rollback: true}); countOp(kept, plan.OpDeleteImage) != 0 {
		t.Errorf("a rollback deletes the image unit's image: %q", actions(kept))
	}
	// Killed after step 5: the unit is gone, its image is not.
	u := &plan.Unfinished{Run: "run-1", Started: time.Unix(1000, 0), Actions: []plan.Action{p.Actions[i]}, Managed: plan.KnownResources(from)}
	after := install(t, to)
	resumed := plan.Build(to, after.obs, plan.Options{})
	plan.CarryForward(resumed, to, after.obs, u, nil)
	if countOp(resumed, plan.OpDeleteImage) != 1 {
		t.Errorf("the next run does not delete the image the earlier one meant to: %q (notes %+v)", actions(resumed), resumed.Notes)
	}
}
