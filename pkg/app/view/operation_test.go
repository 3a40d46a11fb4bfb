package view

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
)

// restartWeb is a plan that restarts one container, for the views to draw.
func restartWeb() *plan.Plan {
	return &plan.Plan{
		Units: []plan.UnitChange{{FileName: "web.container", Service: "web.service", Effect: plan.EffectRestart,
			Reasons: []string{"Image changed"}, Diff: "-Image=web:1\n+Image=web:2\n", Write: true}},
		Actions: []plan.Action{{Step: plan.StepStart, Op: plan.OpStart, Target: "web.service", Unit: "web.container"}},
	}
}

// With --output json, stdout holds the Outcome and nothing else; the plan
// and the story go to stderr, and no secret value is drawn anywhere.
func TestJSONLeavesStdoutToTheDocument(t *testing.T) {
	var stdout, stderr bytes.Buffer
	v := NewJSON(&stdout, &stderr)
	p := restartWeb()
	v.Plan(Against{Specs: 1, Sources: 1, Root: "/"}, p)
	v.SecretValues([]string{`  shop-db = "hunter2"`})
	v.Gate(&gate.Report{Units: []string{"web.service"}})
	if stdout.Len() != 0 {
		t.Fatalf("stdout written before the end:\n%s", stdout.String())
	}
	v.Done(&Outcome{Plan: p, Summary: "1 to change", Verdict: verdict.Applied})
	var doc map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc["summary"] != "1 to change" {
		t.Fatalf("stdout is not the Outcome: %v\n%s", err, stdout.String())
	}
	if !strings.Contains(stderr.String(), "Steps, in the order they run:") {
		t.Errorf("the plan is not on stderr:\n%s", stderr.String())
	}
	if strings.Contains(stdout.String()+stderr.String(), "hunter2") {
		t.Error("a secret value was drawn")
	}
}

// The log view writes facts as fields, one line per event, and never the
// plan's text or a diff: webhookd's log is read, not scraped.
func TestLogViewWritesFields(t *testing.T) {
	var b bytes.Buffer
	v := NewLog(zerolog.New(&b), nil)
	v.Plan(Against{Specs: 1, Sources: 1}, restartWeb())
	v.Gate(&gate.Report{Units: []string{"web.service"}, Failures: []gate.Failure{{Service: "web.service", Reason: "restarted 5 time(s)", Log: []string{"web: exit 1"}}}})
	v.Done(&Outcome{RunID: "r1", Summary: "rolled back", Verdict: verdict.RolledBack})
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		lines = append(lines, m)
	}
	if len(lines) != 4 {
		t.Fatalf("%d lines, want the plan, its unit, the gate's failure and the end:\n%s", len(lines), b.String())
	}
	if lines[0]["change"] != 1.0 || lines[1]["unit"] != "web.container" || lines[1]["effect"] != "restart" {
		t.Errorf("the plan's lines: %v %v", lines[0], lines[1])
	}
	if lines[2]["unit"] != "web.service" || lines[2]["level"] != "error" {
		t.Errorf("the gate's line: %v", lines[2])
	}
	if lines[3]["verdict"] != "rolled back" || lines[3]["run"] != "r1" || lines[3]["level"] != "error" {
		t.Errorf("the end: %v", lines[3])
	}
	if strings.Contains(b.String(), "+Image=web:2") || strings.Contains(b.String(), "Steps, in the order") {
		t.Errorf("the log holds the plan's text:\n%s", b.String())
	}
}

// A drift check logs at debug level and leaves its plan out: it runs every
// interval and its plan is not news.
func TestCheckLogIsQuiet(t *testing.T) {
	var b bytes.Buffer
	v := NewCheckLog(zerolog.New(&b).Level(zerolog.InfoLevel))
	v.Plan(Against{}, restartWeb())
	v.Warning("a warning")
	if b.Len() != 0 {
		t.Errorf("a check logged at info level:\n%s", b.String())
	}
}
