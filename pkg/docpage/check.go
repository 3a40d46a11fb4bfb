package docpage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrStale marks a generated file that differs from what its generator
// writes now.
var ErrStale = errors.New("out of date")

// CheckFile compares the generated file at path with want; with update it
// writes want there instead. The error says how to regenerate.
func CheckFile(path string, want []byte, update bool) error {
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, want, 0o644)
	}
	have, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w (go tool task golden writes it)", path, err)
	}
	if !bytes.Equal(have, want) {
		return fmt.Errorf("%s is %w: go tool task golden rewrites it from its definitions", path, ErrStale)
	}
	return nil
}

// LintMan checks a man page with mandoc (-T lint, every level) and, when
// groff is installed, groff -ww; any message is an error.
func LintMan(path string) error {
	if _, err := exec.LookPath("mandoc"); err != nil {
		return fmt.Errorf("mandoc is needed to check the man pages (apt-get install mandoc): %w", err)
	}
	var msgs []string
	out, err := exec.Command("mandoc", "-T", "lint", "-W", "all", path).CombinedOutput()
	if err != nil || len(out) > 0 {
		msgs = append(msgs, fmt.Sprintf("mandoc -T lint: %v\n%s", err, out))
	}
	if _, err := exec.LookPath("groff"); err == nil {
		cmd := exec.Command("groff", "-ww", "-z", "-man", "-Tutf8", path)
		out, err := cmd.CombinedOutput()
		if err != nil || len(out) > 0 {
			msgs = append(msgs, fmt.Sprintf("groff -ww: %v\n%s", err, out))
		}
	}
	if len(msgs) > 0 {
		return fmt.Errorf("%s: %s", path, strings.Join(msgs, "\n"))
	}
	return nil
}

// CheckBlock is CheckFile for the part of a hand-written file between the
// lines begin and end: the generated part must be want; with update it is
// replaced by want.
func CheckBlock(path, begin, end string, want []byte, update bool) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i := bytes.Index(raw, []byte(begin+"\n"))
	j := bytes.Index(raw, []byte(end+"\n"))
	if i < 0 || j < i {
		return fmt.Errorf("%s has no generated part (the lines %q and %q)", path, begin, end)
	}
	have := raw[i+len(begin)+1 : j]
	if update {
		out := append(append(append([]byte{}, raw[:i+len(begin)+1]...), want...), raw[j:]...)
		return os.WriteFile(path, out, 0o644)
	}
	if !bytes.Equal(have, want) {
		return fmt.Errorf("%s: the generated part is %w: go tool task golden rewrites it from its definitions", path, ErrStale)
	}
	return nil
}
