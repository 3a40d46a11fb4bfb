package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestUsageErrorsHaveTheirOwnExitCode(t *testing.T) {
	for _, args := range [][]string{
		{"--bogus"},
		{"a", "b"},
		{"--stdin", "examples"},
		{"--output", "yaml", "--diff", "x"},
		{"--detailed-exitcode", "x"},
		{"validate", "--bogus"},
		{"validate", "--output", "xml", "x"},
		{"render", "x"},
		{"history", "a", "b"},
		{"version", "extra"},
	} {
		var out, errw bytes.Buffer
		if code := run(args, strings.NewReader(""), &out, &errw); code != exitUsage {
			t.Errorf("syslet %s: exit %d, want %d (usage)\n%s", strings.Join(args, " "), code, exitUsage, errw.String())
		}
	}
}

func TestPanicIsAnInternalError(t *testing.T) {
	var errw bytes.Buffer
	code := func() (code int) {
		defer recovered(&errw, &code)
		panic("boom")
	}()
	if code != exitInternal || !strings.Contains(errw.String(), "internal error") || !strings.Contains(errw.String(), "boom") {
		t.Fatalf("exit %d, stderr %q", code, errw.String())
	}
}

// --output json: stdout holds exactly one JSON document; the human plan
// goes to stderr.
func TestDiffOutputJSONIsOneDocument(t *testing.T) {
	root := t.TempDir()
	var out, errw bytes.Buffer
	if code := run([]string{"--diff", "--root", root, "--output", "json", filepath.Join("..", "..", "examples")}, strings.NewReader(""), &out, &errw); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, errw.String())
	}
	dec := json.NewDecoder(&out)
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON document: err %v more %v", err, dec.More())
	}
	plan, _ := doc["plan"].(map[string]any)
	if plan == nil || len(plan["actions"].([]any)) == 0 || doc["planDigest"] == "" {
		t.Fatalf("document lacks the plan: %v", doc)
	}
	if !strings.Contains(errw.String(), "Steps, in the order they run") {
		t.Errorf("the human plan belongs on stderr:\n%s", errw.String())
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"version", "--output", "json"}, nil, &out, &bytes.Buffer{}); code != exitOK {
		t.Fatal(code)
	}
	var v versionInfo
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Go == "" || !strings.HasPrefix(v.PodmanAPI, "v5.") {
		t.Fatalf("version json %s: %v %+v", out.String(), err, v)
	}
}

func TestConfirm(t *testing.T) {
	for in, want := range map[string]bool{"yes\n": true, "y\n": false, "\n": false, "": false, "no\n": false} {
		var w bytes.Buffer
		if got := confirm(strings.NewReader(in), &w); got != want || !strings.Contains(w.String(), "Apply this plan?") {
			t.Errorf("answer %q: confirm = %v, want %v", in, got, want)
		}
	}
}
