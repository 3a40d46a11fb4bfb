package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSavedPlanUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", "x.plan", "specs/"}, "--out saves the plan of a --diff"},
		{[]string{"--diff", "--out", "x.plan", "--plan", "y.plan", "specs/"}, "--out and --plan both given"},
		{[]string{"--diff", "--out", "-", "--output", "json", "specs/"}, "--out - and --output json both print on stdout"},
		{[]string{"--plan", "x.plan", "--force", "specs/"}, "--plan applies the options the plan was saved with"},
		{[]string{"--plan", "x.plan", "--allow-removals", "specs/"}, "--plan applies the options"},
		{[]string{"show"}, "want one FILE"},
		{[]string{"show", "a", "b"}, "want one FILE"},
		{[]string{"show", "--output", "yaml", "a"}, "--output must be text or json"},
		{[]string{"push", "--out", "plans", "web1", "specs/"}, "--out saves the plans of a --diff"},
		{[]string{"push", "--diff", "--out", "plans", "--plan", "plans", "web1", "specs/"}, "--out and --plan both given"},
	} {
		var out, errw bytes.Buffer
		if code := run(c.args, strings.NewReader(""), &out, &errw); code != exitUsage || !strings.Contains(errw.String(), c.want) {
			t.Errorf("syslet %s: exit %d, stderr %q; want %d and %q", strings.Join(c.args, " "), code, errw.String(), exitUsage, c.want)
		}
	}
}

// syslet --diff --out, show, --diff --plan under --root (no host): the
// plan file round-trips through the command line, and a changed input or
// an edited file is refused with exit 1.
func TestSavedPlanCommands(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	examples := filepath.Join("..", "..", "examples")
	file := filepath.Join(dir, "host.plan")
	sh := func(stdin string, args ...string) (int, string, string) {
		var out, errw bytes.Buffer
		code := run(args, strings.NewReader(stdin), &out, &errw)
		return code, out.String(), errw.String()
	}
	code, stdout, stderr := sh("", "--diff", "--root", root, "--out", file, examples)
	if code != exitOK || !strings.Contains(stdout, "Saved the plan to "+file+" (0600)") {
		t.Fatalf("--diff --out: exit %d\n%s%s", code, stdout, stderr)
	}
	diffText := stdout[:strings.Index(stdout, "\nSaved the plan")]

	code, stdout, stderr = sh("", "show", file)
	if code != exitOK || !strings.HasPrefix(stdout, "Saved plan "+file+": made ") || !strings.Contains(stdout, diffText) {
		t.Errorf("show: exit %d; want the header, then the plan as --diff printed it:\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = sh("", "show", "--output", "json", file)
	var doc map[string]any
	if code != exitOK || json.Unmarshal([]byte(stdout), &doc) != nil || doc["planDigest"] == "" || doc["plan"] == nil {
		t.Errorf("show --output json: exit %d\n%s", code, stdout)
	}
	raw, _ := os.ReadFile(file)
	if code, stdout, _ = sh(string(raw), "show", "-"); code != exitOK || !strings.HasPrefix(stdout, "Saved plan from stdin: made ") {
		t.Errorf("show - : exit %d\n%s", code, stdout)
	}

	if code, stdout, stderr = sh("", "--diff", "--plan", file, "--root", root, examples); code != exitOK || !strings.Contains(stdout, "still holds") {
		t.Errorf("--diff --plan: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr = sh("", "--diff", "--plan", file, "--root", root, filepath.Join(examples, "10-network.json")); code != exitError ||
		!strings.HasPrefix(stderr, "Saved plan is stale: ") || !strings.Contains(stderr, "the input: its digest is") {
		t.Errorf("--diff --plan, other input: exit %d\n%s", code, stderr)
	}
	if code, _, stderr = sh("", "--plan", file, "--root", root, examples); code != exitError || !strings.Contains(stderr, "an apply needs the running host") {
		t.Errorf("--plan under --root: exit %d\n%s", code, stderr)
	}
	edited := filepath.Join(dir, "edited.plan")
	if err := os.WriteFile(edited, bytes.Replace(raw, []byte(`"op": "write-unit"`), []byte(`"op": "remove-unit"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"show", edited}, {"--diff", "--plan", edited, "--root", root, examples}} {
		if code, _, stderr = sh("", args...); code != exitError || !strings.Contains(stderr, "not a valid saved plan: its actions do not match its plan digest") {
			t.Errorf("syslet %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
	}

	// --out -: the file on stdout, the human plan on stderr.
	code, stdout, stderr = sh("", "--diff", "--root", root, "--out", "-", examples)
	if code != exitOK || !strings.HasPrefix(stdout, "{\n") || !strings.Contains(stderr, "Steps, in the order they run") {
		t.Errorf("--out -: exit %d\nstdout %.200s\nstderr %.200s", code, stdout, stderr)
	}
	// --plan - --stdin: the plan first, the specs after it.
	stream, err := os.ReadFile(filepath.Join(examples, "10-network.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, saved, _ := sh(string(stream), "--diff", "--root", root, "--out", "-", "--stdin")
	if code, stdout, stderr = sh(saved+string(stream), "--diff", "--root", root, "--plan", "-", "--stdin"); code != exitOK || !strings.Contains(stdout, "still holds") {
		t.Errorf("--diff --plan - --stdin: exit %d\n%s%s", code, stdout, stderr)
	}
}

// push --plan DIR reads and checks every host's plan here, before any
// connection: a missing, edited or other specs' plan stops the push; a
// good one goes ahead (to a host that hangs up here).
func TestPushPlansCheckedLocally(t *testing.T) {
	dir := t.TempDir()
	net := `{"apiVersion":"v1","type":"network","name":"shared","unit":{}}` + "\n"
	writeFile(t, filepath.Join(dir, "specs", "net.json"), net)
	writeFile(t, filepath.Join(dir, "other", "net.json"), strings.Replace(net, "shared", "other", 1))
	plans := filepath.Join(dir, "plans")
	addr, conns := listener(t)
	target := "root@" + addr
	if err := os.MkdirAll(plans, 0o700); err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	if code := run([]string{"--diff", "--root", t.TempDir(), "--out", planFile(plans, target), "--stdin"}, strings.NewReader(net), &out, &errw); code != exitOK {
		t.Fatalf("saving the plan: exit %d\n%s", code, errw.String())
	}
	good, _ := os.ReadFile(planFile(plans, target))
	edited := filepath.Join(dir, "edited")
	writeFile(t, planFile(edited, target), strings.Replace(string(good), `"summary": "Plan: `, `"summary": "Plan: 0 to create, `, 1))

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no plan", []string{"--plan", filepath.Join(dir, "none"), target, filepath.Join(dir, "specs")}, "no saved plan"},
		{"edited plan", []string{"--plan", edited, target, filepath.Join(dir, "specs")}, "its content does not match its digest"},
		{"plan of other specs", []string{"--plan", plans, target, filepath.Join(dir, "other")}, "was made from other specs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"push"}, c.args...), strings.NewReader(""), &stdout, &stderr)
			if code != exitError || !strings.Contains(stderr.String(), c.want) || !strings.Contains(stderr.String(), "nothing was sent") {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr.String(), exitError, c.want)
			}
		})
	}
	if n := conns(); n != 0 {
		t.Errorf("%d connection(s) made; a push refused locally must make none", n)
	}
	// The good plan with its specs: the push goes ahead and connects.
	var stdout, stderr bytes.Buffer
	key := filepath.Join("..", "..", "pkg", "secrets", "testdata", "hostkey-1") // any unencrypted key
	run([]string{"push", "-i", key, "--known-hosts", filepath.Join(dir, "known_hosts"), "--plan", plans, target, filepath.Join(dir, "specs")}, strings.NewReader(""), &stdout, &stderr)
	if conns() == 0 {
		t.Errorf("a push with a good plan did not connect:\n%s%s", stdout.String(), stderr.String())
	}
}
