package deploy

import (
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/verdict"
)

// probed is stack with a readiness probe on api.
var probed = strings.Replace(stack, `{"apiVersion":"v1","type":"container","name":"api",`,
	`{"apiVersion":"v1","type":"container","name":"api","probe":{"http":{"port":8080,"path":"/up"},"interval":"100ms","deadline":"400ms"},`, 1)

// A probe that never gets ready rolls the run back with the probe's last
// answer in the verdict; the rollback's gate probes the restored
// container; a converged run probes nothing; a change to the probe alone
// restarts nothing.
func TestProbeRollsBack(t *testing.T) {
	h := newHost(t)
	first := h.apply(t, writeSpecs(t, probed))
	if g := first.out.Gate; g == nil || len(g.Probes) != 1 || !g.Probes[0].Ready || h.probes["api"] == 0 {
		t.Fatalf("first apply: gate %+v, %d probe(s)", g, h.probes["api"])
	}

	n := h.probes["api"]
	if r := h.apply(t, writeSpecs(t, probed)); r.out.Gate != nil && len(r.out.Gate.Units) > 0 || h.probes["api"] != n {
		t.Errorf("a converged run probed api %d time(s)", h.probes["api"]-n)
	}

	// The probe alone changes: the unit is rewritten, nothing restarts.
	h.reset()
	slower := strings.Replace(probed, `"interval":"100ms"`, `"interval":"200ms"`, 1)
	m := h.apply(t, writeSpecs(t, slower))
	if calls := h.Calls("stop", "restart", "start"); len(calls) > 0 || m.out.Plan.Count().Metadata != 1 {
		t.Errorf("a probe change: calls %q, plan %s", calls, m.stdout)
	}
	if !strings.Contains(m.stdout, "~ probe: GET :8080/up → 200-399 every 100ms, within 400ms ⇒ GET :8080/up → 200-399 every 200ms, within 400ms") {
		t.Errorf("the plan does not name the probe:\n%s", m.stdout)
	}

	h.badProbeOn["api"] = "api:2"
	r := h.run(t, h.request(writeSpecs(t, strings.Replace(slower, "api:1", "api:2", 1))))
	if r.out.Verdict != verdict.RolledBack || r.out.Gate == nil || len(r.out.Gate.Failures) != 1 {
		t.Fatalf("err %v gate %+v\n%s", r.err, r.out.Gate, r.stdout)
	}
	want := `probe GET :8080/up not ready within 400ms: answered 503 "db unreachable"`
	if f := r.out.Gate.Failures[0]; f.Service != "api.service" || !strings.HasPrefix(f.Reason, want) {
		t.Errorf("failure %+v, want api.service %q", f, want)
	}
	if !strings.Contains(r.stdout, "api.service: "+want) {
		t.Errorf("the human output lacks the probe's verdict:\n%s", r.stdout)
	}
	if last := h.runs(t); !strings.Contains(last[len(last)-2].End.Error, "api.service "+want) {
		t.Errorf("the journal's error lacks the probe: %q", last[len(last)-2].End.Error)
	}
	if rb := r.out.Rollback; rb == nil || !rb.Passed || rb.Gate == nil || len(rb.Gate.Probes) != 1 || !rb.Gate.Probes[0].Ready {
		t.Errorf("the rollback's gate did not probe the restored api: %+v", rb)
	}
}
