package plan_test

import (
	"testing"

	"github.com/syslet/syslet/plan"
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
