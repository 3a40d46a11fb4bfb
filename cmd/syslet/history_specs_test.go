package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/syslet/syslet/pkg/generation"
)

// syslet history --specs prints the spec stream a kept generation holds,
// byte for byte: the newest without RUN, a run's by its id or a prefix.
func TestHistorySpecs(t *testing.T) {
	root := t.TempDir()
	store := generation.Open(root)
	older := `{"apiVersion":"v1","type":"volume","name":"data","unit":{}}` + "\n"
	newer := older + `{"apiVersion":"v1","type":"network","name":"backend","unit":{}}` + "\n"
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	must(t, store.Record(generation.Generation{Run: "20261201T100000Z-aaaaaa", Time: t0, Input: []byte(older)}))
	must(t, store.Record(generation.Generation{Run: "20261201T110000Z-bbbbbb", Time: t0.Add(time.Hour), Input: []byte(newer)}))
	must(t, store.Record(generation.Generation{Run: "20261201T113000Z-eeeeee", Time: t0.Add(90 * time.Minute), Input: []byte("{\"a\":\"\u009b2J\"}\n")}))
	must(t, store.Record(generation.Generation{Run: "20261201T120000Z-cccccc", Time: t0.Add(2 * time.Hour), Input: []byte("{\"a\":\"\x1b[2J\"}\n")}))

	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"a run by its id", []string{"20261201T100000Z-aaaaaa"}, exitOK, older, ""},
		{"a run by a prefix", []string{"20261201T110"}, exitOK, newer, ""},
		{"a prefix naming two", []string{"20261201T1"}, exitError, "", `syslet history: "20261201T1" names more than one generation: a generation is kept of each run that ended ok, the last --keep-generations of them (marked * in syslet history)`},
		{"a run without one", []string{"20261130T000000Z-dddddd"}, exitError, "", `syslet history: no generation of run "20261130T000000Z-dddddd" is kept: a generation is kept`},
		{"redirected, a C1 control character is written as it is", []string{"20261201T113"}, exitOK, "{\"a\":\"\u009b2J\"}\n", ""},
		{"redirected, an ESC too", []string{"20261201T12"}, exitOK, "{\"a\":\"\x1b[2J\"}\n", ""},
		{"json does not apply", []string{"--output", "json"}, exitUsage, "", "--specs prints the spec stream itself, --output does not apply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"history", "--root", root, "--specs"}, tc.args...)...)
			if code != tc.code || out != tc.out || !strings.Contains(errOut, tc.err) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out, errOut, tc.code, tc.out, tc.err)
			}
		})
	}

	// To a terminal, a stream holding control characters is not written;
	// the newest such is not looked past, as the newest is what the host
	// got last. /dev/null is no terminal, though a character device.
	tty := openTerminal(t)
	for _, tc := range []struct {
		args []string
		run  string
	}{
		{[]string{"20261201T113"}, "20261201T113000Z-eeeeee"},
		{[]string{"20261201T12"}, "20261201T120000Z-cccccc"},
		{nil, "20261201T120000Z-cccccc"},
	} {
		var errOut bytes.Buffer
		code := run(append([]string{"history", "--root", root, "--specs"}, tc.args...), strings.NewReader(""), tty, &errOut)
		if want := "syslet history: generation of run " + tc.run + ": its input holds control characters or invalid UTF-8, not printed to a terminal; redirect it to a file"; code != exitError || !strings.Contains(errOut.String(), want) {
			t.Errorf("%v to a terminal: exit %d, %q; want %d, %q", tc.args, code, errOut.String(), exitError, want)
		}
	}
	var errOut bytes.Buffer
	if code := run([]string{"history", "--root", root, "--specs", "20261201T10"}, strings.NewReader(""), tty, &errOut); code != exitOK {
		t.Errorf("a plain stream to a terminal: exit %d, %s", code, errOut.String())
	}

	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	must(t, err)
	defer null.Close()
	errOut.Reset()
	if code := run([]string{"history", "--root", root, "--specs", "20261201T113"}, strings.NewReader(""), null, &errOut); code != exitOK {
		t.Errorf("to /dev/null: exit %d, %s", code, errOut.String())
	}

	if code, out, _ := runCLI(t, "history", "--root", t.TempDir(), "--specs"); code != exitError || out != "" {
		t.Errorf("no generation: exit %d, stdout %q", code, out)
	}
	if _, _, errOut := runCLI(t, "history", "--root", t.TempDir(), "--specs"); !strings.Contains(errOut, "syslet history: no generation is kept yet: one is made by each run that ends ok") {
		t.Errorf("no generation: %s", errOut)
	}
}

// openTerminal is the far end of a new pseudo-terminal, as a person's
// shell would hand syslet; what is written to it is read and dropped.
func openTerminal(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	must(t, err)
	t.Cleanup(func() { ptmx.Close() })
	must(t, unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	must(t, err)
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	must(t, err)
	t.Cleanup(func() { tty.Close() })
	go io.Copy(io.Discard, ptmx)
	return tty
}
