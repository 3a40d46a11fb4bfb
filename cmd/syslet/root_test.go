package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestNotRootSaysSoFirst: every command that works on the live host, run
// by another user, says it must run as root in one line and nothing else
// (no warning, no "permission denied"), exits 1, and reads nothing; with
// --root DIR, where a copy of the host is read, it goes ahead.
func TestNotRootSaysSoFirst(t *testing.T) {
	euid = func() int { return 1000 }
	t.Cleanup(func() { euid = os.Geteuid })
	for _, args := range [][]string{
		{}, {"--diff"}, {"examples/"}, {"apply", "examples/"}, {"--stdin"}, {"--diff", "--detailed-exitcode", "examples/"},
		{"history"}, {"history", "20261201T0455"}, {"host-key"}, {"rollback"}, {"rollback", "--diff"}, {"notify-test"},
	} {
		var out, errw bytes.Buffer
		code := run(args, strings.NewReader("[]"), &out, &errw)
		lines := strings.Split(strings.TrimSuffix(errw.String(), "\n"), "\n")
		if code != exitError || out.Len() > 0 || len(lines) != 1 || !strings.Contains(lines[0], ": must run as root: ") ||
			!strings.HasSuffix(lines[0], strings.TrimSpace("run: sudo syslet "+strings.Join(args, " "))) &&
				!strings.HasSuffix(lines[0], strings.TrimSpace("run: sudo syslet "+strings.Join(args[min(1, len(args)):], " "))) {
			t.Errorf("syslet %s as a user: exit %d, stdout %q, stderr:\n%s", strings.Join(args, " "), code, out.String(), errw.String())
		}
	}
	root := t.TempDir()
	for _, args := range [][]string{
		{"history", "--root", root}, {"--diff", "--root", root, "../../examples"}, {"validate", "../../examples"}, {"version"},
	} {
		var out, errw bytes.Buffer
		if code := run(args, strings.NewReader(""), &out, &errw); code != exitOK || strings.Contains(errw.String(), "root") && strings.Contains(errw.String(), "must run as") {
			t.Errorf("syslet %s as a user: exit %d\n%s", strings.Join(args, " "), code, errw.String())
		}
	}
}
