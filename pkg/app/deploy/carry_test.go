package deploy

import (
	"testing"

	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/plan"
)

// A run stopped while it carried a volume's data over (its import names
// no backup) is resumed with the export it took named: the next run
// imports that one, not an export of its own of the half-filled volume.
func TestAnUnfinishedCarryOverNamesItsExport(t *testing.T) {
	i0, i1 := 0, 1
	run := &runlog.RunInfo{
		Intent: runlog.Record{Run: "r1", Actions: []runlog.Action{
			{Index: 0, Step: 6, Op: string(plan.OpDeleteVolume), Target: "data", Unit: "data.volume"},
			{Index: 1, Step: 9, Op: string(plan.OpCreateVolume), Target: "data", Unit: "data.volume"},
			{Index: 2, Step: 9, Op: string(plan.OpImportVolume), Target: "data", Unit: "data.volume"},
		}},
		Actions: []runlog.Record{
			{Index: &i0, Op: string(plan.OpDeleteVolume), Target: "data", Result: runlog.ResultOK, Backup: &backup.Entry{File: "r1_data.tar", Volume: "data", SHA256: "feed"}},
			{Index: &i1, Op: string(plan.OpCreateVolume), Target: "data", Result: runlog.ResultOK},
		},
	}
	u := unfinished([]*runlog.RunInfo{run})
	if u == nil || len(u.Actions) != 1 {
		t.Fatalf("unfinished %+v", u)
	}
	if d := u.Actions[0].Data(); u.Actions[0].Op != plan.OpImportVolume || d.Backup != "r1_data.tar" || d.Digest != "feed" {
		t.Errorf("the carried import: %+v %+v", u.Actions[0], d)
	}
}
