package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/host/podman"
	"github.com/syslet/syslet/pkg/host/stage"
	"github.com/syslet/syslet/pkg/host/systemd"
	"github.com/syslet/syslet/pkg/probe"
	"github.com/syslet/syslet/plan"
)

// Systemd is what one apply asks of the host's systemd: unit states for
// the plan, jobs for the executor, and when each service last started (a
// resumed oneshot must not run twice).
type Systemd interface {
	plan.UnitReader
	plan.ReloadReader
	executor.Systemd
	LastStarted(ctx context.Context, names []string) (map[string]time.Time, error)
	// Health reads what the health gate judges services by.
	Health(ctx context.Context, names []string) (map[string]host.UnitHealth, error)
	Close()
}

// Podman is what one apply asks of podman: its stores for the plan,
// changes for the executor, and its release for the converter check.
type Podman interface {
	plan.StoreReader
	// TagReader asks registries what a tag names now: `syslet update`
	// alone uses it.
	plan.TagReader
	executor.Podman
	Version(ctx context.Context) (string, error)
	// Containers lists podman's containers with the images they run (a
	// generation records them); ContainerHealth is one container's health
	// check verdict and Probe one try of its readiness probe (the health
	// gate).
	Containers(ctx context.Context) (map[string]host.Container, error)
	ContainerHealth(ctx context.Context, name string) (string, error)
	Probe(ctx context.Context, container string, p *probe.Probe) probe.Answer
	ImageExists(ctx context.Context, ref string) (bool, error)
	// VolumeUsers lists the services of the containers mounting the
	// volume, and the containers no service runs: what filling it from a
	// backup stops (restore.go).
	VolumeUsers(ctx context.Context, name string) (services, others []string, err error)
}

// Stager checks the unit set an apply would leave with the host's own
// quadlet generator and systemd-analyze verify (pkg/host/stage).
type Stager interface {
	Check(ctx context.Context, future, current map[string][]byte, verify []string) (stage.Result, error)
}

// Live is the running system: systemd, podman and the staging tools.
type Live struct {
	Systemd Systemd
	Podman  Podman
	Stager  Stager
}

// OpenLive connects to the running system a Request describes. It is the
// only place the live adapters are built: systemd over D-Bus (dialled at
// once: every live plan reads unit states), podman over its REST socket
// (connected on first use: a run that needs no image or secret never
// dials it), and the host's quadlet generator for staging.
func OpenLive(ctx context.Context, req *Request) (*Live, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("syslet manages rootful quadlet units and must run as root (or use --root DIR with --diff)")
	}
	sd, err := systemd.DialWithin(ctx, req.DialTimeout)
	if err != nil {
		return nil, err
	}
	return &Live{Systemd: sd, Podman: podman.New(podman.DefaultURI), Stager: liveStager{req.Quadlet, req.KeepStage}}, nil
}

// liveStager runs the host's generator and systemd-analyze.
type liveStager struct {
	generator string
	keep      bool // keep the staging directory of a check that passed too
}

func (s liveStager) Check(ctx context.Context, future, current map[string][]byte, verify []string) (stage.Result, error) {
	st := stage.Stager{Generator: s.generator, Verify: "systemd-analyze", Keep: s.keep}
	if _, err := exec.LookPath(st.Verify); err != nil {
		return stage.Result{}, fmt.Errorf("staging needs systemd-analyze: %w", err)
	}
	return st.Check(ctx, future, current, verify)
}
