package push

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/verdict"
)

// TestEveryEndingHasOneRow holds push's table whole: every verdict of
// pkg/verdict and every ending of push's own has exactly one row, with a
// word; a verdict's row is OK exactly when the verdict is no failure.
func TestEveryEndingHasOneRow(t *testing.T) {
	seenV, seenOwn := map[verdict.Verdict]int{}, map[Own]int{}
	for _, r := range endings {
		if (r.verdict == 0) == (r.own == 0) || r.word == "" {
			t.Errorf("row %+v: want a verdict or an ending of push's own, and a word", r)
		}
		if r.verdict != 0 {
			seenV[r.verdict]++
			if r.ok == r.verdict.Failed() {
				t.Errorf("%s: ok %v, yet the verdict is a failure: %v", r.verdict.ID(), r.ok, r.verdict.Failed())
			}
		} else {
			seenOwn[r.own]++
		}
	}
	for v := verdict.Verdict(1); !strings.HasPrefix(v.String(), "verdict("); v++ {
		if seenV[v] != 1 {
			t.Errorf("verdict %s has %d row(s); want 1", v.ID(), seenV[v])
		}
	}
	for o := Exited; o <= Stale; o++ {
		if seenOwn[o] != 1 {
			t.Errorf("ending %d of push's own has %d row(s); want 1", o, seenOwn[o])
		}
	}
	// Endings that share a word sit together, so the count line lists
	// each word once, in the table's order.
	last := map[string]int{}
	for i, r := range endings {
		if j, ok := last[r.word]; ok && j != i-1 {
			t.Errorf("%q appears apart in the table (rows %d and %d)", r.word, j, i)
		}
		last[r.word] = i
	}
}

// What the exit code of a command that reported no verdict means: its
// own meaning, or that of the verdicts syslet exits so with.
func TestExitHint(t *testing.T) {
	for code, want := range map[int]string{0: "", 1: "", 2: "found the specs invalid", 3: "changes pending", 4: "rolled back to its last good generation",
		5: "so did the rollback", 64: "is it older than this one?", 127: "is syslet installed", 130: "interrupted"} {
		if got := exitHint(code); !strings.Contains(got, want) || (want == "") != (got == "") {
			t.Errorf("exitHint(%d) = %q; want %q", code, got, want)
		}
	}
}

// push's exit code: a host whose rollback failed, then an interrupt,
// then failures that were all rollbacks (4, as a local apply exits, for
// one host as for a rollout), then any other failure.
func TestReportExit(t *testing.T) {
	res := func(es ...Ending) []Result {
		var r []Result
		for _, e := range es {
			r = append(r, Result{Ending: e})
		}
		return r
	}
	v := func(v verdict.Verdict) Ending { return Ending{Verdict: v} }
	own := func(o Own) Ending { return Ending{Own: o} }
	stop := &Stop{Batch: 1, Host: "web1", Outcome: v(verdict.RolledBack)}
	for _, tt := range []struct {
		name        string
		rep         Report
		interrupted bool
		want        int
	}{
		{"all applied", Report{Results: res(v(verdict.Applied), v(verdict.NoChanges))}, false, 0},
		{"planned", Report{Results: res(v(verdict.Planned), Ending{Verdict: verdict.Planned, Nothing: true})}, false, 0},
		{"not syslet, exited 0", Report{Results: res(own(Exited))}, false, 0},
		{"one host rolled back", Report{Results: res(v(verdict.RolledBack))}, false, 4},
		{"canary rolled back, rest not reached", Report{Results: res(v(verdict.RolledBack), own(NotReached)), Stop: stop}, false, 4},
		{"rolled back beside an applied host", Report{Results: res(v(verdict.RolledBack), v(verdict.Applied))}, false, 4},
		{"rolled back and another failed", Report{Results: res(v(verdict.RolledBack), own(Unreachable), own(NotReached)), Stop: stop}, false, 1},
		{"rolled back, then fell over after the pause", Report{Results: res(Ending{Verdict: verdict.RolledBack, Own: Broke})}, false, 1},
		{"a rollback failed", Report{Results: res(v(verdict.RollbackFailed), own(NotReached)), Stop: stop}, true, 5},
		{"interrupted", Report{Results: res(v(verdict.Applied), own(NotReached)), Stop: &Stop{Interrupted: true}}, true, 130},
		{"failed", Report{Results: res(v(verdict.Failed), v(verdict.Applied))}, false, 1},
		{"gate failed, no rollback", Report{Results: res(v(verdict.GateFailed))}, false, 1},
		{"stale", Report{Results: res(Ending{Verdict: verdict.Refused, Own: Stale})}, false, 1},
		{"host key refused", Report{Results: res(own(KeyRefused))}, false, 1},
	} {
		if got := tt.rep.Exit(tt.interrupted); got != tt.want {
			t.Errorf("%s: exit %d; want %d", tt.name, got, tt.want)
		}
	}
}

// A host's ending, plan and runs are read from the record of its
// document, never from its text: the same hosts worded otherwise — every
// verdict's name as a person reads it, the plan and summary lines, the
// "ROLLED BACK:" line, the stale plan's refusal changed — end the same,
// row for row, and a host whose text claims one ending and whose record
// says another ends as its record says.
func TestEndingsAreReadFromTheRecordNotTheText(t *testing.T) {
	const (
		planned  = `{"verdict":"planned","exit":0,"planCounts":{"create":1,"unchanged":2,"actions":3}}`
		nothing  = `{"verdict":"planned","exit":0,"planCounts":{"unchanged":3,"drift":1,"actions":0}}`
		noChange = `{"verdict":"no-changes","exit":0,"run":"R5","planCounts":{"unchanged":3,"actions":0}}`
		gate     = `{"verdict":"gate-failed","exit":1,"run":"R6","planCounts":{"change":1,"actions":2},"result":{"applied":[{},{}],"failed":[],"notReached":[]},"error":"the health gate failed: app.service down"}`
		failed   = `{"verdict":"rollback-failed","exit":5,"run":"R7","planCounts":{"change":1,"actions":2},"result":{"applied":[{}],"failed":[{}],"notReached":[]},` +
			`"rollback":{"run":"R8","message":"run R7 failed its health gate (app.service down), and the rollback to run R0 (run R8) did not restore a working host: no"}}`
		stale   = `{"verdict":"refused","exit":1,"planCounts":{"create":1,"actions":3},"stale":["unit web.service: active/running → inactive/dead"]}`
		invalid = `{"verdict":"invalid","exit":2,"summary":"1 error(s) in the specs; nothing was changed"}`
		stopped = `{"verdict":"interrupted","exit":130,"run":"R9","planCounts":{"create":2,"actions":4},"result":{"applied":[{}],"failed":[],"notReached":[{},{},{}],"interrupted":true}}`
	)
	type host struct {
		name, doc string
		code      int
		// syslet's words, and the same ending worded otherwise.
		said, reworded []string
	}
	hosts := []host{
		{"applied", appliedDoc, 0, appliedLines, []string{"Tally — change 1, keep 3 (4 steps)", "Now doing run 20261201T1015-1", "Done: 4 ok, none failed", "APPLIED"}},
		{"rolled-back", rolledBackDoc, 4, rolledBackLines, []string{"Tally — change 1", "Now doing run 20261201T1015-1", "Gate said no", "Back on the last good generation — reverted, as a person would say"}},
		{"planned", planned, 0, []string{"Plan: 1 to create, 0 to change, 0 to reload, 0 metadata-only, 0 to remove, 0 to start, 0 to stop, 2 unchanged; 3 actions (digest 5e7b792e4a17)."}, []string{"PLANNED: one unit to make"}},
		{"nothing-planned", nothing, 0, []string{"No changes detected. The host differs from the specs only where 1 unit(s) were edited by hand, which an apply keeps (drift); --force replaces them."}, []string{"Plan: 9 to create; 9 actions (the words of another ending)"}},
		{"no-changes", noChange, 0, []string{"No changes detected. The host matches the specs."}, []string{"Summary: 3 applied, 0 failed, 0 not reached (what an apply would say)"}},
		{"gate-failed", gate, 1, []string{"Health gate FAILED after 3s:", "  app.service: down", "Not rolling back (--rollback=never): the host stays as this run left it."}, []string{"The gate — failed the health gate, in a person's words — and no way back"}},
		{"rollback-failed", failed, 5, []string{"ROLLBACK FAILED: run R7 failed its health gate (app.service down), and the rollback to run R0 (run R8) did not restore a working host: no"}, []string{"ROLLED BACK: all is well (a line that lies)"}},
		{"stale", stale, 1, []string{"Saved plan is stale: the plan from stdin no longer holds; nothing was changed. Since it was made:", "  - unit web.service: active/running → inactive/dead"}, []string{"That plan has gone off; nothing changed"}},
		{"invalid", invalid, 2, []string{"syslet: 1 error(s) in the specs"}, []string{"These specs do not read"}},
		{"interrupted", stopped, 130, []string{"Summary — interrupted: 1 applied, 0 failed, 3 not reached (1s, run R9)"}, []string{"Stopped half-way"}},
	}
	want := map[string]struct {
		word, verdict, plan, run, rollback, reason string
	}{
		"applied":         {"applied", "applied", "1 to change, 3 unchanged; 4 actions; 4 applied, 0 failed, 0 not reached", "20261201T1015-1", "", ""},
		"rolled-back":     {"rolled back", "rolled-back", "1 to change, 3 unchanged; 4 actions; 4 applied, 0 failed, 0 not reached", "20261201T1015-1", "20261201T1015-2", "run 20261201T1015-1 failed its health gate (app.service: restarted 5 time(s) by Restart= before it was up); run 20261201T1015-2 applied the generation of run 20261201T1015-0 again, and it passed the gate"},
		"planned":         {"planned", "planned", "1 to create, 2 unchanged; 3 actions", "", "", ""},
		"nothing-planned": {"unchanged", "planned", "no changes", "", "", ""},
		"no-changes":      {"unchanged", "no-changes", "no changes", "R5", "", ""},
		"gate-failed":     {"failed", "gate-failed", "1 to change; 2 actions; 2 applied, 0 failed, 0 not reached", "R6", "", `"syslet --stdin" exited 1`},
		"rollback-failed": {"rollback failed", "rollback-failed", "1 to change; 2 actions; 1 applied, 1 failed, 0 not reached", "R7", "R8", "run R7 failed its health gate (app.service down), and the rollback to run R0 (run R8) did not restore a working host: no"},
		"stale":           {"stale", "refused", "", "", "", `"syslet --stdin" exited 1 (the host refused its saved plan`},
		"invalid":         {"failed", "invalid", "", "", "", `"syslet --stdin" exited 2 (the host's syslet found the specs invalid)`},
		"interrupted":     {"failed", "interrupted", "2 to create; 4 actions; 1 applied, 0 failed, 3 not reached", "R9", "", `"syslet --stdin" exited 130 (interrupted; run the push again to resume)`},
	}

	f := newFixture(t)
	run := func(reworded bool) (Report, string) {
		var jobs []Job
		for _, h := range hosts {
			lines := h.said
			if reworded {
				lines = h.reworded
			}
			srv := startServer(t, f.client.PublicKey(), func(s *execSession) int {
				for _, l := range lines {
					fmt.Fprintln(s.Stdout, l)
				}
				report(s.Stderr, h.doc)
				return h.code
			})
			f.know(srv.addr, srv.hostKey.PublicKey())
			jobs = append(jobs, f.job(srv.addr, h.name))
		}
		o := f.rolloutOptions(nil)
		rep := Rollout(context.Background(), jobs, o, Strategy{})
		for i := range rep.Results {
			rep.Results[i].Duration = 0
		}
		var table bytes.Buffer
		WriteTable(&table, rep)
		return rep, table.String()
	}
	said, saidTable := run(false)
	reworded, rewordedTable := run(true)
	for i, h := range hosts {
		w := want[h.name]
		for _, rep := range []Report{said, reworded} {
			r := rep.Results[i]
			run, back := r.Runs()
			if r.Ending.String() != w.word || r.Ending.Verdict.ID() != w.verdict || r.Plan() != w.plan || run != w.run || back != w.rollback || !strings.HasPrefix(r.Reason(), w.reason) {
				t.Errorf("%s: %s (%s), plan %q, runs %q %q, reason %q\nwant %s (%s), plan %q, runs %q %q, reason %q",
					h.name, r.Ending, r.Ending.Verdict.ID(), r.Plan(), run, back, r.Reason(), w.word, w.verdict, w.plan, w.run, w.rollback, w.reason)
			}
		}
	}
	if saidTable != rewordedTable {
		t.Errorf("the table changed with the hosts' words:\n%s\nreworded:\n%s", saidTable, rewordedTable)
	}
	if !strings.HasSuffix(saidTable, "10 host(s): 1 applied, 2 unchanged, 1 planned, 3 failed, 1 rolled back, 1 rollback failed, 1 stale (refused their saved plan; nothing changed there)\n") {
		t.Errorf("table:\n%s", saidTable)
	}
	if said.Exit(false) != 5 || reworded.Exit(false) != 5 {
		t.Errorf("exit %d, reworded %d; want 5 (a rollback failed)", said.Exit(false), reworded.Exit(false))
	}
}

// TestOffSpecsIsReadFromTheDocument: after a pause, whether a host still
// matches its specs is read from its plan's document, whatever its text
// says: a plan that reports no tally cannot say the host matches.
func TestOffSpecsIsReadFromTheDocument(t *testing.T) {
	for _, c := range []struct{ stderr, want string }{
		{"No changes detected.\n\x1e" + `{"verdict":"planned","exit":0,"planCounts":{"unchanged":4,"actions":0}}` + "\n", ""},
		{"No changes detected.\n\x1e" + `{"verdict":"planned","exit":0,"planCounts":{"change":1,"unchanged":3,"actions":2}}` + "\n", "1 to change, 3 unchanged; 2 actions"},
		{"Plan: 1 to change\n\x1e" + `{"verdict":"planned","exit":0,"planCounts":{"unchanged":3,"drift":1,"actions":0}}` + "\n", "1 unit(s) edited by hand (drift, which an apply keeps; --force replaces them)"},
		{"No changes detected. The host matches the specs.\n", "its plan reported no tally (is the host's syslet older than this one?)"},
	} {
		if got := offSpecs([]byte(c.stderr)); got != c.want {
			t.Errorf("%q: off specs %q; want %q", c.stderr, got, c.want)
		}
	}
}
