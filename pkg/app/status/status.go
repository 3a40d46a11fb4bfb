package status

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/host/systemd"
	"github.com/syslet/syslet/pkg/redact"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/render"
)

// Host is what a status read asks of systemd.
type Host interface {
	Health(ctx context.Context, names []string) (map[string]host.UnitHealth, error)
}

// Services are the services of out that should be running: every
// container's (a template's instances each on its own) but stopped ones
// and oneshots, in service name order, with podman's name for each.
func Services(out *render.Output) []host.ServiceHealth {
	var s []host.ServiceHealth
	for _, u := range out.Units {
		if u.Kind == spec.Container && !u.Template && u.State == spec.Running {
			s = append(s, host.ServiceHealth{Service: u.Service, Container: u.Container})
		}
	}
	slices.SortFunc(s, func(a, b host.ServiceHealth) int { return strings.Compare(a.Service, b.Service) })
	return s
}

// Read asks systemd for the health of every service of out that should be
// running. A service systemd does not know is reported inactive, not as an
// error.
func Read(ctx context.Context, h Host, out *render.Output) (host.HealthReport, error) {
	services := Services(out)
	names := make([]string, len(services))
	for i, s := range services {
		names[i] = s.Service
	}
	health, err := h.Health(ctx, names)
	if err != nil {
		return host.HealthReport{}, err
	}
	for i := range services {
		services[i].UnitHealth = health[services[i].Service]
	}
	return host.HealthReport{Services: services}, nil
}

// Dial connects to systemd within timeout, for the commands (which reach
// the host's adapters only through this layer).
func Dial(ctx context.Context, timeout time.Duration) (*systemd.Manager, error) {
	return systemd.DialWithin(ctx, timeout)
}

// Down lists the services of r that are not up.
func Down(r host.HealthReport) []string {
	var down []string
	for _, s := range r.Services {
		if !s.Up() {
			down = append(down, s.Service)
		}
	}
	return down
}

// Write prints r as a table: service, container, state, restarts by
// Restart=, invocation; then the probes and their answers; then how many
// are up, and which probes fail.
func Write(w io.Writer, r host.HealthReport) {
	if len(r.Services) == 0 {
		fmt.Fprintln(w, "No container of the specs should be running.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tCONTAINER\tSTATE\tRESTARTS\tINVOCATION")
	for _, s := range r.Services {
		state := s.ActiveState + "/" + s.SubState
		if s.Result != "" && s.Result != "success" {
			state += " (" + s.Result + ")"
		}
		inv := s.InvocationID
		if inv == "" {
			inv = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", redact.Escape(s.Service), redact.Escape(s.Container), redact.Escape(state), s.NRestarts, inv)
	}
	tw.Flush()
	writeProbes(w, r)
	down := Down(r)
	fmt.Fprintf(w, "%d of %d up", len(r.Services)-len(down), len(r.Services))
	if len(down) > 0 {
		fmt.Fprintf(w, "; not up: %s", redact.Escape(strings.Join(down, ", ")))
	}
	if failing := Failing(r); len(failing) > 0 {
		fmt.Fprintf(w, "; probe failing: %s", redact.Escape(strings.Join(failing, ", ")))
	}
	fmt.Fprintln(w)
}
