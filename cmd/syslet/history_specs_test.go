package main

import (
	"strings"
	"testing"
	"time"

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
	must(t, store.Record(generation.Generation{Run: "20261201T120000Z-cccccc", Time: t0.Add(2 * time.Hour), Input: []byte("{\"a\":\"\x1b[2J\"}\n")}))

	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"a run by its id", []string{"20261201T100000Z-aaaaaa"}, exitOK, older, ""},
		{"a run by a prefix", []string{"20261201T11"}, exitOK, newer, ""},
		{"a prefix naming two", []string{"20261201T1"}, exitError, "", `syslet history: "20261201T1" names more than one generation: a generation is kept of each run that ended ok, the last --keep-generations of them (marked * in syslet history)`},
		{"a run without one", []string{"20261130T000000Z-dddddd"}, exitError, "", `syslet history: no generation of run "20261130T000000Z-dddddd" is kept: a generation is kept`},
		{"a forged stream is not printed", []string{"20261201T12"}, exitError, "", "syslet history: generation of run 20261201T120000Z-cccccc: its input is not a spec stream syslet wrote (invalid UTF-8 or control characters); not printed"},
		{"json does not apply", []string{"--output", "json"}, exitUsage, "", "--specs prints the spec stream itself, --output does not apply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"history", "--root", root, "--specs"}, tc.args...)...)
			if code != tc.code || out != tc.out || !strings.Contains(errOut, tc.err) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out, errOut, tc.code, tc.out, tc.err)
			}
		})
	}

	// Without RUN: the newest generation that can be printed is not
	// looked past — the newest is what the host got last.
	if code, _, errOut := runCLI(t, "history", "--root", root, "--specs"); code != exitError || !strings.Contains(errOut, "20261201T120000Z-cccccc") {
		t.Errorf("the newest (forged): exit %d, %s", code, errOut)
	}
	if code, out, _ := runCLI(t, "history", "--root", t.TempDir(), "--specs"); code != exitError || out != "" {
		t.Errorf("no generation: exit %d, stdout %q", code, out)
	}
	if _, _, errOut := runCLI(t, "history", "--root", t.TempDir(), "--specs"); !strings.Contains(errOut, "syslet history: no generation is kept yet: one is made by each run that ends ok") {
		t.Errorf("no generation: %s", errOut)
	}
}
