package podman

import (
	"context"
	"fmt"

	"github.com/containers/podman/v5/pkg/bindings/containers"

	"github.com/syslet/syslet/pkg/host"
)

// Containers lists every container podman knows, by name, with the image
// it runs: one call, whatever their number.
func (c *Client) Containers(ctx context.Context) (map[string]host.Container, error) {
	cctx, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	all := true
	list, err := containers.List(cctx, &containers.ListOptions{All: &all})
	if err != nil {
		return nil, fmt.Errorf("listing podman containers: %w", err)
	}
	out := make(map[string]host.Container, len(list))
	for _, ct := range list {
		for _, n := range ct.Names {
			out[n] = host.Container{Name: n, ImageID: ct.ImageID, Image: ct.Image, State: ct.State}
		}
	}
	return out, nil
}

// ContainerHealth returns a container's health check status: "" when it
// has none, else "starting", "healthy" or "unhealthy".
func (c *Client) ContainerHealth(ctx context.Context, name string) (string, error) {
	cctx, err := c.connect(ctx)
	if err != nil {
		return "", err
	}
	data, err := containers.Inspect(cctx, name, nil)
	if err != nil {
		return "", fmt.Errorf("inspecting podman container %q: %w", name, err)
	}
	if data.State == nil || data.State.Health == nil {
		return "", nil
	}
	return data.State.Health.Status, nil
}
