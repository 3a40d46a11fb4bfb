package plan_test

import (
	"strings"
	"testing"

	"github.com/syslet/syslet/plan"
)

// A volume whose spec says "backup": false carries Backup=false in its
// marker, and the plan's delete of it, read from the installed marker
// whether the volume leaves the specs or is recreated, says so; any other
// volume's delete is backed up.
func TestBackupFalseIsReadFromTheInstalledMarker(t *testing.T) {
	noBackup := edit(t, `"name":"data","reclaimPolicy":"Delete","unit":{}}`, `"name":"data","reclaimPolicy":"Delete","backup":false,"unit":{}}`)
	out := renderStream(t, noBackup)
	for _, u := range out.Units {
		if u.FileName == "data.volume" && !strings.Contains(string(u.Bytes()), "\nBackup=false\n") {
			t.Fatalf("data.volume has no Backup=false:\n%s", u.Bytes())
		}
		if u.FileName == "keep.volume" && strings.Contains(string(u.Bytes()), "Backup=") {
			t.Fatalf("keep.volume has a Backup= it was not given:\n%s", u.Bytes())
		}
	}
	h := install(t, out)
	if p := plan.Build(out, h.obs, plan.Options{}); !p.Empty() {
		t.Fatalf("converged: %q", actions(p))
	}
	recreate := edit(t, `"name":"data","reclaimPolicy":"Delete","unit":{}}`, `"name":"data","reclaimPolicy":"Delete","unit":{"Volume":{"Label":"x=1"}}}`)
	gone := edit(t, `{"apiVersion":"v1","type":"volume","name":"data","reclaimPolicy":"Delete","unit":{}}`, ``)
	gone = strings.Replace(gone, `,"Volume":"data.volume:/data"`, ``, 1)
	for name, stream := range map[string]string{"recreated": recreate, "deleted": gone} {
		p := plan.Build(renderStream(t, stream), h.obs, plan.Options{})
		del := deleteOf(p, "data")
		if del == nil || !del.Data().NoBackup || !strings.Contains(planJSON(t, p), `"noBackup":true`) {
			t.Errorf("%s under Backup=false: delete %+v, actions %q", name, del, actions(p))
		}
	}
	h = install(t, renderStream(t, base))
	if del := deleteOf(plan.Build(renderStream(t, gone), h.obs, plan.Options{}), "data"); del == nil || del.Data().NoBackup {
		t.Errorf("a volume without backup false: delete %+v", del)
	}
}

func deleteOf(p *plan.Plan, volume string) *plan.Action {
	for i, a := range p.Actions {
		if a.Op == plan.OpDeleteVolume && a.Target == volume {
			return &p.Actions[i]
		}
	}
	return nil
}
