package podman

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/containers/podman/v5/pkg/bindings"
	"github.com/containers/podman/v5/pkg/bindings/containers"
	"github.com/containers/podman/v5/pkg/bindings/system"
	"github.com/containers/podman/v5/pkg/bindings/volumes"
	entitiesTypes "github.com/containers/podman/v5/pkg/domain/entities/types"
	"github.com/containers/podman/v5/pkg/errorhandling"

	"github.com/syslet/syslet/pkg/host"
)

// A volume's data in and out, for its backups: podman's volume export
// and import endpoints stream a tar, which passes through here without
// being held.

// ExportVolume streams the named volume's content, as a tar, to w. A
// volume that does not exist is an error wrapping host.ErrNotFound.
//
// podman's volume export endpoint came after 5.4 (which answers 404 for
// it, as for an absent volume): when the volume exists but the endpoint
// does not, a volume of the local driver without mount options is read
// from its data directory, which podman's inspect names, as podman's own
// export of such a volume does (tarDir).
func (c *Client) ExportVolume(ctx context.Context, name string, w io.Writer) error {
	cctx, err := c.connect(ctx)
	if err != nil {
		return err
	}
	err = volumes.Export(cctx, name, w)
	if err == nil {
		return nil
	}
	if !is404(err) {
		return fmt.Errorf("exporting volume %q: %w", name, err)
	}
	dir, err := c.localData(cctx, name, "export")
	if err != nil {
		return err
	}
	if err := tarDir(dir, w); err != nil {
		return fmt.Errorf("exporting volume %q from %s: %w", name, dir, err)
	}
	return nil
}

// ImportVolume unpacks the tar read from r into the named volume (the
// same fallback as ExportVolume's for a podman without the endpoint).
func (c *Client) ImportVolume(ctx context.Context, name string, r io.Reader) error {
	cctx, err := c.connect(ctx)
	if err != nil {
		return err
	}
	exists, err := c.VolumeExists(ctx, name)
	if err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("importing into volume %q: %w", name, host.ErrNotFound)
	}
	// The endpoint is looked for without a body first: a tar sent to an
	// endpoint that does not exist would be read for nothing, and could
	// not be read again.
	conn, err := bindings.GetClient(cctx)
	if err != nil {
		return err
	}
	probe, err := conn.DoRequest(cctx, nil, http.MethodGet, "/volumes/%s/import", nil, nil, name)
	if err != nil {
		return fmt.Errorf("importing into volume %q: %w", name, err)
	}
	probe.Body.Close()
	if probe.StatusCode != http.StatusNotFound {
		if err := volumes.Import(cctx, name, r); err != nil {
			return fmt.Errorf("importing into volume %q: %w", name, err)
		}
		return nil
	}
	dir, err := c.localData(cctx, name, "import")
	if err != nil {
		return err
	}
	if err := untarDir(r, dir); err != nil {
		return fmt.Errorf("importing into volume %q at %s: %w", name, dir, err)
	}
	return nil
}

// localData is the data directory of a volume podman cannot export or
// import itself: only a volume of the local driver without mount options
// keeps its data there at all times. An absent volume is host.ErrNotFound.
func (c *Client) localData(cctx context.Context, name, what string) (string, error) {
	v, err := volumes.Inspect(cctx, name, nil)
	if err != nil {
		return "", fmt.Errorf("%s of volume %q: %w", what, name, notFound(err))
	}
	if v.Driver != "local" || len(v.Options) > 0 || v.Mountpoint == "" {
		return "", fmt.Errorf("%s of volume %q: this podman has no volume %s endpoint (podman 5.5 or later has), and the volume (driver %s, options %v) does not keep its data in a plain directory", what, name, what, v.Driver, v.Options)
	}
	return v.Mountpoint, nil
}

// CreateVolume creates a volume with podman's defaults; one that exists
// already is left as it is.
func (c *Client) CreateVolume(ctx context.Context, name string) error {
	cctx, err := c.connect(ctx)
	if err != nil {
		return err
	}
	if _, err := volumes.Create(cctx, entitiesTypes.VolumeCreateOptions{Name: name, IgnoreIfExists: true}, nil); err != nil {
		return fmt.Errorf("creating volume %q: %w", name, err)
	}
	return nil
}

// VolumeSizes is how many bytes each of podman's volumes holds, as
// podman's disk usage report counts them.
func (c *Client) VolumeSizes(ctx context.Context) (map[string]int64, error) {
	cctx, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	df, err := system.DiskUsage(cctx, nil)
	if err != nil {
		return nil, fmt.Errorf("reading podman's disk usage: %w", err)
	}
	out := make(map[string]int64, len(df.Volumes))
	for _, v := range df.Volumes {
		out[v.VolumeName] = v.Size
	}
	return out, nil
}

// VolumeUsers lists the systemd services of the containers that mount the
// named volume, running or not (podman's label PODMAN_SYSTEMD_UNIT, which
// quadlet sets); a container no service runs is listed by its name in
// others.
func (c *Client) VolumeUsers(ctx context.Context, name string) (services, others []string, err error) {
	cctx, err := c.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	all := true
	list, err := containers.List(cctx, &containers.ListOptions{All: &all, Filters: map[string][]string{"volume": {name}}})
	if err != nil {
		return nil, nil, fmt.Errorf("listing the containers of volume %q: %w", name, err)
	}
	for _, ct := range list {
		if s := ct.Labels["PODMAN_SYSTEMD_UNIT"]; s != "" {
			services = append(services, s)
		} else if len(ct.Names) > 0 {
			others = append(others, ct.Names[0])
		}
	}
	return services, others, nil
}

// notFound marks podman's 404 answer as host.ErrNotFound.
func notFound(err error) error {
	if is404(err) {
		return fmt.Errorf("%w: %w", host.ErrNotFound, err)
	}
	return err
}

// is404 reports podman's 404 answer: no such object, or no such endpoint.
func is404(err error) bool {
	var em *errorhandling.ErrorModel
	return errors.As(err, &em) && em.ResponseCode == http.StatusNotFound
}
