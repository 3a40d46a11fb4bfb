package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/verdict"
)

// TestEvents: what each kind of run tells the people who are not
// watching: a started event just before the host changes (never for a run
// with nothing to do, never for the rollback pass), and the run's own
// event after it.
func TestEvents(t *testing.T) {
	h := newHost(t)
	h.imageOf["web@registry.example/web:1"] = "sha256:web1"
	specs := writeSpecs(t, good)

	var started []notify.Event
	run := func(req Request) ran {
		t.Helper()
		req.Started = func(ev notify.Event) { started = append(started, ev) }
		req.Soak = 300 * 1e6
		return h.run(t, req)
	}

	// A first deploy: started, then succeeded.
	r := run(h.request(specs))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(started) != 1 || started[0].Event != notify.Started || started[0].Run != r.out.RunID || started[0].Plan == nil ||
		started[0].Plan.Create != len(stackUnits) || started[0].Source.Kind != view.SourcePath || started[0].Host == "" {
		t.Fatalf("started = %+v", started)
	}
	ev, ok := r.out.Event()
	if !ok || ev.Event != notify.Succeeded || ev.Run != r.out.RunID || ev.DurationSeconds <= 0 || ev.Summary != r.out.Summary ||
		ev.Plan.Actions == 0 || ev.Error != "" || len(ev.Failing) != 0 {
		t.Fatalf("succeeded = %+v %v", ev, ok)
	}

	// Converged: nothing to tell.
	started = nil
	r = run(h.request(specs))
	if _, ok := r.out.Event(); ok || len(started) != 0 || r.err != nil {
		t.Fatalf("converged run: event %v, started %d, err %v", ok, len(started), r.err)
	}

	// A crash loop, rolled back: one started event (not the rollback's),
	// rolled-back with the failing unit and its log lines.
	h.crashOn["web.service"] = "web:2"
	h.logs["web.service"] = []string{"web: exec /bin/web: no such file or directory"}
	r = run(h.request(writeSpecs(t, bad)))
	if r.out.Verdict != verdict.RolledBack {
		t.Fatalf("err = %v", r.err)
	}
	ev, ok = r.out.Event()
	if len(started) != 1 || !ok || ev.Event != notify.RolledBack || len(ev.Failing) != 1 || ev.Failing[0].Unit != "web.service" ||
		!strings.Contains(ev.Failing[0].Reason, "restarted") || len(ev.Failing[0].Log) == 0 ||
		ev.Rollback == nil || !ev.Rollback.Passed || ev.Rollback.Generation == "" || !strings.Contains(ev.Error, "rolled back") {
		t.Fatalf("rolled back: started %d, event %+v", len(started), ev)
	}

	// Invalid specs: failed, nothing started.
	started = nil
	r = run(h.request(writeSpecs(t, `{"apiVersion":"v1","type":"container","name":"x","bogus":1}`)))
	ev, ok = r.out.Event()
	if r.out.Verdict != verdict.Invalid || !ok || ev.Event != notify.Failed || !strings.Contains(ev.Error, "invalid") || len(started) != 0 {
		t.Fatalf("invalid specs: %v, event %+v %v, started %d", r.err, ev, ok, len(started))
	}

	// A start that fails: failed, with the unit's action.
	h2 := newHost(t)
	h2.failStartOn["web.service"] = "registry.example/web:1"
	r = h2.run(t, h2.request(writeSpecs(t, good)))
	ev, ok = r.out.Event()
	if !ok || ev.Event != notify.Failed || len(ev.Failing) == 0 || !strings.Contains(ev.Failing[0].Unit, "web.service") {
		t.Fatalf("failed start: %v, event %+v", r.err, ev)
	}
}

// TestEventCarriesNoSecret: a container that prints its own secret into
// its log: the lines the run reads back — printed, and in its event — show
// "(secret)" instead.
func TestEventCarriesNoSecret(t *testing.T) {
	h := newHost(t)
	recipient := hostKey(t, h)
	h.failStartOn["web.service"] = "registry.example/web:1"
	h.logs["web.service"] = []string{"connecting with password " + dbPassword, "token=" + apiToken}
	r := h.run(t, h.request(writeSpecs(t, secretStack(t, sopsEncrypt(t, shopDoc(dbPassword), recipient)))))
	if r.err == nil {
		t.Fatal("the start did not fail")
	}
	ev, ok := r.out.Event()
	doc, _ := json.Marshal(ev)
	if !ok || !strings.Contains(string(doc), "connecting with password (secret)") {
		t.Fatalf("event %s", doc)
	}
	noPlaintext(t, "the event", string(doc), dbPassword, apiToken)
	noPlaintext(t, "stdout", r.stdout, dbPassword, apiToken)
	noPlaintext(t, "stderr", r.stderr, dbPassword, apiToken)
}

// TestDriftUnits: a plan's differing units by kind.
func TestDriftUnits(t *testing.T) {
	h := newHost(t)
	specs := writeSpecs(t, good)
	h.apply(t, specs)
	// A hand edit of web's unit, and job's container gone.
	unitFile := filepath.Join(h.root, "etc/containers/systemd/web.container")
	b, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(unitFile, append(b, []byte("\n[Service]\nTimeoutStartSec=99\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	delete(h.active, "api.service")
	req := h.request(specs)
	req.Diff = true
	r := h.run(t, req)
	got := map[string]string{}
	for _, d := range view.DriftUnits(r.out.Plan) {
		got[d.Unit] = d.Kind + "/" + d.Effect
	}
	if got["web.container"] != "drift/drift" || got["api.container"] != "start/start" || len(got) != 2 {
		t.Fatalf("drift units %v\n%s", got, r.stdout)
	}
}
