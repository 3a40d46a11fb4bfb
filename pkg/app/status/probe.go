package status

import (
	"context"
	"fmt"
	"io"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/host/podman"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/probe"
	"github.com/syslet/syslet/pkg/redact"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// Prober runs one try of a container's readiness probe from the host
// (the podman adapter: Podman).
type Prober interface {
	Probe(ctx context.Context, container string, p *probe.Probe) probe.Answer
}

// Podman is the prober for the commands: podman over its socket, dialled
// on the first probe (a status of containers without probes never wakes
// podman).
func Podman() *podman.Client { return podman.New(podman.DefaultURI) }

// unitKind bounds the read of an installed unit for its marker.
var unitKind = bounded.Kind{What: "a unit file", Max: 1 << 20}

// InstalledProbe is the probe the installed unit of u records in its
// marker under root (an instance's: its template's), nil when it has
// none or cannot be read: the marker is what syslet installed, which the
// specs at hand may not be yet.
func InstalledProbe(root string, u *render.Unit) *probe.Probe {
	file := u.FileName
	if u.Link != "" {
		file = u.Link
	}
	b, err := bounded.ReadFile(layout.Under(root, layout.UnitPath(file)), unitKind)
	if err != nil {
		return nil
	}
	f, err := unit.Parse(b)
	if err != nil || !unit.Managed(f) {
		return nil
	}
	v, ok := f.Last(unit.Syslet, unit.KeyProbe)
	if !ok {
		return nil
	}
	p, err := probe.Parse(v)
	if err != nil {
		return nil
	}
	return p
}

// Probe asks, once and all at once, the installed probe of each service
// of r that is up (every try bounded by its probe's timeout), and lists
// every probed service in r.Probes, in r's order. A service that is not
// up is listed unasked: systemd already says it is down.
func Probe(ctx context.Context, pr Prober, root string, out *render.Output, r *host.HealthReport) {
	byService := map[string]*render.Unit{}
	for _, u := range out.Units {
		byService[u.Service] = u
	}
	r.Probes = nil
	var probes []*probe.Probe
	for _, s := range r.Services {
		u := byService[s.Service]
		if u == nil {
			continue
		}
		p := InstalledProbe(root, u)
		if p == nil {
			continue
		}
		r.Probes = append(r.Probes, host.Probed{Unit: u.FileName, Service: s.Service, Container: s.Container, Probe: p.String(), Name: p.Name()})
		probes = append(probes, p)
		if !s.Up() {
			probes[len(probes)-1] = nil
		}
	}
	var wg sync.WaitGroup
	for i, p := range probes {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := pr.Probe(ctx, r.Probes[i].Container, p)
			r.Probes[i].Answer = &a
		}()
	}
	wg.Wait()
}

// Failing lists the services whose probe was asked and did not pass.
func Failing(r host.HealthReport) []string {
	var out []string
	for _, p := range r.Probes {
		if p.Failing() {
			out = append(out, p.Service)
		}
	}
	return out
}

// writeProbes prints r's probes as a table: the probe, its service, its
// answer, how long it took and where the host reached the container.
func writeProbes(w io.Writer, r host.HealthReport) {
	if len(r.Probes) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tPROBE\tANSWER\tLATENCY\tVIA")
	for _, p := range r.Probes {
		answer, took, via := "- (not up)", "-", "-"
		if a := p.Answer; a != nil {
			answer, took, via = a.String(), latency(a.Took), a.Via
			if via == "" {
				via = "-"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", redact.Escape(p.Service), redact.Escape(p.Probe), redact.Escape(answer), took, redact.Escape(via))
	}
	tw.Flush()
}

// latency is a try's duration as the table shows it: to a tenth of a
// millisecond below a second.
func latency(d time.Duration) string {
	if d < time.Second {
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}
