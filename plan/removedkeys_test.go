package plan_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/plan"
)

// A removed unit's keys are in the plan's JSON, every one as "-", hidden
// as the installed unit's mode and the credential rule say, though the
// plan works them out only when it is written.
func TestRemovedUnitsKeysInJSON(t *testing.T) {
	const two = `{"apiVersion":"v1","type":"volume","name":"open","unit":{"Volume":{"Label":["password=hunter2","tier=x"]}}}
{"apiVersion":"v1","type":"volume","name":"private","unit":{"Volume":{"Label":"tier=y"}}}`
	h := install(t, renderStream(t, two))
	// The operator made one of them private by hand.
	must(t, os.Chmod(h.root.Path(layout.UnitPath("private.volume")), 0o600))
	h.reread(t)
	p := plan.Build(renderStream(t, `[]`), h.obs, plan.Options{})
	b, err := json.Marshal(p)
	must(t, err)
	var back struct {
		Units []plan.UnitChange `json:"units"`
	}
	must(t, json.Unmarshal(b, &back))
	got := map[string][]string{}
	for _, u := range back.Units {
		if u.Effect != plan.EffectRemove {
			t.Fatalf("%s: %s, want remove", u.FileName, u.Effect)
		}
		for _, k := range u.Keys {
			got[u.FileName] = append(got[u.FileName], k.Op+" ["+k.Section+"] "+k.Key+"="+k.Old)
		}
	}
	want := map[string]string{
		"open.volume":    "- [Volume] Label=password=(hidden: it names a credential)|- [Volume] Label=tier=x|- [Volume] VolumeName=open|- [X-Syslet] ReclaimPolicy=Delete|- [X-Syslet] RemovalAllowed=true|- [X-Syslet] Digest=",
		"private.volume": "- [Volume] Label=(content hidden: the installed unit has mode 0600)|- [Volume] VolumeName=(content hidden: the installed unit has mode 0600)",
	}
	for name, w := range want {
		if g := strings.Join(got[name], "|"); !strings.HasPrefix(g, w) {
			t.Errorf("%s keys:\n got %s\nwant %s…", name, g, w)
		}
	}
	if strings.Contains(string(b), "hunter2") {
		t.Errorf("the JSON plan holds a credential:\n%s", b)
	}
}
