package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/host/podman"
	"github.com/syslet/syslet/pkg/host/stage"
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
	quadlet string
	sd      *systemd.Manager
	pm      *podman.Client
}

func openLive(ctx context.Context, req *Request) (*liveHost, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("syslet manages rootful quadlet units and must run as root (or use --root DIR with --diff)")
	}
	sd, err := dialSystemd(ctx, req.DialTimeout)
	if err != nil {
		return nil, err
	}
	return &liveHost{quadlet: req.Quadlet, sd: sd, pm: podman.New(podman.DefaultURI)}, nil
}

// dialSystemd connects within timeout. The connection lives as long as ctx
// (go-systemd closes it when its dial context ends), so the deadline is
// raced here instead of put on the dial's context.
func dialSystemd(ctx context.Context, timeout time.Duration) (*systemd.Manager, error) {
	type dialed struct {
		m   *systemd.Manager
		err error
	}
	ch := make(chan dialed, 1)
	go func() {
		m, err := systemd.Dial(ctx)
		ch <- dialed{m, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case d := <-ch:
		if d.err != nil {
			return nil, fmt.Errorf("connecting to systemd: %w", d.err)
		}
		return d.m, nil
	case <-t.C:
		go func() {
			if d := <-ch; d.m != nil {
				d.m.Close()
			}
		}()
		return nil, fmt.Errorf("connecting to systemd did not finish within %s", timeout)
	}
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

func (l *liveHost) executor(files fsroot.Root) executor.Host {
	return executor.Host{Files: files, Systemd: l.sd, Podman: l.pm}
}

// stage runs the host's generator over the complete future unit set and
// verifies the services of the units this plan writes. Messages name the
// spec each unit file comes from.
func (l *liveHost) stage(ctx context.Context, p *plan.Plan, out *render.Output, warn io.Writer) error {
	var changed []string
	for _, a := range p.Actions {
		if a.Op == plan.OpWriteUnit {
			changed = append(changed, a.Unit)
		}
	}
	s := stage.Stager{Generator: l.quadlet, Verify: "systemd-analyze"}
	if _, err := exec.LookPath(s.Verify); err != nil {
		return fmt.Errorf("staging needs systemd-analyze: %w", err)
	}
	warnings, err := s.Check(ctx, p.Future, p.Current, changed)
	for _, w := range warnings {
		fmt.Fprintln(warn, "syslet: staging warning:", attribute(w, out))
	}
	var se *stage.Error
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
