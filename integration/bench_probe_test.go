//go:build integration && bench

package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/probe"
)

// benchProbe measures what a readiness probe adds to one deploy (issue
// 52: at most one probe interval). The same change — a container's image,
// back and forth between two builds of the test server — is applied with
// the default soak, once without a probe and once probed with GET
// :8080/up at the default interval, alternately on one host, so both
// sides see the same load. The probed gate begins its soak window when
// the probe first passes; the unprobed one when systemd says the
// container runs.
func benchProbe(t *testing.T, runs int, tb *table) {
	h := startWithSyslet(t)
	b := &bench{t: t, h: h}
	b.must("systemctl enable --now podman.socket && mkdir -p /root/bench")
	markers := []string{"a", "b"}
	for i, m := range markers {
		image := serverImage(t, h, "benchsrv:"+m, map[string]string{"MARKER": m})
		for _, probed := range []bool{false, true} {
			var p map[string]any
			if probed {
				p = map[string]any{"http": map[string]any{"port": 8080, "path": "/up"}}
			}
			must(t, h.WriteFile(probeSpecFile(i, probed), []byte(web(image, p)), 0o644))
		}
	}
	cur := 0
	b.must("syslet " + probeSpecFile(cur, false) + " >/dev/null")
	deploy := func(probed bool) func() time.Duration {
		return func() time.Duration {
			cur = 1 - cur
			d := b.timed("syslet " + probeSpecFile(cur, probed))
			if got := strings.TrimSpace(b.must("curl -sS --max-time 5 http://127.0.0.1:8080/")); got != markers[cur] {
				t.Fatalf("after the deploy the server answers %q, want %q", got, markers[cur])
			}
			return d
		}
	}
	f, s := alternate(t, "one change, probed", runs, deploy(false), deploy(true))
	work := fmt.Sprintf("one change with the default %s soak: probed (GET :8080/up every %s) against the unprobed gate", gate.DefaultSoak, probe.DefaultInterval)
	tb.add(row{section: "apply", work: work, floor: f, other: s, peer: "syslet"})
	added := s.median() - f.median()
	met := "met"
	if added > probe.DefaultInterval {
		met = "**not met**"
	}
	tb.add(row{section: "apply", work: "… what the probe adds (tool median − floor median)", peer: "syslet",
		value: fmt.Sprintf("%+.3f s", added.Seconds()), verdict: fmt.Sprintf("≤ %s (one interval) %s", probe.DefaultInterval, met)})
}

// probeSpecFile is the spec file of build i of the server, probed or not.
func probeSpecFile(i int, probed bool) string {
	return fmt.Sprintf("/root/bench/probe-%d-%t.json", i, probed)
}
