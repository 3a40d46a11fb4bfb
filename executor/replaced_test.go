package executor_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/syslet/syslet/plan"
)

// A socket-held container is restarted in step 9, after the daemon-reload
// and after the step's starts, as a batch of its own; the result says how
// each replaced container was replaced.
func TestRestartsComeAfterTheStartsOfStepNine(t *testing.T) {
	p := mk("restart web.service", "write-unit /u/web", "daemon-reload x", "start net-network.service",
		"stop api.service", "start api.service")
	p.Units = []plan.UnitChange{
		{FileName: "web.container", Service: "web.service", Replacement: &plan.Replacement{Strategy: plan.StrategySocketHeld, Socket: "web.socket"}},
		{FileName: "api.container", Service: "api.service", Replacement: &plan.Replacement{Strategy: plan.StrategyStopStart, Reason: "no socket, no probe"}},
	}
	f := &fake{}
	res, err := apply(t, p, f)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"stop api.service", "write /u/web", "daemon-reload", "start net-network.service", "start api.service", "restart web.service"}
	if !slices.Equal(f.calls, want) {
		t.Errorf("calls:\n got %q\nwant %q", f.calls, want)
	}
	if want := []string{"stop api.service", "start net-network.service api.service", "restart web.service"}; !slices.Equal(f.batches, want) {
		t.Errorf("batches:\n got %q\nwant %q", f.batches, want)
	}
	if len(res.Replaced) != 2 {
		t.Fatalf("replaced = %+v, want web and api", res.Replaced)
	}
	for _, r := range res.Replaced {
		if !r.Done || r.Took <= 0 {
			t.Errorf("%s: done %v took %s, want done with a duration", r.Service, r.Done, r.Took)
		}
	}
	if web, api := res.Replaced[0], res.Replaced[1]; web.Strategy != plan.StrategySocketHeld || api.Strategy != plan.StrategyStopStart {
		t.Errorf("strategies: web %s, api %s", web.Strategy, api.Strategy)
	}
}

// A restart that fails is no replacement done.
func TestFailedRestartIsNotDone(t *testing.T) {
	p := mk("restart web.service")
	p.Units = []plan.UnitChange{{FileName: "web.container", Service: "web.service", Replacement: &plan.Replacement{Strategy: plan.StrategySocketHeld}}}
	f := &fake{fail: map[string]error{"restart web.service": errors.New("start request repeated too quickly")}}
	res, _ := apply(t, p, f)
	if len(res.Failed) != 1 || len(res.Replaced) != 1 || res.Replaced[0].Done {
		t.Fatalf("result: failed %v, replaced %+v", res.Failed, res.Replaced)
	}
}
