package view

import (
	"testing"

	"github.com/syslet/syslet/plan"
)

// A plan header counts what this run resumes; a run whose unfinished
// actions all landed or were left alone resumes nothing and says so.
func TestResumingSaysWhatIsLeftToDo(t *testing.T) {
	for _, tc := range []struct {
		r    plan.Resume
		want string
	}{
		{plan.Resume{Run: "r1", Unfinished: 3, Resumed: 2}, "previous run r1 did not finish; resuming 2 action(s)"},
		{plan.Resume{Run: "r1", Unfinished: 1, Resumed: 0}, "previous run r1 did not finish; none of its 1 unfinished action(s) is left to do"},
		{plan.Resume{Run: "r\x1b[2J", Unfinished: 1, Resumed: 1}, `previous run r\x1b[2J did not finish; resuming 1 action(s)`},
	} {
		if got := Resuming(&tc.r); got != tc.want {
			t.Errorf("Resuming(%+v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}
