package deploy

import (
	"context"

	"github.com/syslet/syslet/pkg/app/status"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/render"
)

// askProbes asks, once, the installed readiness probe of each container
// of out that is up, as `syslet status` does: the drift check's look at
// whether what runs still serves. Nothing is asked without a running
// system, nor of a container that is not up (the plan already says it
// would start it).
func (h *hostConn) askProbes(ctx context.Context, root string, out *render.Output) ([]host.Probed, error) {
	if h.live == nil {
		return nil, nil
	}
	r, err := status.Read(ctx, h.live.Systemd, out)
	if err != nil {
		return nil, err
	}
	status.Probe(ctx, h.live.Podman, root, out, &r)
	return r.Probes, nil
}
