package gate

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/probe"
)

// probeHost is a host whose units are all up and whose containers answer
// their probes as answer says for the nth try (from 0).
type probeHost struct {
	lateHost
	answer func(n int, p *probe.Probe) probe.Answer

	mu    sync.Mutex
	tries map[string]int
}

func (h *probeHost) Probe(ctx context.Context, container string, p *probe.Probe) probe.Answer {
	h.mu.Lock()
	n := h.tries[container]
	h.tries[container]++
	h.mu.Unlock()
	return h.answer(n, p)
}

func newProbeHost(answer func(n int, p *probe.Probe) probe.Answer) *probeHost {
	return &probeHost{lateHost: lateHost{map[string]host.Container{"web": {Name: "web", State: "running"}, "db": {Name: "db", State: "running"}}},
		answer: answer, tries: map[string]int{}}
}

var (
	refused = func(p *probe.Probe) probe.Answer { return p.Failed("connection refused") }
	ok      = func(p *probe.Probe) probe.Answer { return p.HTTP.JudgeHTTP(200, []byte("ok")) }
	down    = func(p *probe.Probe) probe.Answer { return p.HTTP.JudgeHTTP(503, []byte("db unreachable\n")) }
)

func upProbe(deadline time.Duration) *probe.Probe {
	return &probe.Probe{HTTP: &probe.HTTP{Port: 8080, Path: "/up", Status: probe.DefaultStatus},
		Interval: probe.Duration(10 * time.Millisecond), Timeout: probe.Duration(20 * time.Millisecond),
		Successes: 1, Failures: 3, Deadline: probe.Duration(deadline)}
}

// A probed container passes once its probe is ready, after the tries it
// took; one without a probe is never asked.
func TestProbeReady(t *testing.T) {
	h := newProbeHost(func(n int, p *probe.Probe) probe.Answer {
		if n < 2 {
			return refused(p)
		}
		return ok(p)
	})
	units := []Unit{{service: "web.service", container: "web", probe: upProbe(time.Second)}, {service: "db.service", container: "db"}}
	g := Run(context.Background(), h, units, Limits{Start: time.Second, Soak: 50 * time.Millisecond}, nil)
	if !g.Passed() {
		t.Fatalf("the gate failed: %+v", g.Failures)
	}
	if len(g.Probes) != 1 || !g.Probes[0].Ready || g.Probes[0].Tries < 3 || g.Probes[0].Service != "web.service" ||
		g.Probes[0].Last == nil || g.Probes[0].Last.String() != `answered 200 "ok"` {
		t.Errorf("probes: %+v", g.Probes)
	}
	if h.tries["db"] != 0 {
		t.Errorf("the container without a probe was probed %d times", h.tries["db"])
	}
}

// The gate's verdicts on a probe: not ready by its deadline, failing
// after it was ready, each naming the probe and its last answer.
func TestProbeFails(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(n int, p *probe.Probe) probe.Answer
		want   string
	}{
		{"never ready", func(_ int, p *probe.Probe) probe.Answer { return down(p) },
			`probe GET :8080/up not ready within 150ms: answered 503 "db unreachable" `},
		{"refused, then 503", func(n int, p *probe.Probe) probe.Answer {
			if n%2 == 0 {
				return refused(p)
			}
			return down(p)
		}, `probe GET :8080/up not ready within 150ms: failed `},
		{"503 after refused", func(n int, p *probe.Probe) probe.Answer {
			if n < 2 {
				return refused(p)
			}
			return down(p)
		}, `probe GET :8080/up not ready within 150ms: answered 503 "db unreachable" `},
		{"refused and 503 once ready", func(n int, p *probe.Probe) probe.Answer {
			switch {
			case n < 2:
				return ok(p)
			case n%2 == 0:
				return refused(p)
			}
			return down(p)
		}, `probe GET :8080/up failed 3 times in a row, the last: connection refused`},
		{"times out", func(_ int, p *probe.Probe) probe.Answer { return p.Failed(p.TimedOut()) },
			`probe GET :8080/up not ready within 150ms: timed out after 20ms `},
		{"fails in the soak", func(n int, p *probe.Probe) probe.Answer {
			if n < 2 {
				return ok(p)
			}
			return down(p)
		}, `probe GET :8080/up answered 503 "db unreachable" 3 times in a row`},
	} {
		h := newProbeHost(tc.answer)
		units := []Unit{{service: "web.service", container: "web", probe: upProbe(150 * time.Millisecond)}}
		g := Run(context.Background(), h, units, Limits{Start: time.Second, Soak: time.Second}, nil)
		if len(g.Failures) != 1 || g.Failures[0].Service != "web.service" || !strings.HasPrefix(g.Failures[0].Reason, tc.want) {
			t.Errorf("%s: want web.service failed with %q, got %+v", tc.name, tc.want, g.Failures)
		}
		if g.Took > 900*time.Millisecond {
			t.Errorf("%s: the gate waited out the soak window (%s) after the probe failed", tc.name, g.Took)
		}
	}
}

// A probe that fails fewer times in a row than its failures passes.
func TestProbeFlapsBelowFailures(t *testing.T) {
	h := newProbeHost(func(n int, p *probe.Probe) probe.Answer {
		if n%3 == 2 {
			return down(p)
		}
		return ok(p)
	})
	units := []Unit{{service: "web.service", container: "web", probe: upProbe(time.Second)}}
	if g := Run(context.Background(), h, units, Limits{Start: time.Second, Soak: 100 * time.Millisecond}, nil); !g.Passed() {
		t.Errorf("the gate failed: %+v", g.Failures)
	}
}
