package deploy

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/pkg/generation"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// good is stack with web at image 1; bad moves web to an image that
// crash-loops.
var (
	good = stack
	bad  = strings.Replace(stack, "registry.example/web:1", "registry.example/web:2", 1)
)

// TestGateRecordsAGeneration: a run whose containers come up and stay up
// records a generation with the image each container runs.
func TestGateRecordsAGeneration(t *testing.T) {
	h := newHost(t)
	h.imageOf["web@registry.example/web:1"] = "sha256:web1"
	r := h.apply(t, writeSpecs(t, good))
	if r.out.Gate == nil || !r.out.Gate.Passed() || len(r.out.Gate.Units) != 3 {
		t.Fatalf("gate = %+v", r.out.Gate)
	}
	if !r.view.has("Gate passed 3") {
		t.Errorf("stdout lacks the gate's line:\n%s", r.stdout)
	}
	g, err := generation.Open(h.root).Latest()
	if err != nil || g == nil || g.Run != r.out.RunID || g.Images["web.container"].ID != "sha256:web1" || string(g.Input) == "" {
		t.Fatalf("generation = %+v, %v", g, err)
	}
	if last := h.last(t); last.Result() != runlog.ResultOK {
		t.Errorf("journal result %s", last.Result())
	}
}

// TestCrashLoopRollsBack: web's new image exits at once; the gate catches
// the restarts, and the last generation runs again with web pinned to the
// image it ran, its unit file exactly the old specs'.
func TestCrashLoopRollsBack(t *testing.T) {
	h := newHost(t)
	h.imageOf["web@registry.example/web:1"] = "sha256:web1"
	first := h.apply(t, writeSpecs(t, good))
	oldUnit := h.file(t, layout.UnitPath("web.container"))

	h.crashOn["web.service"] = "web:2"
	h.logs["web.service"] = []string{"web: exec /bin/web: no such file or directory"}
	req := h.request(writeSpecs(t, bad))
	req.Soak = 300 * 1e6
	r := h.run(t, req)
	if r.out.Verdict != verdict.RolledBack {
		t.Fatalf("err = %v, want rolled back\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	if r.out.Gate == nil || len(r.out.Gate.Failures) != 1 || r.out.Gate.Failures[0].Service != "web.service" ||
		!strings.Contains(r.out.Gate.Failures[0].Reason, "restarted") || len(r.out.Gate.Failures[0].Log) == 0 {
		t.Fatalf("gate = %+v", r.out.Gate)
	}
	if rb := r.out.Rollback; rb == nil || !rb.Passed || rb.Generation != first.out.RunID || rb.Of != r.out.RunID {
		t.Fatalf("rollback = %+v", rb)
	}
	for _, want := range []string{"Health gate FAILED", "web.service: restarted", "| web: exec /bin/web", "ROLLED BACK"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	// The host: the old unit, pinned to the old image by its drop-in.
	if got := h.file(t, layout.UnitPath("web.container")); got != oldUnit {
		t.Errorf("web.container after the rollback:\n%s\nwant the old one:\n%s", got, oldUnit)
	}
	pin, ok := render.ParsePin([]byte(h.file(t, layout.PinPath("web.container"))))
	if !ok || pin.ImageID != "sha256:web1" || pin.Run != first.out.RunID {
		t.Errorf("pin = %+v %v", pin, ok)
	}
	// The journal: the bad run failed, the rollback rolled back.
	runs := h.runs(t)
	if len(runs) != 3 || runs[1].Result() != runlog.ResultFailed || runs[2].Result() != runlog.ResultRolledBack ||
		runs[2].Intent.Rollback != first.out.RunID || runs[2].Intent.RollbackOf != runs[1].ID() ||
		!strings.Contains(runs[1].End.Error, "web.service restarted") {
		t.Fatalf("journal: %v", summarize(runs))
	}
	// A fresh plan of the old specs is empty: the pin stays with them.
	dr := h.request(writeSpecs(t, good))
	dr.Diff = true
	if d := h.run(t, dr); d.err != nil || !d.out.Plan.Empty() {
		t.Fatalf("--diff of the old specs: %v\n%s", d.err, d.stdout)
	}
	// The next other input removes the pin and restarts web.
	h.reset()
	next := strings.Replace(stack, "registry.example/web:1", "registry.example/web:3", 1)
	if r := h.apply(t, writeSpecs(t, next)); h.exists(layout.PinPath("web.container")) || !contains(h.Calls("stop"), "stop web.service") {
		t.Errorf("after new specs: pin still there or web not restarted; calls %q\n%s", h.Calls(), r.stdout)
	}
}

// TestGateWithoutRollback: --rollback=never, or no generation yet, leaves
// the host as the run left it and says the gate failed.
func TestGateWithoutRollback(t *testing.T) {
	t.Run("never", func(t *testing.T) {
		h := newHost(t)
		h.apply(t, writeSpecs(t, good))
		h.crashOn["web.service"] = "web:2"
		req := h.request(writeSpecs(t, bad))
		req.Rollback = RollbackNever
		r := h.run(t, req)
		if r.out.Verdict != verdict.GateFailed || r.out.Rollback != nil || h.exists(layout.PinPath("web.container")) {
			t.Fatalf("err %v rollback %+v", r.err, r.out.Rollback)
		}
		if !strings.Contains(h.file(t, layout.UnitPath("web.container")), "web:2") {
			t.Errorf("the failed run's unit was not left in place")
		}
	})
	t.Run("no generation", func(t *testing.T) {
		h := newHost(t)
		h.crashOn["web.service"] = "web:1"
		r := h.run(t, h.request(writeSpecs(t, good)))
		if r.out.Verdict != verdict.GateFailed || !strings.Contains(r.err.Error(), "no earlier generation") {
			t.Fatalf("err = %v", r.err)
		}
		if g, _ := generation.Open(h.root).Latest(); g != nil {
			t.Errorf("a failed run recorded generation %s", g.Run)
		}
	})
}

// TestFailedStartRollsBack: a container that does not even start is a
// failed gate too, and rolled back.
func TestFailedStartRollsBack(t *testing.T) {
	h := newHost(t)
	h.apply(t, writeSpecs(t, good))
	h.failStartOn["web.service"] = "web:2"
	r := h.run(t, h.request(writeSpecs(t, bad)))
	if r.out.Verdict != verdict.RolledBack || r.out.Gate == nil || !strings.Contains(r.out.Gate.Failures[0].Reason, "did not start") {
		t.Fatalf("err %v gate %+v\n%s", r.err, r.out.Gate, r.stdout)
	}
	if !strings.Contains(h.file(t, layout.UnitPath("web.container")), "web:1") {
		t.Errorf("web.container not back at web:1")
	}
}

// TestUnhealthyAndOneshot: a health check that reports unhealthy, and a
// oneshot that exits non-zero, fail the gate.
func TestUnhealthyAndOneshot(t *testing.T) {
	h := newHost(t)
	withHealth := strings.Replace(stack, `"Image":"registry.example/api:1"`, `"Image":"registry.example/api:1","HealthCmd":"/bin/true"`, 1)
	h.apply(t, writeSpecs(t, withHealth))
	h.unhealthyOn["api"] = "api:2"
	r := h.run(t, h.request(writeSpecs(t, strings.Replace(withHealth, "api:1", "api:2", 1))))
	if r.out.Verdict != verdict.RolledBack || r.out.Gate.Failures[0].Service != "api.service" || !strings.Contains(r.out.Gate.Failures[0].Reason, "unhealthy") {
		t.Fatalf("unhealthy: err %v gate %+v", r.err, r.out.Gate)
	}
}

// TestRollbackByHand: syslet rollback returns to the generation before
// the host's current one, with the plan shown first; --diff changes
// nothing.
func TestRollbackByHand(t *testing.T) {
	h := newHost(t)
	h.imageOf["web@registry.example/web:1"] = "sha256:web1"
	first := h.apply(t, writeSpecs(t, good))
	h.imageOf["web@registry.example/web:3"] = "sha256:web3"
	h.apply(t, writeSpecs(t, strings.Replace(stack, "web:1", "web:3", 1)))

	req := h.request("")
	req.Generation, req.Diff = "previous", true
	if d := h.run(t, req); d.err != nil || !d.view.has("RollingBack "+first.out.RunID+` of ""`) || h.exists(layout.PinPath("web.container")) {
		t.Fatalf("rollback --diff: %v\n%s", d.err, d.stdout)
	}
	req.Diff = false
	r := h.run(t, req)
	if r.err != nil {
		t.Fatalf("rollback: %v\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	if !strings.Contains(h.file(t, layout.UnitPath("web.container")), "web:1") {
		t.Errorf("web.container not back at web:1")
	}
	if pin, _ := render.ParsePin([]byte(h.file(t, layout.PinPath("web.container")))); pin.ImageID != "sha256:web1" {
		t.Errorf("pin %+v", pin)
	}
	if last := h.last(t); last.Result() != runlog.ResultRolledBack || last.Intent.Rollback != first.out.RunID {
		t.Errorf("journal: %s rollback of %s", last.Result(), last.Intent.Rollback)
	}
	if stored := h.file(t, layout.StoredSpecs); !strings.Contains(stored, "web:1") {
		t.Errorf("the stored specs are not the generation's: %q", stored)
	}
	// A plain run then reads them, and its header says who stored them
	// truly: not only an apply from stdin does.
	plain := h.request("")
	plain.Diff = true
	d := h.run(t, plain)
	if want := layout.Under(h.root, layout.StoredSpecs) + " (stored by the last apply from stdin or rollback, at "; d.err != nil || !strings.Contains(d.stdout, want) {
		t.Errorf("header of a plain run after a rollback: %v, want %q:\n%s", d.err, want, d.stdout)
	}
}

// TestKilledRollbackIsFinished: a rollback interrupted after it wrote
// the units is finished by the next plain run, pins and all.
func TestKilledRollbackIsFinished(t *testing.T) {
	h := newHost(t)
	h.imageOf["web@registry.example/web:1"] = "sha256:web1"
	h.apply(t, writeSpecs(t, good))
	h.crashOn["web.service"] = "web:2"
	req := h.request(writeSpecs(t, bad))
	stop := make(chan struct{})
	req.Stop = stop
	req.AfterStep = func(step int, pass string) {
		// Stop the rollback, not the run it rolls back, after step 4.
		if step == 4 && pass == PassRollback {
			close(stop)
		}
	}
	r := h.run(t, req)
	if r.out.Verdict != verdict.RollbackFailed && r.out.Verdict != verdict.Interrupted {
		t.Fatalf("err = %v\n%s", r.err, r.stdout)
	}
	last := h.last(t)
	if last.Intent.Rollback == "" || last.Result() != runlog.ResultInterrupted {
		t.Fatalf("last run %s rollback %q", last.Result(), last.Intent.Rollback)
	}
	// The next plain run applies the stored generation and finishes it.
	r2 := h.run(t, h.request(""))
	if r2.err != nil {
		t.Fatalf("plain run: %v\n%s\n%s", r2.err, r2.stdout, r2.stderr)
	}
	if pin, _ := render.ParsePin([]byte(h.file(t, layout.PinPath("web.container")))); pin.ImageID != "sha256:web1" {
		t.Errorf("the plain run did not keep the pin: %+v", pin)
	}
	if !strings.Contains(h.file(t, layout.UnitPath("web.container")), "web:1") {
		t.Errorf("web.container not back at web:1")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func summarize(runs []*runlog.RunInfo) []string {
	var out []string
	for _, r := range runs {
		s := r.ID() + " " + r.Result()
		if r.End != nil && r.End.Error != "" {
			s += " (" + r.End.Error + ")"
		}
		out = append(out, s)
	}
	return out
}

// TestStoppedGateIsJudgedNext: a run stopped during its health gate (a
// SIGTERM after step 9) ends interrupted, and the next run, with nothing
// to change, holds its containers to the gate and records the generation.
func TestStoppedGateIsJudgedNext(t *testing.T) {
	h := newHost(t)
	specs := writeSpecs(t, good)
	req := h.request(specs)
	stop := make(chan struct{})
	req.Stop, req.Soak = stop, time.Second
	req.AfterStep = func(step int, _ string) {
		if step == 9 {
			close(stop)
		}
	}
	r := h.run(t, req)
	if r.out.Verdict != verdict.Interrupted || h.last(t).Result() != runlog.ResultInterrupted {
		t.Fatalf("err %v, journal %s", r.err, h.last(t).Result())
	}
	if g, _ := generation.Open(h.root).Latest(); g != nil {
		t.Fatalf("an unjudged run recorded generation %s", g.Run)
	}
	next := h.apply(t, specs)
	if !next.view.has("JudgingEarlier") || next.out.Verdict != verdict.Judged || next.out.Gate == nil || len(next.out.Gate.Units) != 3 || !next.out.Gate.Passed() {
		t.Fatalf("next run: gate %+v\n%s", next.out.Gate, next.stdout)
	}
	if g, _ := generation.Open(h.root).Latest(); g == nil || g.Run != next.out.RunID {
		t.Errorf("the judged run recorded no generation: %+v", g)
	}
	if last := h.last(t); last.Result() != runlog.ResultOK {
		t.Errorf("journal: %s", last.Result())
	}
}

// TestRollbackThatChangedNothingSaysSo: the rollback after a failed gate
// stops before its first action (here its staging fails); the summary
// says the host is as the failed run left it, not merely that the
// rollback "did not restore a working host".
func TestRollbackThatChangedNothingSaysSo(t *testing.T) {
	h := newHost(t)
	h.apply(t, writeSpecs(t, good))
	h.crashOn["web.service"] = "web:2"
	stages := 0
	h.before = func(call string) {
		if call != "stage" {
			return
		}
		if stages++; stages == 2 { // the bad run's staging passes; the rollback's fails
			h.mu.Lock()
			h.fail["stage"] = errors.New("the generator refused the unit set")
			h.mu.Unlock()
		}
	}
	req := h.request(writeSpecs(t, bad))
	req.Soak = 300 * 1e6
	r := h.run(t, req)
	if r.out.Verdict != verdict.RollbackFailed {
		t.Fatalf("err = %v, want a failed rollback\n%s\n%s", r.err, r.stdout, r.stderr)
	}
	want := "ROLLBACK FAILED: run " + r.out.RunID + " failed its health gate (web.service "
	if !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "changed nothing, so the host is as run "+r.out.RunID+" left it: ") {
		t.Errorf("stdout lacks the untouched rollback's line:\n%s", r.stdout)
	}
	if !strings.Contains(h.file(t, layout.UnitPath("web.container")), "web:2") {
		t.Errorf("the failed run's unit was not left in place")
	}
}

// After a rollback, the next input that leaves web as the generation had
// it — its Image= resolving to the very image it was pinned to — removes
// the pin without restarting web: the input changed, not web. And once
// the stack is removed, no empty drop-in directory of the pin is left.
func TestPinOfTheSameImageGoesWithoutARestart(t *testing.T) {
	h := newHost(t)
	h.imageOf["web@registry.example/web:1"] = "sha256:web1"
	h.imageIDs["registry.example/web:1"] = "sha256:web1"
	h.apply(t, writeSpecs(t, good))
	h.crashOn["web.service"] = "web:2"
	req := h.request(writeSpecs(t, bad))
	req.Soak = 300 * 1e6
	if r := h.run(t, req); r.out.Verdict != verdict.RolledBack || !h.exists(layout.PinPath("web.container")) {
		t.Fatalf("no rollback with a pin: %v", r.err)
	}

	h.reset()
	other := strings.Replace(stack, "registry.example/api:1", "registry.example/api:2", 1)
	r := h.apply(t, writeSpecs(t, other))
	if h.exists(layout.PinPath("web.container")) || contains(h.Calls("stop"), "stop web.service") || contains(h.Calls("start"), "start web.service") {
		t.Errorf("web's pin not removed, or web restarted: calls %q", h.Calls())
	}
	for _, u := range r.out.Plan.Units {
		if u.FileName == "web.container" && (u.Effect != plan.EffectMetadata || !strings.Contains(strings.Join(u.Reasons, "; "), "the one it was pinned to")) {
			t.Errorf("web.container: %s %q", u.Effect, u.Reasons)
		}
	}

	empty := h.request(writeSpecs(t, "[]"))
	empty.AllowRemovals = true
	if r := h.run(t, empty); r.err != nil {
		t.Fatal(r.err)
	}
	if h.exists(layout.UnitDir + "/web.container.d") {
		t.Errorf("the pin's drop-in directory is left behind: %q", h.managedTrees(t))
	}
}

// What a failed run deleted is named as lost, but for a volume whose
// backup it took: that one is the rollback's to restore.
func TestLostByLeavesTheBackedUpToRestore(t *testing.T) {
	res := &executor.Result{
		Applied: []plan.Action{{Op: plan.OpDeleteVolume, Target: "data", Irreversible: true}, {Op: plan.OpDeleteVolume, Target: "cache", Irreversible: true}},
		Backups: []backup.Entry{{File: "r1_data.tar", Volume: "data"}, {File: "r1_kept.tar", Volume: "kept"}},
	}
	if got := lostBy(res); len(got) != 1 || got[0] != "volume cache (deleted by the failed run; irreversible)" {
		t.Errorf("lostBy = %q", got)
	}
	// kept's export did not lead to its delete (the delete failed): it
	// holds its data still.
	if got := backedUpDeletes(res); len(got) != 1 || got[0].File != "r1_data.tar" {
		t.Errorf("backedUpDeletes = %+v", got)
	}
}

// TestSignerIsRecorded: the signer of a checked commit lands in the run
// journal's intent and in the generation the run records.
func TestSignerIsRecorded(t *testing.T) {
	h := newHost(t)
	h.imageOf["web@registry.example/web:1"] = "sha256:web1"
	req := h.request(writeSpecs(t, good))
	req.Source = "git infra@0123"
	req.Signer = &commitsig.Signer{Principal: "alice@example.org", Fingerprint: "SHA256:abc", KeyType: "ssh-ed25519", Line: 1}
	if r := h.run(t, req); r.err != nil {
		t.Fatal(r.err)
	}
	if last := h.last(t); last.Intent.Signer == nil || *last.Intent.Signer != *req.Signer {
		t.Errorf("journal signer %+v", last.Intent.Signer)
	}
	if g, err := generation.Open(h.root).Latest(); err != nil || g == nil || g.Signer == nil || *g.Signer != *req.Signer {
		t.Fatalf("generation %+v, %v", g, err)
	}
}

// A rollback by hand fills each volume of the generation that a later run
// deleted from the first backup taken of it after the generation, but not
// one whose data a later import brought back (carried over, restored),
// nor a volume the generation does not declare.
func TestLostSinceAGeneration(t *testing.T) {
	entry := func(file, vol string) *backup.Entry { return &backup.Entry{File: file, Volume: vol} }
	ok := func(op plan.Op, vol string, b *backup.Entry) runlog.Record {
		return runlog.Record{Op: string(op), Target: vol, Result: runlog.ResultOK, Backup: b}
	}
	runs := []*runlog.RunInfo{
		{Intent: runlog.Record{Run: "r0"}, Actions: []runlog.Record{ok(plan.OpDeleteVolume, "data", entry("r0_data.tar", "data"))}},
		{Intent: runlog.Record{Run: "g"}},
		// data's spec left: gone, then deleted again after it came back empty.
		{Intent: runlog.Record{Run: "r1"}, Actions: []runlog.Record{ok(plan.OpDeleteVolume, "data", entry("r1_data.tar", "data")), ok(plan.OpDeleteVolume, "other", entry("r1_other.tar", "other"))}},
		{Intent: runlog.Record{Run: "r2"}, Actions: []runlog.Record{ok(plan.OpDeleteVolume, "data", entry("r2_data.tar", "data"))}},
		// logs recreated with its data carried over: live.
		{Intent: runlog.Record{Run: "r3"}, Actions: []runlog.Record{ok(plan.OpDeleteVolume, "logs", entry("r3_logs.tar", "logs")), ok(plan.OpImportVolume, "logs", entry("r3_logs.tar", "logs"))}},
	}
	out := load.Bytes("gen", []byte(`{"apiVersion":"v1","type":"volume","name":"data","unit":{}}
{"apiVersion":"v1","type":"volume","name":"logs","unit":{}}
`)).Out
	got := lostSince(runs, &generation.Generation{Run: "g"}, out)
	if len(got) != 1 || got[0].File != "r1_data.tar" {
		t.Errorf("lost since g: %+v, want r1_data.tar alone", got)
	}
}
