//go:build integration

package integration

import (
	"strings"
	"testing"

	"github.com/syslet/syslet/integration/testhost"
)

// TestFailedBuildIsTriedOnceMore: a build whose try fails (here on
// purpose: its RUN fails once while a flag file is there, as podman's
// storage race fails a build beside other podman commands) is tried once
// more after its batch, and the container built from it then runs: the
// apply ends well, on the host. Both ways a build runs in an apply: as
// its own start (a new build), and as what a restarted container
// requires (its build unchanged: quadlet's build service does not stay
// active, so systemd runs it again before the container).
func TestFailedBuildIsTriedOnceMore(t *testing.T) {
	t.Parallel()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket && mkdir -p /var/lib/flaky-flag /root/flaky && touch /var/lib/flaky-flag/fail")
	// --no-cache: a cached RUN would not run again on the build's next start.
	specs := `{"apiVersion":"v1","type":"build","name":"flaky","containerfile":"FROM localhost:5000/busybox:latest\nRUN if [ -e /flag/fail ]; then rm /flag/fail; echo this try fails; exit 1; fi; echo this try builds\n","unit":{"Build":{"ImageTag":"localhost/flaky:v1","Volume":"/var/lib/flaky-flag:/flag","PodmanArgs":"--no-cache"}}}
{"apiVersion":"v1","type":"container","name":"flaky","unit":{"Container":{"Image":"flaky.build","Exec":"sleep infinity"}}}
`
	must(t, h.WriteFile("/root/flaky/specs.json", []byte(specs), 0o644))
	c := cursor(t, h)
	wellTried(t, h, c, "the new build")
	if got := strings.TrimSpace(h.MustRun(t, "podman inspect flaky --format '{{.ImageName}}'")); got != "localhost/flaky:v1" {
		t.Errorf("flaky runs %q", got)
	}

	// The container changes, its build does not: the plan starts only
	// flaky.service, and its build runs (and fails once) as its dependency.
	inv := prop(t, h, "flaky.service", "InvocationID")
	editFile(t, h, "/root/flaky/specs.json", `if .type == "container" then .unit.Container.Environment = "TRY=2" else . end`)
	h.MustRun(t, "touch /var/lib/flaky-flag/fail")
	c = cursor(t, h)
	r := wellTried(t, h, c, "the build run as the restarted container's dependency")
	if strings.Contains(r.Stdout, "flaky.build ") {
		t.Errorf("the plan changes the build; it must change only the container:\n%s", r.Stdout)
	}
	if prop(t, h, "flaky.service", "InvocationID") == inv {
		t.Errorf("flaky.service was not restarted")
	}
	if got := h.MustRun(t, "podman inspect flaky --format '{{range .Config.Env}}{{println .}}{{end}}'"); !strings.Contains(got, "TRY=2") {
		t.Errorf("flaky runs without its new environment:\n%s", got)
	}
}

// wellTried applies /root/flaky, whose build fails its first try, and
// checks on the host that the build failed once, was tried once more and
// built, and that flaky.service runs.
func wellTried(t *testing.T, h *testhost.Host, since, what string) testhost.Result {
	t.Helper()
	r := syslet(h, "--soak", testSoak, "/root/flaky")
	t.Logf("apply (%s):\n%s", what, r)
	if !r.OK() || !strings.Contains(r.Stdout, "0 failed, 0 not reached") {
		t.Fatalf("%s: the apply did not end well after the build's second try:\n%s", what, r)
	}
	if !strings.Contains(r.Stderr, "trying it once more, alone") {
		t.Errorf("%s: the retry is not logged:\n%s", what, r.Stderr)
	}
	var log []string
	for _, e := range journal(t, h, since, "_SYSTEMD_UNIT=flaky-build.service") {
		if strings.HasPrefix(e.Message, "this try ") {
			log = append(log, e.Message)
		}
	}
	if strings.Join(log, ", ") != "this try fails, this try builds" {
		t.Errorf("%s: flaky-build.service did not fail once and then build: %q", what, log)
	}
	if st := prop(t, h, "flaky.service", "ActiveState"); st != "active" {
		t.Errorf("%s: flaky.service is %s", what, st)
	}
	return r
}
