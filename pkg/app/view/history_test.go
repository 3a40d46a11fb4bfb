package view

import (
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/commitsig"
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
	// The failed run's note comes first, then the table.
	lines := strings.Split(b.String(), "\n")
	if lines[0] != "r2: health gate: web.service went down" || lines[1] != "" {
		t.Errorf("the note is not before the table:\n%s", b.String())
	}
	lines = lines[2:]
	if f := strings.Fields(lines[1]); len(f) < 10 || f[4] != "failed" || f[7] != "1" || f[8] != "gate" {
		t.Errorf("the failed run's row: %q", lines[1])
	}
	if strings.Count(lines[2], "r2") != 1 {
		t.Errorf("the rollback's row names r2 more than once: %q", lines[2])
	}
}

// The table is the history's last part, so `syslet history | tail` shows
// the newest runs however many notes there are; a rollback's row credits
// the restored generation's signer to that generation, not to the failed
// run its source names last.
func TestHistoryEndsWithItsNewestRows(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 11, 30, 0, 0, time.UTC)
	var runs []*runlog.RunInfo
	for i := range 12 {
		id := "r" + string(rune('a'+i))
		runs = append(runs, &runlog.RunInfo{Intent: runlog.Record{Run: id, Time: t0.Add(time.Duration(i) * time.Minute), Source: "stdin"},
			End: &runlog.Record{Time: t0.Add(time.Duration(i)*time.Minute + time.Second), Result: runlog.ResultFailed, Error: "health gate: web.service went down"}})
	}
	signer := &commitsig.Signer{Principal: "op@example.org"}
	runs = append(runs, &runlog.RunInfo{Intent: runlog.Record{Run: "rz", Time: t0.Add(time.Hour), Source: "rollback to run r0 after rl", Rollback: "r0", RollbackOf: "rl", Signer: signer},
		End: &runlog.Record{Time: t0.Add(time.Hour + time.Second), Result: runlog.ResultRolledBack}})
	var b strings.Builder
	History(&b, runs, nil)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "rz ") || !strings.HasPrefix(lines[len(lines)-2], "rl ") {
		t.Errorf("the newest runs are not the last lines:\n%s", b.String())
	}
	if !strings.Contains(last, "rollback to run r0 after rl (run r0's specs, signed by op@example.org)") {
		t.Errorf("the rollback's row: %q", last)
	}
}
