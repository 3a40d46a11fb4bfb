package deploy

import (
	"errors"
	"strings"
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

// labelledStack is stack with volume data's options changed: a recreate.
var labelledStack = strings.Replace(stack, `"name":"data","reclaimPolicy":"Delete","unit":{}`, `"name":"data","reclaimPolicy":"Delete","unit":{"Volume":{"Label":"tier=new"}}`, 1)

// A volume recreated for a changed option holds its data after the run,
// and so it does when the run stops anywhere between its export and its
// import: stopped as the volume is created again (the journal names the
// export), or killed as podman removed the volume, before its delete was
// journalled (the store holds the export the journal does not name), the
// next run finishes it.
func TestARecreatedVolumeKeepsItsData(t *testing.T) {
	if !strings.Contains(labelledStack, "tier=new") {
		t.Fatal("stack has no volume data to change")
	}
	for _, how := range []string{"whole", "stopped before the import", "removed, not journalled"} {
		t.Run(how, func(t *testing.T) {
			h := newHost(t)
			h.volumes = map[string]string{}
			h.apply(t, writeSpecs(t, stack))
			h.volumes["data"] = "the data"
			h.reset()
			stop := make(chan struct{})
			switch how {
			case "stopped before the import":
				h.before = func(c string) {
					if c == "start data-volume.service" {
						close(stop)
					}
				}
			case "removed, not journalled":
				h.fail["rmvol data"] = errors.New("killed")
			}
			req := h.request(writeSpecs(t, labelledStack))
			req.Stop = stop
			r := h.run(t, req)
			if how == "whole" {
				if r.err != nil || h.volumes["data"] != "the data" || !strings.Contains(r.stdout, "recreate, data carried over") {
					t.Fatalf("err %v, volume %q\n%s", r.err, h.volumes["data"], r.stdout)
				}
				return
			}
			if r.err == nil {
				t.Fatalf("the run ended well:\n%s", r.stdout)
			}
			h.before = nil
			if h.fail["rmvol data"] != nil {
				// podman had removed it when the run was killed.
				delete(h.fail, "rmvol data")
				delete(h.volumes, "data")
			}
			h.reset()
			r = h.apply(t, writeSpecs(t, labelledStack))
			if r.out.Plan.Resume == nil || !contains(h.Calls(), "import data") || h.volumes["data"] != "the data" || !h.active["web.service"] {
				t.Errorf("the next run: calls %q, volume %q\n%s", h.Calls(), h.volumes["data"], r.stdout)
			}
		})
	}
}
