package verdict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/runlog"
)

// TestEveryVerdictHasEveryMapping holds the table whole: each verdict has
// a name, an exit code, and a webhookd result, and its journal result,
// notification kind and webhookd stage are ones their consumers know.
func TestEveryVerdictHasEveryMapping(t *testing.T) {
	journal := []string{"", runlog.ResultOK, runlog.ResultFailed, runlog.ResultInterrupted, runlog.ResultNoChanges, runlog.ResultRefused, runlog.ResultRolledBack}
	kinds := append([]notify.Kind{""}, notify.Kinds...)
	exits := []int{ExitOK, ExitError, ExitInvalid, ExitRolledBack, ExitRollbackFailed, ExitInterrupted}
	names, ids := map[string]bool{}, map[string]bool{}
	for _, v := range all() {
		e := table[v]
		if !regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`).MatchString(e.id) || ids[e.id] {
			t.Errorf("verdict %d: id %q is not a unique lower-case-with-dashes name", v, e.id)
		}
		ids[e.id] = true
		if back, err := Parse(e.id); err != nil || back != v {
			t.Errorf("Parse(%q) = %v, %v; want %v", e.id, back, err, v)
		}
		if e.name == "" || names[e.name] {
			t.Errorf("verdict %d: name %q is missing or not unique", v, e.name)
		}
		names[e.name] = true
		if !slices.Contains(exits, e.exit) {
			t.Errorf("%s: exit code %d is not a documented one", v, e.exit)
		}
		if !slices.Contains(journal, e.journal) {
			t.Errorf("%s: journal result %q is not the journal's", v, e.journal)
		}
		if !slices.Contains(kinds, e.notify) || e.notify == notify.Started || e.notify == notify.Drift {
			t.Errorf("%s: notification kind %q is not one a run ends with", v, e.notify)
		}
		if !slices.Contains([]string{DeploySuccess, DeployFailed, DeployRolledBack}, e.deploy) {
			t.Errorf("%s: webhookd result %q is not webhookd's", v, e.deploy)
		}
		// A failure has a stage and is told; success has neither stage
		// nor a failed exit code.
		failed := e.deploy != DeploySuccess
		if failed != (e.stage != "") || failed != (e.exit != ExitOK) {
			t.Errorf("%s: result %q, stage %q and exit %d disagree on whether it failed", v, e.deploy, e.stage, e.exit)
		}
		if failed && v != Declined && e.notify == "" {
			t.Errorf("%s: a failure sends no notification", v)
		}
	}
	if len(all()) != int(count)-1 {
		t.Errorf("All lists %d verdicts, want %d", len(all()), count-1)
	}
}

// all lists every verdict, in order.
func all() []Verdict {
	out := make([]Verdict, 0, count-1)
	for v := Verdict(1); v < count; v++ {
		out = append(out, v)
	}
	return out
}

// TestExitCodesOfTheGateAreItsOwn pins the codes CI jobs and syslet push
// branch on.
func TestExitCodesOfTheGateAreItsOwn(t *testing.T) {
	for v, want := range map[Verdict]int{Applied: 0, NoChanges: 0, Invalid: 2, Refused: 1, Failed: 1, GateFailed: 1, RolledBack: 4, RollbackFailed: 5, Interrupted: 130} {
		if got := v.Exit(); got != want {
			t.Errorf("%s.Exit() = %d, want %d", v, got, want)
		}
	}
}

// TestVerdictInJSONIsItsID: a document carries the machine name, and reads
// back to the same verdict; an unknown name is an error, not a zero.
func TestVerdictInJSONIsItsID(t *testing.T) {
	type doc struct {
		V Verdict `json:"verdict"`
	}
	b, err := json.Marshal(doc{RolledBack})
	if err != nil || string(b) != `{"verdict":"rolled-back"}` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	var back doc
	if err := json.Unmarshal(b, &back); err != nil || back.V != RolledBack {
		t.Fatalf("Unmarshal = %v, %v", back.V, err)
	}
	if err := json.Unmarshal([]byte(`{"verdict":"rolled back"}`), &back); err == nil {
		t.Fatal("Unmarshal of a person's name: no error")
	}
}

// A document carries the verdict as its machine name and exit code.
func TestReport(t *testing.T) {
	type doc struct {
		Report
		Summary string `json:"summary"`
	}
	b, err := json.Marshal(doc{RolledBack.Report(), "s"})
	if want := `{"verdict":"rolled-back","exit":4,"summary":"s"}`; err != nil || string(b) != want {
		t.Fatalf("document %s, %v; want %s", b, err, want)
	}
	var back doc
	if json.Unmarshal(b, &back) != nil || back.Verdict != RolledBack || back.Exit != 4 {
		t.Fatalf("read back %+v", back)
	}
	if (Verdict(0)).Report() != (Report{}) {
		t.Error("no verdict has a report")
	}
}

// TestReferenceListsEveryVerdict: the reference of the --output json
// document (docs/reference/cli.md) names every verdict by its machine
// name, with its exit code, as the table says.
func TestReferenceListsEveryVerdict(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "reference", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range all() {
		if row := fmt.Sprintf("| `%s` | %d | ", v.ID(), v.Exit()); !strings.Contains(string(doc), row) {
			t.Errorf("docs/reference/cli.md has no row %q", row)
		}
	}
	if n := strings.Count(string(doc), "\n  | `"); n != len(all()) {
		t.Errorf("docs/reference/cli.md lists %d verdicts; the table has %d", n, len(all()))
	}
}

// A record of a document is one line, told from text by its first byte,
// and reads back whole.
func TestRecord(t *testing.T) {
	type doc struct {
		Report
		Summary string `json:"summary"`
	}
	var b bytes.Buffer
	if err := WriteRecord(&b, doc{RolledBack.Report(), "line one\nline two"}); err != nil {
		t.Fatal(err)
	}
	want := "\x1e" + `{"verdict":"rolled-back","exit":4,"summary":"line one\nline two"}` + "\n"
	if b.String() != want {
		t.Fatalf("record %q; want %q", b.String(), want)
	}
	line := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	var back doc
	if ReadRecord(line, &back) != nil || back.Verdict != RolledBack || back.Exit != 4 || back.Summary != "line one\nline two" {
		t.Fatalf("read back %+v", back)
	}
	if ReadRecord([]byte(`{"verdict":"applied"}`), &back) == nil {
		t.Error("a line without RS was taken for a record")
	}
}
