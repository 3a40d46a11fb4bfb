package podman

import (
	"context"
	"fmt"

	"github.com/containers/podman/v5/pkg/bindings/system"
)

// Version returns the podman release the service runs ("5.4.2"), as its
// API reports it. syslet checks specs against that release: a quadlet key
// it does not know yet fails the check before anything is changed.
func (c *Client) Version(ctx context.Context) (string, error) {
	cctx, err := c.connect(ctx)
	if err != nil {
		return "", err
	}
	r, err := system.Version(cctx, nil)
	if err != nil {
		return "", fmt.Errorf("reading podman's version: %w", err)
	}
	if r.Server == nil || r.Server.Version == "" {
		return "", fmt.Errorf("reading podman's version: the service at %q did not say", c.uri)
	}
	return r.Server.Version, nil
}
