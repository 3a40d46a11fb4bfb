package executor

import (
	"testing"

	"github.com/syslet/syslet/plan"
)

// The table holds each of the nine steps once, in their order, each with
// a way to run; the steps that can put the host back are exactly 2 to 4.
func TestStepTableIsTheNineSteps(t *testing.T) {
	if len(steps) != len(plan.Steps) {
		t.Fatalf("%d rows for %d steps", len(steps), len(plan.Steps))
	}
	for k, s := range steps {
		if s.step != plan.Steps[k] || s.run == nil {
			t.Errorf("row %d is step %v (run set: %v), want %v", k, s.step, s.run != nil, plan.Steps[k])
		}
		want := final
		switch {
		case s.step == plan.StepPull:
			want = untouched
		case s.step <= plan.StepWriteUnits:
			want = undoable
		}
		if s.window != want {
			t.Errorf("step %v: window %d, want %d", s.step, s.window, want)
		}
	}
}
