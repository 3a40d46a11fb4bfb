package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/verdict"
)

// TestGoldenPlan pins the plan for the example stack, as people read it
// (--diff) and as machines do (--diff --output json), in two situations:
// a fresh host, and a host running examples/demo-previous (the upgrade the
// demo shows: a restart, a reload, a metadata-only rewrite, removals).
// Run `go test ./cmd/syslet -run TestGoldenPlan -update` to accept changes.
func TestGoldenPlan(t *testing.T) {
	const examples = "../../examples"
	for _, tc := range []struct{ name, previous string }{
		{"fresh", ""},
		{"upgrade", filepath.Join(examples, "demo-previous")},
	} {
		root := t.TempDir()
		if tc.previous != "" {
			if code, _, stderr := runCLI(t, "render", tc.previous, "--out", root); code != exitOK {
				t.Fatalf("render %s: exit %d\n%s", tc.previous, code, stderr)
			}
		}
		for _, format := range []string{"text", "json"} {
			t.Run(tc.name+"-"+format, func(t *testing.T) {
				code, stdout, stderr := runCLI(t, "--diff", "--root", root, "--output", format, examples)
				if code != exitOK {
					t.Fatalf("exit %d\n%s", code, stderr)
				}
				abs, err := filepath.Abs(examples)
				if err != nil {
					t.Fatal(err)
				}
				got := strings.ReplaceAll(strings.ReplaceAll(stdout, root, "ROOT"), abs, "EXAMPLES")
				ext := map[string]string{"text": ".txt", "json": ".json"}[format]
				path := filepath.Join("testdata", "golden", "examples-"+tc.name+ext)
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./cmd/syslet -run TestGoldenPlan -update)", err)
				}
				if got != string(want) {
					t.Errorf("%s differs (run go test ./cmd/syslet -run TestGoldenPlan -update to accept):\n--- got\n%s", path, got)
				}
			})
		}
	}
}

// TestTextJSONIsTheTextAndItsRecord: --output text+json prints the text
// exactly as text does, stdout and stderr alike, and then, last on
// stderr, one record (RS, one line, LF) holding the document --output
// json prints; --out - keeps stdout the saved plan's.
func TestTextJSONIsTheTextAndItsRecord(t *testing.T) {
	const examples = "../../examples"
	root := t.TempDir()
	_, textOut, textErr := runCLI(t, "--diff", "--root", root, examples)
	_, jsonOut, _ := runCLI(t, "--diff", "--root", root, "--output", "json", examples)
	code, out, errOut := runCLI(t, "--diff", "--root", root, "--output", "text+json", examples)
	text, record, found := strings.Cut(errOut, "\x1e")
	if code != exitOK || out != textOut || text != textErr || !found || strings.Count(record, "\n") != 1 || !strings.HasSuffix(record, "\n") {
		t.Fatalf("exit %d; stdout as text: %v; stderr before the record as text: %v; record %q", code, out == textOut, text == textErr, record)
	}
	var got, want view.Outcome
	if err := json.Unmarshal([]byte(record), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(jsonOut), &want); err != nil {
		t.Fatal(err)
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) || got.Verdict != verdict.Planned {
		t.Errorf("the record is not the --output json document:\n%s\n%s", g, w)
	}

	code, out, errOut = runCLI(t, "--diff", "--root", root, "--out", "-", "--output", "text+json", examples)
	if _, record, _ := strings.Cut(errOut, "\x1e"); code != exitOK || !strings.HasPrefix(out, "{") || strings.Contains(out, "\x1e") || !strings.HasPrefix(record, `{"verdict":"planned","exit":0,`) {
		t.Errorf("--out - --output text+json: exit %d, stdout %.40q, record %.60q", code, out, record)
	}
}

// TestSchemaCommand: `syslet schema` prints the embedded schema, a JSON
// document with its $id, for editors to point at.
func TestSchemaCommand(t *testing.T) {
	code, stdout, _ := runCLI(t, "schema")
	var doc map[string]any
	if code != exitOK || json.Unmarshal([]byte(stdout), &doc) != nil || doc["$id"] != spec.SchemaID || stdout != string(spec.Schema) {
		t.Fatalf("syslet schema: exit %d, $id %v", code, doc["$id"])
	}
}
