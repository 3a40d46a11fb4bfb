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

// TestUsageNamesEveryFlag: the overall usage lists every flag of every
// command with its default, since both come from the same definitions.
func TestUsageNamesEveryFlag(t *testing.T) {
	var b strings.Builder
	writeUsage(&b)
	usage := strings.Join(strings.Fields(b.String()), " ") // wrapping aside
	for i := range commands {
		for _, d := range commands[i].flagDocs() {
			if !strings.Contains(usage, " "+d.Spelling()+" ") {
				t.Errorf("usage misses %s of %q", d.Spelling(), commands[i].title())
			}
			if d.Default != "" && !strings.Contains(usage, "(default "+d.Default+")") {
				t.Errorf("usage misses the default of %s: %s", d.Spelling(), d.Default)
			}
		}
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
