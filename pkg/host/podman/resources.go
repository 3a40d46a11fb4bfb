package podman

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/containers/podman/v5/pkg/bindings"
	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/bindings/images"
	"github.com/containers/podman/v5/pkg/bindings/network"
	"github.com/containers/podman/v5/pkg/bindings/volumes"
	"github.com/containers/podman/v5/pkg/domain/entities"
	"github.com/containers/podman/v5/pkg/errorhandling"

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
	err = removed(volumes.Remove(cctx, name, nil))
	if err != nil && inUse(err) {
		// A stop that raced a restart can leave the container the unit
		// was creating behind, not running and never removed (its
		// ExecStopPost found no container ID file yet), and podman's own
		// cleanup of a container just stopped can lag behind systemd's
		// word that the unit stopped. Such a quadlet container holds the
		// volume for nothing; one that runs is a real user, and stays.
		if cleared, cerr := c.clearStopped(cctx, name); cerr == nil && cleared {
			err = removed(volumes.Remove(cctx, name, nil))
		}
	}
	if err != nil {
		return fmt.Errorf("removing volume %q: %w", name, err)
	}
	return nil
}

// inUse reports podman's answer to removing a volume a container mounts.
func inUse(err error) bool {
	var em *errorhandling.ErrorModel
	return errors.As(err, &em) && em.ResponseCode == http.StatusConflict
}

// clearStopped removes the containers that mount volume name when every
// one of them is a quadlet unit's (podman's PODMAN_SYSTEMD_UNIT label)
// and none runs: what a stopped unit left behind. It reports whether it
// removed them; with a running or foreign container it touches nothing.
func (c *Client) clearStopped(cctx context.Context, name string) (bool, error) {
	all := true
	var list []entities.ListContainer
	// A container still stopping (podman's cleanup of it runs) is given a
	// few seconds to end.
	for try := 0; ; try++ {
		var err error
		list, err = containers.List(cctx, &containers.ListOptions{All: &all, Filters: map[string][]string{"volume": {name}}})
		if err != nil || len(list) == 0 {
			return false, err
		}
		stopping := false
		for _, ct := range list {
			switch {
			case ct.Labels["PODMAN_SYSTEMD_UNIT"] == "", ct.State == "running", ct.State == "paused":
				return false, nil
			case ct.State == "stopping":
				stopping = true
			}
		}
		if !stopping {
			break
		}
		if try == 25 {
			return false, nil
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-cctx.Done():
			return false, cctx.Err()
		}
	}
	for _, ct := range list {
		ignore := true
		if _, err := containers.Remove(cctx, ct.ID, &containers.RemoveOptions{Ignore: &ignore}); err != nil {
			return false, err
		}
	}
	return true, nil
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
