package deploy

import (
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/notify"
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

// The drift check (AskProbes) asks each running container's installed
// probe once and names one that no longer passes, though its plan is
// empty; a plain --diff asks nothing.
func TestDriftCheckAsksProbes(t *testing.T) {
	h := newHost(t)
	specs := writeSpecs(t, probed)
	h.apply(t, specs)
	req := h.request(specs)
	req.Diff = true
	n := h.probes["api"]
	if r := h.run(t, req); r.err != nil || r.out.Probes != nil || h.probes["api"] != n {
		t.Fatalf("a --diff asked %d probe(s): %v %+v", h.probes["api"]-n, r.err, r.out.Probes)
	}

	req.AskProbes = true
	r := h.run(t, req)
	if r.err != nil || len(r.out.Probes) != 1 || h.probes["api"] != n+1 || len(r.out.Drift()) != 0 {
		t.Fatalf("a passing probe: err %v, probes %+v, asked %d, drift %+v", r.err, r.out.Probes, h.probes["api"]-n, r.out.Drift())
	}
	if p := r.out.Probes[0]; p.Unit != "api.container" || p.Service != "api.service" || p.Answer == nil || !p.Answer.OK {
		t.Errorf("probe %+v", p)
	}

	h.badProbeOn["api"] = "api:1" // the running api stops serving
	r = h.run(t, req)
	d := r.out.Drift()
	want := `probe GET :8080/up answered 503 "db unreachable"`
	if r.err != nil || len(d) != 1 || d[0].Unit != "api.container" || d[0].Kind != notify.DriftProbe || len(d[0].Reasons) != 1 || d[0].Reasons[0] != want {
		t.Fatalf("a failing probe: err %v, drift %+v, want api.container %q", r.err, d, want)
	}
	if ev := r.out.DriftEvent(d); !strings.HasSuffix(ev.Summary, ", 1 probe failing") {
		t.Errorf("the drift notification: %q", ev.Summary)
	}
}
