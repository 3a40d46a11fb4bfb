package gate

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/probe"
)

// frozenHost is a system bus that stops answering: every read waits for
// its context. It counts the reads begun.
type frozenHost struct{ reads atomic.Int32 }

func (h *frozenHost) Health(ctx context.Context, _ []string) (map[string]host.UnitHealth, error) {
	h.reads.Add(1)
	<-ctx.Done()
	return nil, ctx.Err()
}

func (h *frozenHost) LastLog(ctx context.Context, _ string, _ time.Time, _ int) ([]string, error) {
	h.reads.Add(1)
	<-ctx.Done()
	return nil, ctx.Err()
}

func (h *frozenHost) ContainerHealth(ctx context.Context, _ string) (string, error) {
	h.reads.Add(1)
	<-ctx.Done()
	return "", ctx.Err()
}

func (h *frozenHost) Containers(ctx context.Context) (map[string]host.Container, error) {
	h.reads.Add(1)
	<-ctx.Done()
	return nil, ctx.Err()
}

func (h *frozenHost) Probe(ctx context.Context, _ string, p *probe.Probe) probe.Answer {
	<-ctx.Done()
	return p.Failed(p.TimedOut())
}

// lateHost is a host whose systemd shows web.service up throughout, while
// podman lists its container as containers: systemd has not yet seen the
// container end (conmon waits for podman's cleanup before it exits).
type lateHost struct{ containers map[string]host.Container }

func (lateHost) Health(_ context.Context, names []string) (map[string]host.UnitHealth, error) {
	out := map[string]host.UnitHealth{}
	for _, n := range names {
		out[n] = host.UnitHealth{ActiveState: "active", SubState: "running", InvocationID: "inv-1"}
	}
	return out, nil
}

func (lateHost) LastLog(context.Context, string, time.Time, int) ([]string, error) { return nil, nil }

func (lateHost) ContainerHealth(context.Context, string) (string, error) { return "", nil }

func (h lateHost) Containers(context.Context) (map[string]host.Container, error) {
	return h.containers, nil
}

func (lateHost) Probe(_ context.Context, _ string, p *probe.Probe) probe.Answer {
	return probe.Answer{Kind: p.Kind(), OK: true}
}

// A container that exited within the soak window fails the gate though
// systemd still shows its unit up; one that runs passes.
func TestRunContainerEndedUnseenBySystemd(t *testing.T) {
	units := []Unit{{service: "web.service", container: "web"}}
	lim := Limits{Start: time.Second, Soak: 10 * time.Millisecond}
	for _, tc := range []struct {
		name       string
		containers map[string]host.Container
		want       string // in the reason; "" passes
	}{
		{"running", map[string]host.Container{"web": {Name: "web", State: "running"}}, ""},
		// systemd hears conmon's READY a moment before podman marks the
		// container running: a container still starting has not ended.
		{"initialized", map[string]host.Container{"web": {Name: "web", State: "initialized"}}, ""},
		{"created", map[string]host.Container{"web": {Name: "web", State: "created"}}, ""},
		{"exited", map[string]host.Container{"web": {Name: "web", State: "exited"}}, "has its container web exited (podman)"},
		{"removed", map[string]host.Container{}, "lost its container web"},
	} {
		g := Run(context.Background(), lateHost{tc.containers}, units, lim, nil)
		switch {
		case tc.want == "" && !g.Passed():
			t.Errorf("%s: want the gate passed, got %+v", tc.name, g.Failures)
		case tc.want != "" && (len(g.Failures) != 1 || g.Failures[0].Service != "web.service" || !strings.Contains(g.Failures[0].Reason, tc.want)):
			t.Errorf("%s: want web.service failed with %q, got %+v", tc.name, tc.want, g.Failures)
		}
	}
}

// A gate whose reads hang fails within its read deadline and names it,
// instead of holding the run as long as the bus stays frozen.
func TestRunReadDeadline(t *testing.T) {
	units := []Unit{{service: "web.service", container: "web"}}
	h := &frozenHost{}
	g := Run(context.Background(), h, units, Limits{Start: time.Minute, Soak: time.Minute, Read: 50 * time.Millisecond}, nil)
	if g.Passed() || len(g.Failures) != 1 {
		t.Fatalf("want one failure, got %+v", g)
	}
	if r := g.Failures[0].Reason; !strings.Contains(r, "could not be read") || !strings.Contains(r, "within 50ms") {
		t.Errorf("the reason must name the read deadline: %q", r)
	}
	// The failure is the gate's: web.service is not to blame for a bus
	// that does not answer, and has no log read for it.
	if f := g.Failures[0]; f.Service != "" || f.Subject() != "health gate" || f.Log != nil {
		t.Errorf("a read failure must name no unit and carry no unit's log: %+v", f)
	}
	// One read of the state, ended by its deadline: the gate does not
	// keep asking a bus that does not answer for the minute of its start
	// window.
	if n := h.reads.Load(); n != 1 {
		t.Errorf("the gate began %d reads of a frozen bus, want 1", n)
	}
}

// The caller's own end is not reported as the read deadline.
func TestRunReadDeadlineNotTheCallers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	g := Run(ctx, &frozenHost{}, []Unit{{service: "web.service"}}, Limits{Start: time.Minute, Read: 200 * time.Millisecond}, nil)
	if len(g.Failures) != 1 || strings.Contains(g.Failures[0].Reason, "within 200ms") {
		t.Errorf("got %+v", g)
	}
}

// A unit that goes down during the soak window is said to have gone down
// that far into it, not to have failed to come up "within" the whole
// window: the gate's verdict came after 326ms, and its reason agrees.
func TestSoakReasonSaysWhenItWentDown(t *testing.T) {
	up := host.UnitHealth{ActiveState: "active", SubState: "running", InvocationID: "a"}
	down := host.UnitHealth{ActiveState: "deactivating", SubState: "stop-post", Result: "exit-code", InvocationID: "a", ExecMainCode: 1, ExecMainStatus: 1}
	got := stillUp(up, down, 326*time.Millisecond, 5*time.Second)
	want := "went down 326ms into the 5s soak window: deactivating/stop-post; result exit-code, exit status 1"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	restarted := up
	restarted.NRestarts = 2
	if got := stillUp(up, restarted, 1200*time.Millisecond, 5*time.Second); !strings.HasPrefix(got, "restarted 2 time(s) by Restart= 1.2s into the 5s soak window") {
		t.Errorf("restarted: %q", got)
	}
}
