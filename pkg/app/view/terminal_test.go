package view

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// Only a terminal is one: not /dev/null (a character device as well), a
// pipe, a regular file or a writer that is no file.
func TestIsTerminalOnlyForATerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, x := range map[string]any{"/dev/null": null, "a pipe": r, "a regular file": file, "a buffer": &bytes.Buffer{}} {
		if IsTerminal(x) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}

// An error joining several specs' errors is drawn as its lines, each
// escaped: no literal \x0a, and a control character inside a line is
// still escaped.
func TestErrorOfSeveralLines(t *testing.T) {
	var b strings.Builder
	Error(&b, "syslet", errors.New("secrets cannot be opened on this host; nothing was changed:\nsecret \"shop\" (t5/70-secrets.json [0]): no identity\nsecret \"db\" (t5/71.json [0]): bad \x1b[31mMAC"))
	want := "syslet: secrets cannot be opened on this host; nothing was changed:\n" +
		"  secret \"shop\" (t5/70-secrets.json [0]): no identity\n" +
		"  secret \"db\" (t5/71.json [0]): bad \\x1b[31mMAC\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
