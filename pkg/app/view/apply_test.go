package view

import (
	"strings"
	"testing"

	"github.com/syslet/syslet/executor"
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
		{plan.Resume{Run: "r1", Unfinished: 4, Resumed: 4, PutBack: true}, "previous run r1 failed and put the host back; this plan makes its change again (4 of its action(s))"},
		{plan.Resume{Run: "r1", Unfinished: 4, Resumed: 0, PutBack: true}, "previous run r1 failed and put the host back; none of its 4 unfinished action(s) is left to do"},
	} {
		if got := Resuming(&tc.r); got != tc.want {
			t.Errorf("Resuming(%+v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}

// After a put-back the summary does not promise that what was applied
// stays in place, and names the podman secrets that keep their new value.
func TestSummaryAfterAPutBack(t *testing.T) {
	r := &executor.Result{
		Failed:     []executor.Failure{{Action: plan.Action{Op: plan.OpLinkUnit, Step: plan.StepWriteUnits, Target: "/etc/containers/systemd/worker@3.container"}, Error: "no such file or directory"}},
		NotReached: []plan.Action{{Op: plan.OpDaemonReload, Step: plan.StepDaemonReload, Target: "systemd"}},
		Undo:       &executor.Undo{Files: []plan.Action{{Op: plan.OpWriteFile, Target: "/etc/containers/config/side/etc/side.conf"}}, Started: []string{"side.service"}, Kept: []string{"shop-db-password"}},
	}
	var b strings.Builder
	ApplySummary(&b, "r1", r)
	out := b.String()
	for _, want := range []string{
		"Put the host back as it was but for its podman secrets: put back 1 file(s) it had swapped in, started again what step 2 had stopped (side.service); the podman secret(s) step 3 had created or replaced keep their new value (shop-db-password); nothing was daemon-reloaded",
		"Re-run syslet once the cause is fixed: the host runs what it ran before this run",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "stays in place") {
		t.Errorf("a put-back summary says what was applied stays in place:\n%s", out)
	}
	r.Undo.Errors = []string{"putting back /x: busy"}
	b.Reset()
	ApplySummary(&b, "r1", r)
	if !strings.Contains(b.String(), "Re-run syslet to resume") {
		t.Errorf("a put-back that failed must keep the resume line:\n%s", b.String())
	}
}
