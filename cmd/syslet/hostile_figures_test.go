package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
// no input on stdin, the case's environment on top of this one's. rss
// is its peak resident set in KB, as /usr/bin/time -v tells it (the
// acceptance's own measure). The wait status this process could read
// itself would not do: a child forked from a test process that has grown
// large inherits that process's high-water mark.
func runBinary(bin string, env map[string]string, args ...string) (code int, stdout, stderr string, rss int64, err error) {
	report, err := os.CreateTemp("", "syslet-time-")
	if err != nil {
		return 0, "", "", 0, err
	}
	report.Close()
	defer os.Remove(report.Name())
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", report.Name(), bin}, args...)...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	var exit *exec.ExitError
	switch err := cmd.Run(); {
	case err == nil:
	case errors.As(err, &exit):
		code = exit.ExitCode()
	default:
		return 0, "", "", 0, fmt.Errorf("running %s under /usr/bin/time (Debian's package time): %w", bin, err)
	}
	b, err := os.ReadFile(report.Name())
	if err != nil {
		return 0, "", "", 0, err
	}
	// "Command exited with non-zero status N" comes first when it did.
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 0, "", "", 0, fmt.Errorf("/usr/bin/time wrote no figure")
	}
	if rss, err = strconv.ParseInt(fields[len(fields)-1], 10, 64); err != nil {
		return 0, "", "", 0, fmt.Errorf("/usr/bin/time's figure: %w", err)
	}
	return code, out.String(), errOut.String(), rss, nil
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
