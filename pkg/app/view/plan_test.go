package view

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/syslet/syslet/plan"
)

// The irreversible line names the first volumes a plan deletes and
// counts the rest, which the steps list one by one; the names are
// escaped, as they come from the host's units as well as the specs.
func TestIrreversibleLine(t *testing.T) {
	deletes := func(names ...string) *plan.Plan {
		p := &plan.Plan{}
		for _, n := range names {
			p.Actions = append(p.Actions, plan.Action{Step: plan.StepDelete, Op: plan.OpDeleteVolume, Target: n, Irreversible: true})
		}
		return p
	}
	var many []string
	for i := range 12 {
		many = append(many, fmt.Sprintf("v%d", i))
	}
	for _, tc := range []struct {
		p    *plan.Plan
		want string
	}{
		{deletes("data", "cache"), "Irreversible: no rollback can undo volume data (deleted), volume cache (deleted).\n"},
		{deletes("e\x1b[2J"), `Irreversible: no rollback can undo volume e\x1b[2J (deleted).` + "\n"},
		{deletes(many...), "Irreversible: no rollback can undo volume v0 (deleted), volume v1 (deleted), volume v2 (deleted), volume v3 (deleted), volume v4 (deleted), " +
			"volume v5 (deleted), volume v6 (deleted), volume v7 (deleted), volume v8 (deleted), volume v9 (deleted) and 2 more (each is marked [irreversible] under Steps).\n"},
	} {
		var b bytes.Buffer
		Plan(&b, tc.p)
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("plan lacks %q:\n%s", tc.want, b.String())
		}
		if strings.Count(b.String(), "[irreversible]") < len(tc.p.Actions) {
			t.Errorf("a step is not marked [irreversible]:\n%s", b.String())
		}
	}
}
