//go:build integration

package integration

// The host reboots: the guest's systemd is restarted with `systemctl
// soft-reboot` — every unit stopped, PID 1 re-executed, the boot
// transaction run again, the quadlet generator run again — once in the
// middle of an apply and once right after one. (A test host is a
// systemd-nspawn container: a full reboot ends it, see README.md; a
// soft-reboot keeps /run, which a real reboot empties.)

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

// softReboot restarts the guest's systemd and waits until it has booted
// again. The test host's /var/lib/containers is a bind mount made by
// systemd-nspawn, which a soft-reboot would unmount like any other mount
// unit; a drop-in keeps it (a real host mounts it again at boot).
func softReboot(t *testing.T, h *testhost.Host) {
	t.Helper()
	count := func() int {
		r := h.Run("busctl get-property org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager SoftRebootsCount")
		n, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(r.Stdout), "u "))
		return n
	}
	h.MustRun(t, `mkdir -p /etc/systemd/system/var-lib-containers.mount.d && printf '[Unit]\nDefaultDependencies=no\n' > /etc/systemd/system/var-lib-containers.mount.d/50-testhost-keep.conf && systemctl daemon-reload`)
	before := count()
	h.MustRun(t, "(sleep 1; systemctl soft-reboot) > /dev/null 2>&1 < /dev/null & echo rebooting")
	deadline := time.Now().Add(2 * time.Minute)
	for count() <= before {
		if time.Now().After(deadline) {
			t.Fatal("the guest did not soft-reboot within 2 minutes")
		}
		time.Sleep(500 * time.Millisecond)
	}
	if r := h.Eventually("systemctl is-system-running --wait >/dev/null; systemctl is-active multi-user.target", time.Minute); !r.OK() {
		t.Fatalf("the guest did not boot again: %s", r)
	}
}

func TestFaultReboot(t *testing.T) {
	t.Parallel()
	h := upgradeHost(t)

	t.Run("MidApply", func(t *testing.T) {
		// The apply has written the files (step 4) but not reloaded systemd.
		startPaused(t, h, 4, upgradeDir, "/root/paused.log")
		softReboot(t, h)
		rep := sane(t, h, false)
		r := syslet(h, upgradeDir)
		if !r.OK() {
			t.Fatalf("the run after the reboot:\n%s", r)
		}
		t.Logf("after a reboot in the middle of an apply (%d leftovers): %s", len(rep.leftovers), nextRun(r.Stdout))
		checkUpgraded(t, h)
		sane(t, h, true)
		if third := apply(t, h, upgradeDir); !strings.Contains(third.Stdout, "No changes") {
			t.Errorf("the run after that must plan nothing:\n%s", third.Stdout)
		}
		recordFault(t, faultRow{Fault: "the host rebooted (soft-reboot) in the middle of an apply (after step 4)", Tries: 1, Survived: 1,
			DataLost: "none (the new oneshot ran once)", NextRun: nextRun(r.Stdout)})
	})

	t.Run("RightAfterAnApply", func(t *testing.T) {
		units := []string{"app.service", "db.service", "web.service", "backend-network.service", "db-data-volume.service", "web-cache-volume.service"}
		before := invocations(t, h, units...)
		c := cursor(t, h)
		softReboot(t, h)
		raced := buildLostStorageRace(t, h, c, "app")
		if raced != "" {
			// Podman's bug, not syslet's: what syslet owns is that its next
			// run starts the container again.
			t.Logf("app-build.service lost podman's storage race at boot (%s); syslet's next run must start app again", raced)
			if r := apply(t, h, upgradeDir); !regexp.MustCompile(`app\.container +start: not running \(failed\)`).MatchString(r.Stdout) {
				t.Errorf("the run after the race must start app:\n%s", r.Stdout)
			}
		}
		after := invocations(t, h, units...)
		for _, u := range units {
			if st := prop(t, h, u, "ActiveState"); st != "active" {
				t.Errorf("%s is %s after the reboot, want active", u, st)
			}
			if before[u] == after[u] {
				t.Errorf("%s was not started again by the reboot", u)
			}
		}
		checkUpgraded(t, h) // what each container serves; the oneshot did not run again
		d := syslet(h, "--diff", "--detailed-exitcode", upgradeDir)
		if d.Code != 0 || !strings.Contains(d.Stdout, "No changes") {
			t.Errorf("the plan after the reboot (exit %d):\n%s", d.Code, d.Stdout)
		}
		c = cursor(t, h)
		if r := apply(t, h, upgradeDir); !strings.Contains(r.Stdout, "No changes") {
			t.Errorf("the apply after the reboot:\n%s", r.Stdout)
		}
		if jobs := deployJobs(t, h, c); len(jobs) > 0 {
			t.Errorf("the apply after the reboot made systemd work:\n%s", strings.Join(jobs, "\n"))
		}
		lost := "none: every container came back, the oneshot did not run again"
		if raced != "" {
			lost = "none: app's build lost podman's storage race at boot, syslet's next run started app; the oneshot did not run again"
		}
		recordFault(t, faultRow{Fault: "the host rebooted (soft-reboot) right after an apply", Tries: 1, Survived: 1,
			DataLost: lost, NextRun: "--diff: " + nextRun(d.Stdout)})
	})
}

// buildLostStorageRace is the error line of the build of container name
// since cursor when that build failed, leaving the container down, with
// podman's storage race: a build beside other podman commands can lose its
// working container (upstream buildah#5674, podman#23671; executor's
// buildRetry). At boot every container starts at once, and quadlet's build
// service runs again before its container, so a reboot can meet it (1 of 24
// soft-reboots of three loaded test hosts). It is "" otherwise: a container
// down for any other reason still fails the test.
func buildLostStorageRace(t *testing.T, h *testhost.Host, cursor, name string) string {
	t.Helper()
	if prop(t, h, name+".service", "ActiveState") != "failed" {
		return ""
	}
	for _, e := range journal(t, h, cursor, "_SYSTEMD_UNIT="+name+"-build.service") {
		if strings.Contains(e.Message, "layer not known") || strings.Contains(e.Message, "identifier is not a container") {
			return e.Message
		}
	}
	return ""
}
