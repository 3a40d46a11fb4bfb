package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The command-line reference (docs/reference/cli.md) is generated from the
// flag definitions (writeReference); this test fails when the two differ,
// and `go tool task golden` (-update) rewrites its generated part.
const (
	refBegin = "<!-- cli-reference: generated from cmd/syslet's flag definitions by `go tool task golden`; do not edit -->\n"
	refEnd   = "<!-- end of cli-reference -->\n"
)

func TestCLIReferenceIsGenerated(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "reference", "cli.md")
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(readme, []byte(refBegin)), bytes.Index(readme, []byte(refEnd))
	if i < 0 || j < i {
		t.Fatalf("%s has no cli-reference markers", path)
	}
	var b strings.Builder
	writeReference(&b)
	got := b.String()
	have := string(readme[i+len(refBegin) : j])
	if *update {
		out := append(append(append([]byte{}, readme[:i+len(refBegin)]...), got...), readme[j:]...)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if have != got {
		t.Errorf("%s is out of date (go tool task golden rewrites it):\n--- want\n%s--- have\n%s", path, got, have)
	}
}

// TestHelpNamesEveryFlag: each command's help (syslet help NAME) lists
// every flag of the command with its default, since both come from the
// same definitions.
func TestHelpNamesEveryFlag(t *testing.T) {
	for i := range commands {
		var b strings.Builder
		writeHelp(&b, &commands[i])
		help := strings.Join(strings.Fields(b.String()), " ") // wrapping aside
		for _, d := range commands[i].flagDocs() {
			if !strings.Contains(help, " "+d.Spelling()+" ") {
				t.Errorf("the help of %s misses %s", commands[i].title(), d.Spelling())
			}
			if d.Default != "" && !strings.Contains(help, "(default "+d.Default+")") {
				t.Errorf("the help of %s misses the default of %s: %s", commands[i].title(), d.Spelling(), d.Default)
			}
		}
	}
}

// TestUsageIsAnOverview: syslet --help is a page, not the reference
// (issue 55: it was 431 lines): every command in a line, the apply's most
// used flags, the exit codes, and where the rest is; syslet help NAME
// answers for every command name and alias it points to.
func TestUsageIsAnOverview(t *testing.T) {
	code, usage, errs := runCLI(t, "--help")
	if code != exitOK {
		t.Fatalf("--help: exit %d\n%s", code, errs)
	}
	if n := strings.Count(usage, "\n"); n > 80 {
		t.Errorf("--help is %d lines; an overview fits in 80:\n%s", n, usage)
	}
	for i := range commands {
		c := &commands[i]
		if c.name != "" && !strings.Contains(usage, "\n  "+c.title()+" ") {
			t.Errorf("--help does not list %s", c.title())
		}
		for _, w := range append([]string{c.name}, c.aliases...) {
			if w == "" {
				continue
			}
			if code, out, errs := runCLI(t, "help", w); code != exitOK || !strings.HasPrefix(out, "Usage:\n  "+c.title()) {
				t.Errorf("syslet help %s: exit %d, not %s's help:\n%s%s", w, code, c.title(), out, errs)
			}
		}
	}
	for _, f := range usedFlags {
		if !strings.Contains(usage, "\n  --"+f+" ") {
			t.Errorf("--help does not show --%s", f)
		}
	}
	if !strings.Contains(usage, "syslet help COMMAND (or syslet COMMAND --help) shows a command's forms, all its flags") {
		t.Errorf("--help does not say where each command's flags are")
	}
}

// TestTableDispatches: every command the help lists runs from the same
// table, by its name or an alias; any other first word is the default
// command's argument.
func TestTableDispatches(t *testing.T) {
	words := map[string]bool{}
	for i := range commands {
		c := &commands[i]
		if c.run == nil {
			t.Errorf("%s has no run", c.title())
		}
		if c.name != "" && dispatch(c.name) != c {
			t.Errorf("%q does not dispatch to %s", c.name, c.title())
		}
		for _, w := range append([]string{c.name}, c.aliases...) {
			if words[w] {
				t.Errorf("%q names two commands", w)
			}
			words[w] = true
		}
	}
	for w, want := range map[string]string{"apply": "", "--version": "version", "-h": "help", "--help": "help"} {
		if c := dispatch(w); c == nil || c.name != want {
			t.Errorf("dispatch(%q) = %v, want the command %q", w, c, want)
		}
	}
	for _, w := range []string{"", "specs/", "--diff", "-"} {
		if c := dispatch(w); c != nil {
			t.Errorf("dispatch(%q) = %s, want none (the default command's argument)", w, c.title())
		}
	}
}
