//go:build integration

package integration

import (
	"strings"
	"testing"
)

// TestFailedBuildIsTriedOnceMore: a build whose first try fails (here on
// purpose: its RUN fails unless a flag left by an earlier try is there,
// as podman's storage race fails a build beside other podman commands)
// is tried once more after its batch, and the container built from it
// then runs: the apply ends well, on the host.
func TestFailedBuildIsTriedOnceMore(t *testing.T) {
	t.Parallel()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket && mkdir -p /var/lib/flaky-flag /root/flaky")
	specs := `{"apiVersion":"v1","type":"build","name":"flaky","containerfile":"FROM localhost:5000/busybox:latest\nRUN if [ -e /flag/tried ]; then echo second try builds; else touch /flag/tried; echo first try fails; exit 1; fi\n","unit":{"Build":{"ImageTag":"localhost/flaky:v1","Volume":"/var/lib/flaky-flag:/flag"}}}
{"apiVersion":"v1","type":"container","name":"flaky","unit":{"Container":{"Image":"flaky.build","Exec":"sleep infinity"}}}
`
	must(t, h.WriteFile("/root/flaky/specs.json", []byte(specs), 0o644))
	r := syslet(h, "--soak", testSoak, "/root/flaky")
	t.Logf("apply:\n%s", r)
	if !r.OK() || !strings.Contains(r.Stdout, "0 failed, 0 not reached") {
		t.Fatalf("the apply did not end well after the build's second try:\n%s", r)
	}
	if !strings.Contains(r.Stderr, "trying it once more, alone") {
		t.Errorf("the retry is not logged:\n%s", r.Stderr)
	}
	log := h.MustRun(t, "journalctl -u flaky-build.service --no-pager -o cat")
	if !strings.Contains(log, "first try fails") || !strings.Contains(log, "second try builds") {
		t.Errorf("flaky-build.service did not fail once and then build:\n%s", log)
	}
	if st := prop(t, h, "flaky.service", "ActiveState"); st != "active" {
		t.Errorf("flaky.service is %s", st)
	}
	if got := strings.TrimSpace(h.MustRun(t, "podman inspect flaky --format '{{.ImageName}}'")); got != "localhost/flaky:v1" {
		t.Errorf("flaky runs %q", got)
	}
}
