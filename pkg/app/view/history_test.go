package view

import (
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/runlog"
)

// A run whose every action landed but whose container failed the health
// gate is not shown with 0 in FAILED: the units that failed the gate are
// counted there; and a rollback's source, which names the run it rolls
// back, does not name it twice.
func TestHistoryCountsTheGatesFailures(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 11, 30, 0, 0, time.UTC)
	actions := []runlog.Action{{Index: 0, Step: 9, Op: "start", Target: "web.service"}}
	failed := &runlog.RunInfo{Intent: runlog.Record{Run: "r2", Time: t0, Source: "/srv/s", Actions: actions},
		Actions: []runlog.Record{{Result: runlog.ResultOK}},
		End:     &runlog.Record{Time: t0.Add(4 * time.Second), Result: runlog.ResultFailed, Applied: 1, GateFailed: 1, Error: "health gate: web.service went down"}}
	back := &runlog.RunInfo{Intent: runlog.Record{Run: "r3", Time: t0.Add(5 * time.Second), Source: "rollback to run r1 after r2", Rollback: "r1", RollbackOf: "r2", Actions: actions},
		Actions: []runlog.Record{{Result: runlog.ResultOK}},
		End:     &runlog.Record{Time: t0.Add(9 * time.Second), Result: runlog.ResultRolledBack, Applied: 1}}
	var b strings.Builder
	History(&b, []*runlog.RunInfo{failed, back}, nil)
	lines := strings.Split(b.String(), "\n")
	if f := strings.Fields(lines[1]); len(f) < 10 || f[4] != "failed" || f[7] != "1" || f[8] != "gate" {
		t.Errorf("the failed run's row: %q", lines[1])
	}
	if strings.Count(lines[2], "r2") != 1 {
		t.Errorf("the rollback's row names r2 more than once: %q", lines[2])
	}
}
