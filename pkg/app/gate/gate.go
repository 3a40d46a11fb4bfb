package gate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/probe"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// Host is what the gate reads: systemd's counters and a unit's last log
// lines, podman's health check verdicts, and one try of a container's
// readiness probe, run from the host (each try bounded by the probe's own
// timeout).
type Host interface {
	Health(ctx context.Context, names []string) (map[string]host.UnitHealth, error)
	LastLog(ctx context.Context, name string, since time.Time, n int) ([]string, error)
	ContainerHealth(ctx context.Context, name string) (string, error)
	Containers(ctx context.Context) (map[string]host.Container, error)
	Probe(ctx context.Context, container string, p *probe.Probe) probe.Answer
}

// DefaultSoak is how long started containers must stay up.
const DefaultSoak = 5 * time.Second

// logLines is how many of a failed unit's lines its failure carries: for
// a container, its own output (pkg/host/systemd's LastLog leaves podman's
// noise out) and then how systemd saw it end.
const logLines = 10

// gatePoll is how often the gate looks while it waits.
const gatePoll = 250 * time.Millisecond

// Report is the health gate's verdict on one run.
type Report struct {
	// Units are the services the gate watched.
	Units []string      `json:"units"`
	Soak  time.Duration `json:"soak"`
	Took  time.Duration `json:"took"`
	// Failures are the units that did not pass; none means passed.
	Failures []Failure `json:"failures,omitempty"`
	// Interrupted is set when a signal ended the gate before its verdict.
	Interrupted bool `json:"interrupted,omitempty"`
	// Probes are what the probed containers' probes found.
	Probes []Probed `json:"probes,omitempty"`
}

// Passed reports whether every gated unit passed.
func (g *Report) Passed() bool { return g == nil || (len(g.Failures) == 0 && !g.Interrupted) }

// Failure is one unit that did not pass the gate: why, in systemd's
// terms, and its last journal lines. A failure with no Service is the
// gate's own: it could not read the units' state at all (systemd did not
// answer within the read deadline), so no unit is to blame and no unit's
// log says why.
type Failure struct {
	Service string   `json:"service"`
	Reason  string   `json:"reason"`
	Log     []string `json:"log,omitempty"`
}

// Subject names what failed: the unit, or the health gate itself.
func (f Failure) Subject() string {
	if f.Service == "" {
		return "health gate"
	}
	return f.Service
}

// Unit is one service the gate watches.
type Unit struct {
	service   string
	container string // podman's name for it
	oneshot   bool
	// health: a health check without Notify=healthy, so the start job did
	// not wait for it; podman's verdict is awaited here.
	health bool
	// probe is the container's readiness probe (nil: none).
	probe *probe.Probe
}

// Gated lists the containers whose start, restart or reload landed in res, and
// those of more services (an earlier run's that were never judged): what
// the gate watches after a run.
func Gated(res *executor.Result, out *render.Output, more ...string) []Unit {
	var services []string
	if res != nil {
		for _, a := range res.Applied {
			if a.Op == plan.OpStart || a.Op == plan.OpRestart || a.Op == plan.OpReload {
				services = append(services, a.Target)
			}
		}
	}
	return of(out, append(services, more...))
}

// of lists the containers of out among services: each container's (a
// template's instances each on its own), and for a pod's service the
// containers it starts.
func of(out *render.Output, services []string) []Unit {
	byService := map[string]*render.Unit{}
	members := map[string][]string{} // pod service → its containers' services
	pods := map[string]string{}      // pod unit name → its service
	for _, u := range out.Units {
		if u.Kind == spec.Pod {
			pods[u.Name] = u.Service
		}
	}
	for _, u := range out.Units {
		if u.Kind == spec.Container && !u.Template {
			byService[u.Service] = u
			if svc, ok := pods[u.Pod]; ok && startsWithPod(u) {
				members[svc] = append(members[svc], u.Service)
			}
		}
	}
	var all []string
	for _, s := range services {
		all = append(all, s)
		all = append(all, members[s]...)
	}
	var units []Unit
	seen := map[string]bool{}
	for _, s := range all {
		u := byService[s]
		if u == nil || seen[u.Service] || u.State == spec.Stopped {
			continue
		}
		seen[u.Service] = true
		merged := u.MergedFile()
		_, hc := merged.Last(unit.Container, unit.KeyHealthCmd)
		notify, _ := merged.Last(unit.Container, unit.KeyNotify)
		units = append(units, Unit{service: u.Service, container: u.Container, oneshot: u.State == spec.Oneshot,
			health: hc && notify != "healthy", probe: u.Probe})
	}
	slices.SortFunc(units, func(a, b Unit) int { return strings.Compare(a.service, b.service) })
	return units
}

// startsWithPod reports whether a container's pod starts it
// ([Container] StartWithPod=, true unless it says otherwise).
func startsWithPod(u *render.Unit) bool {
	v, ok := u.MergedFile().Last(unit.Container, unit.KeyStartWithPod)
	if !ok {
		return true
	}
	switch strings.ToLower(v) {
	case "1", "yes", "true", "on":
		return true
	}
	return false
}

// Limits bound one gate: how long units have to come up, how long they
// must then stay up, and how long any one read of the host may take.
type Limits struct {
	Start, Soak time.Duration
	// Read bounds each read of systemd, podman or the journal: a system bus
	// that stops answering fails the gate (naming the deadline) instead of
	// holding the run without end. Zero: no deadline of its own.
	Read time.Duration
	// Since is when the run began changing the host: a failed unit's log
	// lines before it are an earlier run's, and are left out of its
	// failure (zero: all of them).
	Since time.Time
}

// Run waits for the units to be up within lim.Start and then soaks them
// for lim.Soak; stop ends it early (interrupted). A unit that fails ends
// the gate at once: no need to wait out the window to roll back.
func Run(ctx context.Context, reader Host, units []Unit, lim Limits, stop <-chan struct{}) *Report {
	start := time.Now()
	g := &Report{Soak: lim.Soak}
	for _, u := range units {
		g.Units = append(g.Units, u.service)
	}
	if len(units) == 0 {
		return g
	}
	// A probe that becomes ready or fails wakes the gate's wait.
	wake := make(chan struct{}, 1)
	// The probes run from the start to the verdict, on their own
	// intervals; the gate reads their tally as it polls.
	pctx, stopProbes := context.WithCancel(ctx)
	r := &gating{ctx: ctx, live: deadlineHost{reader, lim.Read}, lim: lim, stop: stop, wake: wake, g: g,
		probes: startProbes(pctx, reader, units, start, wake)}
	defer func() {
		stopProbes()
		g.Took = time.Since(start)
		for _, u := range units {
			if p := r.probes[u.service]; p != nil {
				g.Probes = append(g.Probes, p.report())
			}
		}
	}()
	if base, ok := r.up(units, start.Add(lim.Start)); ok {
		r.soak(units, base)
	}
	return g
}

func services(units []Unit) []string {
	out := make([]string, len(units))
	for i, u := range units {
		out[i] = u.service
	}
	return out
}

// upYet judges a unit on its way up: a reason when it failed, or whether
// it is up yet.
func upYet(u Unit, h host.UnitHealth) (why string, up bool) {
	if u.oneshot {
		switch h.ActiveState {
		case "activating", "reloading", "":
			return "", false
		}
		if h.Result != "success" || exitStatus(h) != 0 {
			return "the oneshot did not exit 0: " + ended(h), false
		}
		return "", true
	}
	switch {
	case h.ActiveState == "failed":
		return "failed: " + ended(h), false
	case h.NRestarts > 0:
		return fmt.Sprintf("restarted %d time(s) by Restart= before it was up; %s", h.NRestarts, ended(h)), false
	case h.SubState == "auto-restart":
		return "exited and waits to be restarted: " + ended(h), false
	}
	return "", h.Up()
}

// stillUp judges a service during the soak window against how it was
// when it came up; into is how far into the window it was found so, which
// the reason names: a unit that went down after 300ms did not fail to
// come up "within the 5s window", it went down 300ms into it.
func stillUp(was, now host.UnitHealth, into, soak time.Duration) string {
	when := fmt.Sprintf("%s into the %s soak window", into.Round(time.Millisecond), soak)
	switch {
	case now.NRestarts > was.NRestarts && now.Up():
		// Back up already: what it exited with went with that process.
		return fmt.Sprintf("restarted %d time(s) by Restart= %s (NRestarts %d → %d): it exited and was started again", now.NRestarts-was.NRestarts, when, was.NRestarts, now.NRestarts)
	case now.NRestarts > was.NRestarts:
		return fmt.Sprintf("restarted %d time(s) by Restart= %s (NRestarts %d → %d); %s", now.NRestarts-was.NRestarts, when, was.NRestarts, now.NRestarts, ended(now))
	case now.InvocationID != was.InvocationID:
		return fmt.Sprintf("started again %s (InvocationID changed); %s", when, ended(now))
	case !now.Up():
		return fmt.Sprintf("went down %s: %s/%s; %s", when, now.ActiveState, now.SubState, ended(now))
	}
	return ""
}

// containerUp judges a service that systemd shows up by its container as
// podman lists it: a reason when the container is not running.
func containerUp(u Unit, all map[string]host.Container) string {
	c, ok := all[u.container]
	switch {
	case !ok:
		return fmt.Sprintf("lost its container %s: podman has none by that name while systemd still shows the unit up (it exited and was removed)", u.container)
	case c.State == "created", c.State == "initialized":
		// Still starting: with Notify=conmon systemd hears READY a
		// moment before podman marks the container running, so a short
		// soak can end in between. Starting is not ending.
	case c.State != "running":
		return fmt.Sprintf("has its container %s %s (podman) while systemd still shows the unit up", u.container, c.State)
	}
	return ""
}

// healthYet asks podman for a container's health check verdict.
func healthYet(ctx context.Context, live Host, u Unit) (why string, healthy bool) {
	st, err := live.ContainerHealth(ctx, u.container)
	switch {
	case err != nil:
		return "its health could not be read: " + err.Error(), false
	case st == "unhealthy":
		return "its health check reports unhealthy", false
	}
	return "", st == "healthy" || st == ""
}

// deadlineHost gives each read of the host its own deadline, and names it
// in the error when the read runs out of time.
type deadlineHost struct {
	Host
	read time.Duration
}

func (d deadlineHost) bound(ctx context.Context, f func(context.Context) error) error {
	if d.read <= 0 {
		return f(ctx)
	}
	rctx, cancel := context.WithTimeout(ctx, d.read)
	defer cancel()
	err := f(rctx)
	if err != nil && rctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		return fmt.Errorf("the read did not finish within %s: %w", d.read, err)
	}
	return err
}

func (d deadlineHost) Health(ctx context.Context, names []string) (h map[string]host.UnitHealth, err error) {
	err = d.bound(ctx, func(ctx context.Context) error { h, err = d.Host.Health(ctx, names); return err })
	return h, err
}

func (d deadlineHost) LastLog(ctx context.Context, name string, since time.Time, n int) (lines []string, err error) {
	err = d.bound(ctx, func(ctx context.Context) error { lines, err = d.Host.LastLog(ctx, name, since, n); return err })
	return lines, err
}

func (d deadlineHost) ContainerHealth(ctx context.Context, name string) (st string, err error) {
	err = d.bound(ctx, func(ctx context.Context) error { st, err = d.Host.ContainerHealth(ctx, name); return err })
	return st, err
}

func (d deadlineHost) Containers(ctx context.Context) (all map[string]host.Container, err error) {
	err = d.bound(ctx, func(ctx context.Context) error { all, err = d.Host.Containers(ctx); return err })
	return all, err
}

// exitStatus is the main process's exit status; a signal counts as one.
func exitStatus(h host.UnitHealth) int32 {
	if h.ExecMainCode == 1 { // CLD_EXITED
		return h.ExecMainStatus
	}
	if h.ExecMainCode == 0 {
		return 0
	}
	return 128 + h.ExecMainStatus
}

// ended says how the main process last ended, in systemd's words.
func ended(h host.UnitHealth) string {
	s := "result " + orDash(h.Result)
	switch h.ExecMainCode {
	case 1:
		s += fmt.Sprintf(", exit status %d", h.ExecMainStatus)
	case 2, 3:
		s += fmt.Sprintf(", killed by signal %d", h.ExecMainStatus)
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
