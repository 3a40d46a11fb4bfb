//go:build integration

package integration

import (
	"regexp"
	"strings"
	"testing"
)

// rollbackTold matches a line that tells a host's rollback: syslet's
// "ROLLED BACK: run … failed its health gate (…)", its error "rolled back
// to run …", and push's lines that repeat the host's sentence.
var rollbackTold = regexp.MustCompile(`ROLLED BACK:|failed its health gate|rolled back to run`)

// TestPushRollbackSaidOnce: pushes to one host whose new image fails the
// health gate, alone and as a rollout (--batch 1): the host rolls back
// (it runs v1 again), and push's output tells it once for the host, with
// the runs and why, beside its table; not again in the host's own last
// lines or in the rollout's stop line (issue 55: 3 to 5 times).
func TestPushRollbackSaidOnce(t *testing.T) {
	t.Parallel()
	f := newFleet(t, 1)
	if r, d := f.rollout(f.specs("v1", 1)); r.code != 0 || d.Counts["applied"] != 1 {
		t.Fatalf("first deploy of v1: exit %d, counts %v\n%s", r.code, d.Counts, r)
	}
	for i, extra := range [][]string{nil, {"--batch", "1"}} {
		args := append(append([]string{"--remote-command", f.remote}, extra...), "web1", f.specs("v2", 2+i))
		r := f.e.push(args...)
		if r.code != 4 {
			t.Fatalf("the push that rolls back (%v): exit %d, want 4\n%s", extra, r.code, r)
		}
		mustContain(t, "web1's image", f.hosts[0].MustRun(t, "podman inspect -f '{{.ImageName}}' app"), "app:v1")
		var told []string
		for _, out := range []string{r.stdout, r.stderr} {
			for _, l := range strings.Split(out, "\n") {
				if rollbackTold.MatchString(l) {
					told = append(told, l)
				}
			}
		}
		if len(told) != 1 {
			t.Errorf("push %v: the rollback is told %d times, want once:\n%q\n%s", extra, len(told), told, r)
		}
	}
}
