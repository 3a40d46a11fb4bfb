package plan_test

import (
	"slices"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/plan"
)

// webFill fills the base stack's volume data (which web mounts) from a
// backup, as `syslet restore data` plans it on a host running base.
var webFill = plan.Fill{Volume: "data", Backup: "r0_data.tar", Unit: "data.volume", Service: "data-volume.service",
	ServiceActive: true, Exists: true, Users: []string{"web.service"}, Running: []string{"web.service"}}

// A fill stops the volume's users and service, exports and removes the
// volume, creates it through its service, imports the backup, and starts
// the users: the creation and import before every other start of step 9.
func TestAFillIsStepsOfThePlan(t *testing.T) {
	p := &plan.Plan{}
	p.AddFill(webFill)
	want := []string{"stop web.service", "stop data-volume.service", "delete-volume data", "create-volume data", "import-volume data", "start web.service"}
	if got := actions(p); !slices.Equal(got, want) {
		t.Fatalf("actions %q, want %q", got, want)
	}
	for _, a := range p.Actions {
		if a.Step != plan.StepOf(a.Op) {
			t.Errorf("%s in step %d", a.Op, a.Step)
		}
	}
	if d := p.Actions[3].Data(); d.Service != "data-volume.service" {
		t.Errorf("the creation's payload %+v", d)
	}
	if d := p.Actions[4].Data(); d.Backup != "r0_data.tar" {
		t.Errorf("the import's payload %+v", d)
	}
	if !p.BackedUp(&p.Actions[2]) {
		t.Error("a fill's delete goes without an export")
	}

	// Into a rollback's plan that restarts web and starts the volume's
	// service (it creates the volume): each once, the volume filled
	// before the starts.
	to := renderStream(t, base)
	h := install(t, to)
	delete(h.obs.Files, layout.UnitPath("data.volume"))
	h.obs.Units["data-volume.service"] = host.UnitState{Name: "data-volume.service", LoadState: "not-found", ActiveState: "inactive"}
	h.obs.Units["web.service"] = host.UnitState{Name: "web.service", LoadState: "loaded", ActiveState: "inactive"}
	p = plan.Build(to, h.obs, plan.Options{})
	if countOf(actions(p), "start data-volume.service") != 1 {
		t.Fatalf("premise: the plan starts the volume's service: %q", actions(p))
	}
	f := webFill
	f.ServiceActive, f.Exists = false, false
	p.AddFill(f)
	got := actions(p)
	if countOf(got, "start data-volume.service") != 0 || countOf(got, "start web.service") != 1 || countOf(got, "stop web.service") != 1 {
		t.Errorf("the fill's actions are not each once: %q", got)
	}
	if idx(got, "import-volume data") > idx(got, "start web.service") {
		t.Errorf("the fill comes after a start: %q", got)
	}
}

// A fill stopped during its import is carried whole by the next run: the
// import (into the volume as it was left) and the users' starts; stopped
// before its delete, its stops and the delete too.
func TestAFillIsCarriedForward(t *testing.T) {
	to := renderStream(t, base)
	fill := &plan.Plan{}
	fill.AddFill(webFill)
	unfinished := func(after plan.Op) *plan.Unfinished {
		u := &plan.Unfinished{Run: "run-1", Started: time.Unix(1000, 0)}
		at := -1
		for i, a := range fill.Actions {
			if a.Op == after {
				at = i
			}
		}
		u.Actions = slices.Clone(fill.Actions[at+1:])
		return u
	}

	// Killed during the import: web is down, the volume exists again.
	h := install(t, to)
	h.obs.Units["web.service"] = host.UnitState{Name: "web.service", LoadState: "loaded", ActiveState: "inactive"}
	p := plan.Build(to, h.obs, plan.Options{})
	r := plan.CarryForward(p, to, h.obs, unfinished(plan.OpCreateVolume), nil)
	got := actions(p)
	if r == nil || countOf(got, "import-volume data") != 1 || countOf(got, "start web.service") != 1 || idx(got, "import-volume data") > idx(got, "start web.service") {
		t.Fatalf("carried %+v: %q", r, got)
	}
	for _, a := range p.Actions {
		if a.Op == plan.OpImportVolume && (!a.Carried || a.Data().Backup != "r0_data.tar") {
			t.Errorf("the carried import %+v %+v", a, a.Data())
		}
	}

	// Killed once its stops landed: the volume is exported and removed,
	// created through its service again, and filled.
	p = plan.Build(to, h.obs, plan.Options{})
	plan.CarryForward(p, to, h.obs, unfinished(plan.OpStop), nil)
	want := []string{"delete-volume data", "create-volume data", "import-volume data", "start web.service"}
	if got := actions(p); !slices.Equal(got, want) {
		t.Errorf("after its stops: %q, want %q", got, want)
	}
	for _, a := range p.Actions {
		if a.Op == plan.OpCreateVolume && a.Data().Service != "data-volume.service" {
			t.Errorf("the carried creation does not go through the volume's service: %+v", a.Data())
		}
		if a.Op == plan.OpDeleteVolume && !p.BackedUp(&a) {
			t.Error("the carried delete goes without its export")
		}
	}

	// Killed before anything landed: web still runs, and is stopped.
	h = install(t, to)
	p = plan.Build(to, h.obs, plan.Options{})
	plan.CarryForward(p, to, h.obs, &plan.Unfinished{Run: "run-1", Actions: slices.Clone(fill.Actions)}, nil)
	if got := actions(p); countOf(got, "stop web.service") != 1 || countOf(got, "start web.service") != 1 {
		t.Errorf("before anything landed: %q", got)
	}
}
