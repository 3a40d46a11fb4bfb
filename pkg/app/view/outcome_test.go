package view

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
)

// The document of a run opens with its verdict (machine name and exit
// code), says of each action what became of it, the rollback's too, and
// gives the rollback's last word as the person read it; it reads back to
// the same verdict.
func TestOutcomeDocumentCarriesTheVerdict(t *testing.T) {
	start := plan.Action{Step: 9, Op: plan.OpStart, Target: "web.service"}
	stop := plan.Action{Step: 2, Op: plan.OpStop, Target: "web.service"}
	o := &Outcome{RunID: "R1", Source: "specs", Summary: "rolled back to run R0: web.service down", Verdict: verdict.RolledBack,
		Result: &executor.Result{Applied: []plan.Action{stop, start}, Failed: []executor.Failure{}, NotReached: []plan.Action{}},
		Rollback: &RollbackReport{Run: "R2", Generation: "R0", Of: "R1", Why: "web.service down", Passed: true,
			Result: &executor.Result{Applied: []plan.Action{start}, Failed: []executor.Failure{{Action: stop, Error: "timed out"}}, NotReached: []plan.Action{start}}}}
	var b bytes.Buffer
	if err := WriteJSON(&b, o); err != nil {
		t.Fatal(err)
	}
	doc := b.String()
	if !strings.HasPrefix(doc, "{\n  \"verdict\": \"rolled-back\",\n  \"exit\": 4,\n  \"run\": \"R1\",") {
		t.Errorf("the document does not open with the verdict:\n%s", doc)
	}
	for _, want := range []string{
		`"applied": [`, `"notReached": [`,
		`"failed": [
        {
          "action": {
            "step": 2,
            "op": "stop",
            "target": "web.service"
          },
          "error": "timed out"
        }`,
		`"why": "web.service down"`,
		`"message": "run R1 failed its health gate (web.service down); run R2 applied the generation of run R0 again, and it passed the gate"`,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the document lacks %s:\n%s", want, doc)
		}
	}

	var back Outcome
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || back.Verdict != verdict.RolledBack || back.RunID != "R1" || back.Rollback.Why != "web.service down" {
		t.Errorf("read back: %v %+v", err, back)
	}

	// Without a pointer (a value Outcome) the document is the same.
	v, _ := json.Marshal(*o)
	p, _ := json.Marshal(o)
	if !bytes.Equal(v, p) {
		t.Errorf("an Outcome value marshals otherwise than a pointer:\n%s\n%s", v, p)
	}
}

// The rollback's message is the sentence of its last word, in each of its
// three forms, with strings as they are (a terminal escapes them).
func TestRollbackMessageIsItsLastWord(t *testing.T) {
	for _, rep := range []RollbackReport{
		{Run: "R2", Generation: "R0", Of: "R1", Why: "web.service\x1b[2J down", Passed: true, Result: &executor.Result{Applied: []plan.Action{{}}}},
		{Run: "R2", Generation: "R0", Of: "R1", Why: "web.service down", Error: "no room", Result: &executor.Result{Failed: []executor.Failure{{}}}},
		{Run: "R2", Generation: "R0", Of: "R1", Why: "web.service down", Error: "the specs of generation R0 no longer validate (1 error(s))"},
	} {
		var text bytes.Buffer
		told := rep.told()
		RollbackSummary(&text, told)
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Message string }
		json.Unmarshal(b, &got)
		_, said := told.words(func(s string) string { return s })
		if got.Message != said {
			t.Errorf("message %q; want %q", got.Message, said)
		}
		if (rep.Error != "") != (told.Err != nil) || told.Untouched != (rep.Result == nil) {
			t.Errorf("told %+v from %+v", told, rep)
		}
		head, esc := told.words(func(s string) string { return strings.ReplaceAll(s, "\x1b", `\x1b`) })
		if !strings.Contains(text.String(), head+": "+esc) {
			t.Errorf("the last word\n%s\ndoes not say %q", text.String(), head+": "+esc)
		}
	}
}
