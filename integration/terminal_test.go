//go:build integration

package integration

// Issue 55's apply as a person sees it: on a terminal, stopped by a
// Ctrl-C right after step 2 stopped a service.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestInterruptedUpgradeOnATerminal: the upgrade run on a terminal (so
// podman's pull progress is drawn) and interrupted with SIGINT after step 2
// stopped web to replace it. podman's progress lines are shown under their
// pull, marked as podman's, not as lines of syslet's own; and the run's
// last words name what is stopped on the host now, as systemd sees it.
func TestInterruptedUpgradeOnATerminal(t *testing.T) {
	t.Parallel()
	h := upgradeHost(t)
	const log, marker = "/root/terminal.log", "/run/syslet/test-paused-2"
	h.MustRun(t, "rm -f "+marker)
	h.MustRun(t, fmt.Sprintf("SYSLET_TEST_PAUSE_AFTER_STEP=2 setsid nohup script -qfec 'syslet --yes %s' %s > /dev/null 2>&1 < /dev/null & echo started", upgradeDir, log))
	if r := h.Eventually("test -s "+marker, 120*time.Second); !r.OK() {
		t.Fatalf("apply did not pause after step 2:\n%s", h.Run("cat "+log))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(h.MustRun(t, "cat "+marker)))
	must(t, err)
	h.MustRun(t, fmt.Sprintf("kill -INT %d", pid))
	waitGone(t, h, pid)
	h.Eventually("! pgrep -x script", 30*time.Second)
	// The terminal's lines, without script(1)'s own first and last.
	var shown []string
	for _, l := range strings.Split(strings.ReplaceAll(h.MustRun(t, "cat "+log), "\r", ""), "\n") {
		if !strings.HasPrefix(l, "Script started on ") && !strings.HasPrefix(l, "Script done on ") {
			shown = append(shown, l)
		}
	}
	out := strings.Join(shown, "\n")
	t.Logf("what the terminal showed:\n%s", out)

	t.Run("pull progress", func(t *testing.T) {
		var podmans int
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "Trying to pull") || strings.Contains(l, "Copying blob") || strings.Contains(l, "image source signatures") || strings.Contains(l, "Writing manifest") {
				podmans++
				if !strings.HasPrefix(l, "  podman pull localhost:5000/") {
					t.Errorf("a line of podman's pull progress is not marked as the pull's:\n%q", l)
				}
			}
		}
		if podmans == 0 {
			t.Errorf("no pull progress on the terminal")
		}
	})

	t.Run("last words", func(t *testing.T) {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		last := lines[len(lines)-1]
		for _, u := range []string{"web.service", "app.service", "db.service"} {
			stopped := prop(t, h, u, "ActiveState") != "active"
			if named := strings.Contains(last, u); named != stopped {
				t.Errorf("%s stopped on the host: %v; named in the last line: %v\n%s", u, stopped, named, last)
			}
		}
		if !strings.Contains(last, "web.service is stopped now") {
			t.Errorf("the last line does not say web.service is stopped now: %q", last)
		}
	})
}
