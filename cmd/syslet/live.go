package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/host/podman"
	"github.com/syslet/syslet/pkg/host/quadlet"
	"github.com/syslet/syslet/pkg/host/systemd"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// liveHost is the running system: systemd over D-Bus (one connection for
// the run: every live plan reads unit states, so it is dialled at once),
// podman over its REST socket (connected on first use: a run that needs no
// image or secret never dials it), and the quadlet generator for staging.
type liveHost struct {
	opts applyOptions
	sd   *systemd.Manager
	pm   *podman.Client
}

func openLive(o applyOptions) (*liveHost, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("syslet manages rootful quadlet units and must run as root (or use --root DIR with --diff)")
	}
	sd, err := systemd.Dial(context.Background())
	if err != nil {
		return nil, fmt.Errorf("connecting to systemd: %w", err)
	}
	return &liveHost{opts: o, sd: sd, pm: podman.New(podman.DefaultURI)}, nil
}

func (l *liveHost) Close() { l.sd.Close() }

// podmanRelease reads the host's podman release over its API.
func (l *liveHost) podmanRelease(ctx context.Context) (unit.Podman, error) {
	v, err := l.pm.Version(ctx)
	if err != nil {
		return unit.Podman{}, err
	}
	p, err := unit.ParsePodman(v)
	if err != nil {
		return unit.Podman{}, fmt.Errorf("the host's podman: %w", err)
	}
	return p, nil
}

func (l *liveHost) systemd() plan.UnitReader { return l.sd }
func (l *liveHost) podman() plan.StoreReader { return l.pm }

func (l *liveHost) executor(files fsroot.Root) executor.Host {
	return executor.Host{Files: files, Systemd: l.sd, Podman: l.pm}
}

// stage runs the host's generator over the complete future unit set and
// verifies the services of the units this plan writes. Messages name the
// spec each unit file comes from.
func (l *liveHost) stage(ctx context.Context, p *plan.Plan, out *render.Output) error {
	var changed []string
	for _, a := range p.Actions {
		if a.Op == plan.OpWriteUnit {
			changed = append(changed, a.Unit)
		}
	}
	s := quadlet.Stager{Generator: l.opts.quadlet, Verify: "systemd-analyze"}
	if _, err := exec.LookPath(s.Verify); err != nil {
		return fmt.Errorf("staging needs systemd-analyze: %w", err)
	}
	warnings, err := s.Check(ctx, p.Future, p.Current, changed)
	for _, w := range warnings {
		fmt.Fprintln(os.Stderr, "syslet: staging warning:", attribute(w, out))
	}
	var se *quadlet.Error
	if errors.As(err, &se) {
		for i, m := range se.Output {
			se.Output[i] = attribute(m, out)
		}
	}
	return err
}

// attribute appends the spec a message's unit file comes from.
func attribute(msg string, out *render.Output) string {
	for _, u := range out.Units {
		if strings.Contains(msg, u.FileName) || strings.Contains(msg, u.Service) {
			return msg + "  [spec: " + u.Spec.Source + " " + u.Spec.Path() + "]"
		}
	}
	return msg
}
