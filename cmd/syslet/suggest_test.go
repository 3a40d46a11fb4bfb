package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerbsSuggestTheCommand: a first word that is a verb of another tool,
// or a near miss of a command, and names no file, is a usage error that
// gives the command line to run instead, with the rest of the arguments.
func TestVerbsSuggestTheCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "examples/"}, `"plan" is not a command (nor a file here); to print the plan (nothing changes), run: syslet --diff examples/`},
		{[]string{"diff", "examples/"}, "run: syslet --diff examples/"},
		{[]string{"plan"}, "run: syslet --diff\n"},
		{[]string{"dry-run", "--root", "/tmp/x y", "specs/"}, "run: syslet --diff --root '/tmp/x y' specs/"},
		{[]string{"deploy", "specs/"}, "to plan and apply, run: syslet apply specs/"},
		{[]string{"valdate", "specs/"}, `"valdate" is not a command (nor a file here); did you mean: syslet validate specs/`},
		{[]string{"histroy"}, "did you mean: syslet history\n"},
		{[]string{"rolback", "--diff"}, "did you mean: syslet rollback --diff\n"},
	} {
		var out, errw bytes.Buffer
		code := run(tc.args, strings.NewReader(""), &out, &errw)
		if code != exitUsage || !strings.Contains(errw.String(), tc.want) || out.Len() > 0 {
			t.Errorf("syslet %s: exit %d, want %d and %q in:\n%s", strings.Join(tc.args, " "), code, exitUsage, tc.want, errw.String())
		}
	}
}

// TestAVerbThatNamesAFileIsThePath: "syslet plan" with a spec file named
// plan in the working directory applies that file, as before.
func TestAVerbThatNamesAFileIsThePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile(filepath.Join(dir, "plan"), []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unknownVerb([]string{"plan"}); err != nil {
		t.Errorf("a file named plan: %v", err)
	}
	if err := unknownVerb([]string{"diff"}); err == nil {
		t.Error("diff (no such file) is taken for a PATH")
	}
	for _, word := range []string{"specs", "host1.json", "./plan2", "-", "--diff", "zzz"} {
		if err := unknownVerb([]string{word}); err != nil {
			t.Errorf("%q: %v (a PATH or a flag: its own error says more)", word, err)
		}
	}
}

// TestFlagSuggestions: a flag a command does not have gets the one it has
// for the same purpose, or the one a typo missed, with what it does.
func TestFlagSuggestions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dry-run", "examples/"}, "syslet: unknown flag --dry-run; did you mean --diff?\n  --diff  print the plan and stop"},
		{[]string{"--dif", "examples/"}, "unknown flag --dif; did you mean --diff?"},
		{[]string{"apply", "--auto-approve", "examples/"}, "did you mean --yes?"},
		{[]string{"--json", "--diff", "examples/"}, "did you mean --output json?\n  --output FORMAT  print as FORMAT"},
		{[]string{"--alow-removals", "examples/"}, "did you mean --allow-removals?"},
		{[]string{"history", "--otput", "json"}, "syslet history: unknown flag --otput; did you mean --output?"},
		{[]string{"validate", "--stirct", "examples/"}, "did you mean --strict?"},
		{[]string{"push", "--hosts-dri", "hosts/"}, "did you mean --hosts-dir?"},
		{[]string{"rollback", "--dryrun"}, "did you mean --diff?"},
	} {
		var out, errw bytes.Buffer
		code := run(tc.args, strings.NewReader(""), &out, &errw)
		if code != exitUsage || !strings.Contains(errw.String(), tc.want) {
			t.Errorf("syslet %s: exit %d, want %d and %q in:\n%s", strings.Join(tc.args, " "), code, exitUsage, tc.want, errw.String())
		}
	}
	var out, errw bytes.Buffer
	if code := run([]string{"--frobnicate", "examples/"}, strings.NewReader(""), &out, &errw); code != exitUsage || strings.Contains(errw.String(), "did you mean") {
		t.Errorf("a flag near none: exit %d\n%s", code, errw.String())
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"diff", "diff", 0}, {"dif", "diff", 1}, {"histroy", "history", 1}, {"valdate", "validate", 1}, {"", "abc", 3}, {"plan", "diff", 4}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestApplyIsDocumented: "syslet apply PATH", which people type, is shown
// in the usage, and its help (syslet help apply) says what it is.
func TestApplyIsDocumented(t *testing.T) {
	if _, usage, _ := runCLI(t, "--help"); !strings.Contains(usage, "\n  syslet [apply]      plan and apply\n") {
		t.Errorf("the usage does not show syslet [apply]:\n%s", usage)
	}
	code, help, errs := runCLI(t, "help", "apply")
	if code != exitOK {
		t.Fatalf("syslet help apply: exit %d\n%s", code, errs)
	}
	for _, want := range []string{"\n  syslet apply [flags] [PATH | --stdin | -]\n", "syslet apply PATH is the same command as syslet PATH"} {
		if !strings.Contains(help, want) {
			t.Errorf("syslet help apply lacks %q", want)
		}
	}
}

// TestUsageStartsWithCommonCommands: --help opens with the few command
// lines of a first deploy, each of which parses.
func TestUsageStartsWithCommonCommands(t *testing.T) {
	var out, errw bytes.Buffer
	run([]string{"--help"}, strings.NewReader(""), &out, &errw)
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 4 || lines[2] != "Common commands:" || !strings.HasPrefix(lines[3], "  syslet validate specs/") {
		t.Fatalf("the usage does not open with the common commands:\n%s", strings.Join(lines[:min(12, len(lines))], "\n"))
	}
	for _, c := range common {
		args := strings.Fields(strings.TrimPrefix(c.line, "syslet "))
		cmd := dispatch(args[0])
		switch {
		case cmd != nil && cmd.name == "help":
		case cmd != nil:
		default:
			if _, err := parseApply(args, &errw); err != nil {
				t.Errorf("%s: %v", c.line, err)
			}
		}
	}
}
