//go:build integration

package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/loadclient/load"
)

// TestOutageReproduced is the reproduction of the zero-downtime issue: an
// image change of a container serving a published port is a stop in step
// 2 and a start in step 9, and the port refuses connections in between.
// It logs what a load client inside the host saw during the deploy; the
// path stays for containers with neither a socket nor a probe.
func TestOutageReproduced(t *testing.T) {
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket")
	v1 := serverImage(t, h, "srv:v1", map[string]string{"MARKER": "v1"})
	v2 := serverImage(t, h, "srv:v2", map[string]string{"MARKER": "v2"})
	spec := func(img string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":%q,"PublishPort":"8080:8080"}}}`, img)
	}
	h.MustRun(t, "mkdir -p /srv/specs")
	must(t, h.WriteFile("/srv/specs/web.json", []byte(spec(v1)), 0o644))
	h.MustRun(t, "syslet /srv/specs")
	l := startLoad(t, h, "http://127.0.0.1:8080/", 700, 2*time.Minute)
	time.Sleep(2 * time.Second)
	must(t, h.WriteFile("/srv/specs/web.json", []byte(spec(v2)), 0o644))
	t0 := guestNow(t, h)
	h.MustRun(t, "syslet /srv/specs")
	t1 := guestNow(t, h)
	time.Sleep(2 * time.Second)
	rs := l.stop(t)
	s := load.Summarize(rs, t0, t1)
	t.Logf("stop/start through syslet: %s", s)
	t.Logf("whole run: %s", load.Summarize(rs, time.Time{}, time.Time{}))

	if out := h.MustRun(t, "curl -sf http://127.0.0.1:8080/"); strings.TrimSpace(out) != "v2" {
		t.Errorf("after the deploy the server answers %q, want v2", out)
	}
}
