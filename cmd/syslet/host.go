package main

import (
	"context"
	"fmt"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// hostConn holds the adapters of one run. Under --root only the files
// adapter exists; on the real host systemd and podman are connected
// lazily, so a run that needs neither never dials them.
type hostConn struct {
	files fsroot.Root
	live  *liveHost // nil under --root
}

func openHost(o applyOptions) (*hostConn, error) {
	h := &hostConn{files: fsroot.New(o.root)}
	if o.hostless() {
		return h, nil
	}
	live, err := openLive(o)
	if err != nil {
		return nil, err
	}
	h.live = live
	return h, nil
}

func (h *hostConn) Close() {
	if h.live != nil {
		h.live.Close()
	}
}

// podmanRelease is the podman release the specs are checked against: the
// host's, as podman's API reports it; under --root, --podman or the oldest
// release syslet supports.
func (h *hostConn) podmanRelease(ctx context.Context, o applyOptions) (unit.Podman, error) {
	if h.live != nil {
		return h.live.podmanRelease(ctx)
	}
	if o.podman == (unit.Podman{}) {
		return unit.OldestPodman, nil
	}
	return o.podman, nil
}

func (h *hostConn) sources() plan.Sources {
	src := plan.Sources{Files: h.files}
	if h.live != nil {
		src.Units = h.live.systemd()
		src.Store = h.live.podman()
	}
	return src
}

// stage checks the future unit set with the host's quadlet generator and
// systemd-analyze verify, when the plan writes unit files. Under --root
// there is no host generator to ask.
func (h *hostConn) stage(ctx context.Context, p *plan.Plan, out *render.Output) error {
	if h.live == nil || !p.WritesUnits() || !p.Appliable() {
		return nil
	}
	return h.live.stage(ctx, p, out)
}

func (h *hostConn) executor() (executor.Host, error) {
	if h.live == nil {
		return executor.Host{}, fmt.Errorf("an apply needs the running host: --root only supports --diff (use `syslet render --out DIR` to write files)")
	}
	return h.live.executor(h.files), nil
}
