package queue

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/webhookd/config"
)

// TestStatusFileFromBeforeTheVerdict: a status file written before
// attempts kept their ending (result and stage only), or by a later
// version with a verdict this one does not know, is read with the same
// result and stage, and its applied commit kept.
func TestStatusFileFromBeforeTheVerdict(t *testing.T) {
	file := filepath.Join(t.TempDir(), "infra.json")
	must(t, os.WriteFile(file, []byte(`{"lastApplied":"a1","recent":[
{"commit":"a1","result":"success","runId":"r1"},
{"commit":"a2","result":"success"},
{"commit":"a3","result":"failed","stage":"fetch"},
{"commit":"a4","result":"failed","stage":"signature","refusal":"unsigned"},
{"commit":"a5","result":"skipped"},
{"commit":"a6","result":"failed","stage":"apply"},
{"commit":"a7","result":"failed","stage":"health-gate"},
{"commit":"a8","result":"rolled-back","stage":"health-gate"},
{"commit":"a9","result":"failed","stage":"apply","verdict":"a-verdict-of-the-future"}]}`), 0o600))
	b, _, err := openBoard(&config.Repo{Name: "infra"}, file)
	must(t, err)
	st := b.read()
	want := []struct {
		v      verdict.Verdict
		r      Reason
		result string
	}{
		{verdict.Applied, "", "success"}, {verdict.NoChanges, "", "success"}, {0, FetchFailed, "failed"}, {0, SignatureRefused, "failed"},
		{0, Skipped, "skipped"}, {verdict.Failed, "", "failed"}, {verdict.GateFailed, "", "failed"}, {verdict.RolledBack, "", "rolled-back"},
		{verdict.Failed, "", "failed"},
	}
	if st.LastApplied != "a1" || len(st.Recent) != len(want) {
		t.Fatalf("status %+v", st)
	}
	for i, a := range st.Recent {
		raw, err := json.Marshal(a)
		must(t, err)
		var back struct{ Result, Stage string }
		must(t, json.Unmarshal(raw, &back))
		if a.Verdict != want[i].v || a.Reason != want[i].r || back.Result != want[i].result {
			t.Errorf("%s: verdict %v, reason %q, written back as %s", a.Commit, a.Verdict, a.Reason, raw)
		}
	}
}
