package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The figures of the hostile suite (issue 22's acceptance: every case
// under 5 s and 300 MB of peak RSS): go tool task figures:hostile builds
// syslet and runs every case with it (figuresBin), each as its own
// process, and integration/bench/hostile-figures.sh prints the table of
// what each took.

// runBinary runs the built syslet as a person would: its own process,
// no input on stdin, the case's environment on top of this one's. took
// is its wall time and rss its peak resident set in KB, as /usr/bin/time
// tells them (the acceptance's own measure). The wait status this process
// could read itself would not do: a child forked from a test process that
// has grown large inherits that process's high-water mark. Its output
// goes to files, read once it has ended, and this process's own garbage
// (a case's set-up reads a hundred thousand files) is collected first:
// the figures are the program's, not those of a test process still
// collecting, or slow to drain a pipe of 36 MB.
func runBinary(bin string, env map[string]string, args ...string) (code int, stdout, stderr string, took time.Duration, rss int64, err error) {
	dir, err := os.MkdirTemp("", "syslet-run-")
	if err != nil {
		return 0, "", "", 0, 0, err
	}
	defer os.RemoveAll(dir)
	report, outFile, errFile := filepath.Join(dir, "time"), filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr")
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%e %M", "-o", report, bin}, args...)...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	o, err := os.Create(outFile)
	if err != nil {
		return 0, "", "", 0, 0, err
	}
	defer o.Close()
	e, err := os.Create(errFile)
	if err != nil {
		return 0, "", "", 0, 0, err
	}
	defer e.Close()
	cmd.Stdout, cmd.Stderr = o, e
	debug.FreeOSMemory() // a collection, done before the program starts
	var exit *exec.ExitError
	switch err := cmd.Run(); {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		return 0, "", "", 0, 0, fmt.Errorf("running %s under /usr/bin/time (Debian's package time): %w", bin, err)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		return 0, "", "", 0, 0, err
	}
	// "Command exited with non-zero status N" comes first when it did.
	fields := strings.Fields(string(b))
	if len(fields) < 2 {
		return 0, "", "", 0, 0, fmt.Errorf("/usr/bin/time wrote no figures: %q", b)
	}
	secs, err := strconv.ParseFloat(fields[len(fields)-2], 64)
	if err != nil {
		return 0, "", "", 0, 0, fmt.Errorf("/usr/bin/time's elapsed time: %w", err)
	}
	if rss, err = strconv.ParseInt(fields[len(fields)-1], 10, 64); err != nil {
		return 0, "", "", 0, 0, fmt.Errorf("/usr/bin/time's peak RSS: %w", err)
	}
	outB, err := os.ReadFile(outFile)
	if err != nil {
		return 0, "", "", 0, 0, err
	}
	errB, err := os.ReadFile(errFile)
	if err != nil {
		return 0, "", "", 0, 0, err
	}
	return code, string(outB), string(errB), time.Duration(secs * float64(time.Second)), rss, nil
}

// recordFigures adds one line for the case to figuresOut: its test name,
// seconds, peak RSS in MB, exit code (tab-separated).
func recordFigures(t *testing.T, took time.Duration, rssKB int64, code int) {
	t.Helper()
	t.Logf("figures: %.2f s, %d MB peak RSS", took.Seconds(), rssKB>>10)
	if figuresOut == "" {
		return
	}
	f, err := os.OpenFile(figuresOut, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	must(t, err)
	defer f.Close()
	// A subtest's name has no white space (go test makes it underscores).
	_, err = fmt.Fprintf(f, "%s\t%.2f\t%d\t%d\n", t.Name(), took.Seconds(), rssKB>>10, code)
	must(t, err)
}
