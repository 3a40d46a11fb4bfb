package executor

import (
	"slices"
	"testing"

	"github.com/syslet/syslet/plan"
)

// The table holds the nine steps in their order, each with a way to run
// and every op of it taken by exactly one of its rows (the last row of a
// step takes what the others leave); the steps that can put the host back
// are exactly 2 to 4.
func TestStepTableIsTheNineSteps(t *testing.T) {
	var order []plan.Step
	for k, s := range steps {
		if len(order) == 0 || order[len(order)-1] != s.step {
			order = append(order, s.step)
		}
		last := k == len(steps)-1 || steps[k+1].step != s.step
		if s.run == nil || (s.takes == nil) != last {
			t.Errorf("row %d of step %v: run set %v, takes set %v", k, s.step, s.run != nil, s.takes != nil)
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
	if !slices.Equal(order, plan.Steps) {
		t.Errorf("the rows' steps are %v, want %v", order, plan.Steps)
	}
	// Each op lands in a row of its own step.
	for _, op := range []plan.Op{plan.OpPull, plan.OpStop, plan.OpWriteFile, plan.OpCreateSecret, plan.OpWriteUnit, plan.OpRemoveUnit,
		plan.OpDeleteVolume, plan.OpDaemonReload, plan.OpReload, plan.OpCreateVolume, plan.OpImportVolume, plan.OpStart} {
		rows := byStep(&plan.Plan{Actions: []plan.Action{{Op: op, Step: plan.StepOf(op)}}})
		k := slices.IndexFunc(rows[:], func(idx []int) bool { return len(idx) > 0 })
		if k < 0 || steps[k].step != plan.StepOf(op) || (steps[k].takes != nil) != op.Fills() {
			t.Errorf("%s lands in row %d", op, k)
		}
	}
}
