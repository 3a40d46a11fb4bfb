package verdict

import (
	"slices"
	"testing"

	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/runlog"
)

// TestEveryVerdictHasEveryMapping holds the table whole: each verdict has
// a name, an exit code, and a webhookd result, and its journal result,
// notification kind and webhookd stage are ones their consumers know.
func TestEveryVerdictHasEveryMapping(t *testing.T) {
	journal := []string{"", runlog.ResultOK, runlog.ResultFailed, runlog.ResultInterrupted, runlog.ResultNoChanges, runlog.ResultRefused, runlog.ResultRolledBack}
	kinds := append([]notify.Kind{""}, notify.Kinds...)
	exits := []int{ExitOK, ExitError, ExitInvalid, ExitRolledBack, ExitRollbackFailed, ExitInterrupted}
	names := map[string]bool{}
	for _, v := range all() {
		e := table[v]
		if e.name == "" || names[e.name] {
			t.Errorf("verdict %d: name %q is missing or not unique", v, e.name)
		}
		names[e.name] = true
		if !slices.Contains(exits, e.exit) {
			t.Errorf("%s: exit code %d is not a documented one", v, e.exit)
		}
		if !slices.Contains(journal, e.journal) {
			t.Errorf("%s: journal result %q is not the journal's", v, e.journal)
		}
		if !slices.Contains(kinds, e.notify) || e.notify == notify.Started || e.notify == notify.Drift {
			t.Errorf("%s: notification kind %q is not one a run ends with", v, e.notify)
		}
		if !slices.Contains([]string{DeploySuccess, DeployFailed, DeployRolledBack}, e.deploy) {
			t.Errorf("%s: webhookd result %q is not webhookd's", v, e.deploy)
		}
		// A failure has a stage and is told; success has neither stage
		// nor a failed exit code.
		failed := e.deploy != DeploySuccess
		if failed != (e.stage != "") || failed != (e.exit != ExitOK) {
			t.Errorf("%s: result %q, stage %q and exit %d disagree on whether it failed", v, e.deploy, e.stage, e.exit)
		}
		if failed && v != Declined && e.notify == "" {
			t.Errorf("%s: a failure sends no notification", v)
		}
	}
	if len(all()) != int(count)-1 {
		t.Errorf("All lists %d verdicts, want %d", len(all()), count-1)
	}
}

// TestExitCodesOfTheGateAreItsOwn pins the codes CI jobs and syslet push
// branch on.
func TestExitCodesOfTheGateAreItsOwn(t *testing.T) {
	for v, want := range map[Verdict]int{Applied: 0, NoChanges: 0, Invalid: 2, Refused: 1, Failed: 1, GateFailed: 1, RolledBack: 4, RollbackFailed: 5, Interrupted: 130} {
		if got := v.Exit(); got != want {
			t.Errorf("%s.Exit() = %d, want %d", v, got, want)
		}
	}
}

// all lists every verdict, in order.
func all() []Verdict {
	out := make([]Verdict, 0, count-1)
	for v := Verdict(1); v < count; v++ {
		out = append(out, v)
	}
	return out
}
