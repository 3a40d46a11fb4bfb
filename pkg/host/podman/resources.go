package podman

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/containers/podman/v5/pkg/bindings"
	"github.com/containers/podman/v5/pkg/bindings/images"
	"github.com/containers/podman/v5/pkg/bindings/network"
	"github.com/containers/podman/v5/pkg/bindings/volumes"

	"github.com/syslet/syslet/pkg/host"
)

// rmiNotFound is the exit code podman rmi documents for "one of the
// specified images did not exist, and no other failures".
const rmiNotFound = 1

// ImageExists reports whether ref is in local image storage.
func (c *Client) ImageExists(ctx context.Context, ref string) (bool, error) {
	return c.exists(ctx, "image", "/images/%s/exists", ref)
}

// ImageID returns the ID of the image ref names in local storage ("" when
// there is none), as podman's image inspect reports it.
func (c *Client) ImageID(ctx context.Context, ref string) (string, error) {
	cctx, err := c.connect(ctx)
	if err != nil {
		return "", err
	}
	conn, err := bindings.GetClient(cctx)
	if err != nil {
		return "", err
	}
	resp, err := conn.DoRequest(cctx, nil, http.MethodGet, "/images/%s/json", nil, nil, ref)
	if err != nil {
		return "", fmt.Errorf("inspecting image %q: %w", ref, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return "", nil
	}
	var im struct {
		ID string `json:"Id"`
	}
	if err := resp.Process(&im); err != nil {
		return "", fmt.Errorf("inspecting image %q: %w", ref, err)
	}
	return im.ID, nil
}

// PullImage pulls ref from its registry, writing podman's progress text to
// progress when it is not nil. Podman does not retry "manifest unknown", so a
// missing tag fails at once.
func (c *Client) PullImage(ctx context.Context, ref string, progress io.Writer) error {
	return c.PullImageWith(ctx, ref, host.PullOptions{}, progress)
}

// RemoveImage removes ref from local storage; an absent image is success.
// An image a container still uses is not forced out: that is an error.
func (c *Client) RemoveImage(ctx context.Context, ref string) error {
	cctx, err := c.connect(ctx)
	if err != nil {
		return err
	}
	report, errs := images.Remove(cctx, []string{ref}, nil)
	if report != nil && report.ExitCode == rmiNotFound {
		return nil
	}
	if err := removed(errors.Join(errs...)); err != nil {
		return fmt.Errorf("removing image %q: %w", ref, err)
	}
	return nil
}

// VolumeExists reports whether the named volume exists.
func (c *Client) VolumeExists(ctx context.Context, name string) (bool, error) {
	return c.exists(ctx, "volume", "/volumes/%s/exists", name)
}

// RemoveVolume removes the named volume and its data; an absent volume is
// success. A volume in use is not forced out: that is an error.
func (c *Client) RemoveVolume(ctx context.Context, name string) error {
	cctx, err := c.connect(ctx)
	if err != nil {
		return err
	}
	if err := removed(volumes.Remove(cctx, name, nil)); err != nil {
		return fmt.Errorf("removing volume %q: %w", name, err)
	}
	return nil
}

// NetworkExists reports whether the named network exists.
func (c *Client) NetworkExists(ctx context.Context, name string) (bool, error) {
	return c.exists(ctx, "network", "/networks/%s/exists", name)
}

// RemoveNetwork removes the named network; an absent network is success. A
// network with containers attached is not forced out: that is an error.
func (c *Client) RemoveNetwork(ctx context.Context, name string) error {
	cctx, err := c.connect(ctx)
	if err != nil {
		return err
	}
	reports, err := network.Remove(cctx, name, nil)
	if err := removed(err); err != nil {
		return fmt.Errorf("removing network %q: %w", name, err)
	}
	for _, r := range reports {
		if err := removed(r.Err); err != nil {
			return fmt.Errorf("removing network %q: %w", name, err)
		}
	}
	return nil
}
