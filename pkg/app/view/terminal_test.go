package view

import (
	"bytes"
	"os"
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
