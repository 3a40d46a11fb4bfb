package push

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

// Saved plans through push: with Capture a host's stdout (its saved plan)
// is kept, not printed, and the summary is read from stderr; a Plan is
// written to stdin before the stream; a host that refuses its plan as
// stale is "stale", not "failed", and the table says so.
func TestRunSavedPlans(t *testing.T) {
	f := newFixture(t)
	const plan = `{"format":1,"plan":{}}` + "\n"
	saver := startServer(t, f.client.PublicKey(), func(s *execSession) int {
		fmt.Fprint(s.Stdout, plan)
		fmt.Fprintln(s.Stderr, "Plan: 1 to create, 0 to change; 3 actions (digest 5e7b12ab34cd).")
		report(s.Stderr, `{"verdict":"planned","exit":0,"planCounts":{"create":1,"actions":3}}`)
		return 0
	})
	var stdin []byte
	applier := startServer(t, f.client.PublicKey(), func(s *execSession) int {
		stdin = s.Stdin
		fmt.Fprintln(s.Stderr, "Saved plan is stale: the plan from stdin (made 2026-12-01T10:15:03Z on web2, digest 5e7b12ab34cd) no longer holds; nothing was changed. Since it was made:")
		fmt.Fprintln(s.Stderr, "  - unit web.service: active/running → inactive/dead")
		report(s.Stderr, `{"verdict":"refused","exit":1,"planCounts":{"create":1,"actions":3},"stale":["unit web.service: active/running → inactive/dead"]}`)
		return 1
	})
	failing := startServer(t, f.client.PublicKey(), func(s *execSession) int {
		fmt.Fprintln(s.Stderr, "syslet: not a valid saved plan")
		return 1
	})
	for _, s := range []*testServer{saver, applier, failing} {
		f.know(s.addr, s.hostKey.PublicKey())
	}

	var stdout, stderr bytes.Buffer
	o := f.options(nil, &stdout, &stderr)
	o.Command, o.Capture = "syslet --diff --stdin --out -", true
	res := Run(context.Background(), []Job{f.job(saver.addr, "web1")}, o)
	if r := res[0]; r.Ending.String() != "planned" || string(r.Output) != plan || r.Plan() != "1 to create; 3 actions" {
		t.Errorf("captured: %v output %q plan %q (err %v)", r.Ending, r.Output, r.Plan(), r.Err)
	}
	if strings.Contains(stdout.String(), `"format"`) || !strings.Contains(stderr.String(), "web1 | Plan: 1 to create") {
		t.Errorf("the saved plan was printed, or the human plan was not:\nstdout %s\nstderr %s", stdout.String(), stderr.String())
	}

	stdout.Reset()
	o = f.options(nil, &stdout, &stderr)
	o.Command = "syslet --plan - --stdin"
	jobs := []Job{f.job(applier.addr, "web2"), f.job(failing.addr, "web3")}
	for i := range jobs {
		jobs[i].Plan = []byte(plan)
	}
	res = Run(context.Background(), jobs, o)
	if want := plan + `{"apiVersion":"v1"}` + "\n"; string(stdin) != want {
		t.Errorf("stdin = %q, want the plan, then the stream: %q", stdin, want)
	}
	if r := res[0]; r.Ending.String() != "stale" || !strings.Contains(r.Err.Error(), "exited 1 (the host refused its saved plan") {
		t.Errorf("stale host: status %v, err %v", r.Ending, r.Err)
	}
	if r := res[1]; r.Ending.String() != "failed" {
		t.Errorf("failing host: status %v, err %v", r.Ending, r.Err)
	}
	var table bytes.Buffer
	WriteTable(&table, Report{Results: res, Batches: 1})
	for _, want := range []string{"web2  stale", "web3  failed", "web2: stale: ", "2 host(s): 1 failed, 1 stale (refused their saved plan; nothing changed there)"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
}
