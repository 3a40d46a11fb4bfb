package podman

import (
	"context"
	"fmt"
	"net/http"

	"github.com/containers/podman/v5/pkg/bindings"
	"go.podman.io/image/v5/docker"
	"go.podman.io/image/v5/types"
)

// TagDigest asks ref's registry which manifest digest its tag names now:
// one manifest HEAD request through podman's own image library, with the
// host's registries.conf (insecure registries, blocked ones) and its auth
// file, as a pull by podman would read them. Nothing is pulled. ref is a
// registry reference (no transport prefix); without a tag it means :latest.
func (c *Client) TagDigest(ctx context.Context, ref string) (string, error) {
	r, err := docker.ParseReference("//" + ref)
	if err != nil {
		return "", fmt.Errorf("image %q: %w", ref, err)
	}
	// A zero SystemContext reads the host's defaults: registries.conf(.d)
	// and root's auth file (${XDG_RUNTIME_DIR}/containers/auth.json, then
	// the fallbacks podman login writes to).
	d, err := docker.GetDigest(ctx, &types.SystemContext{}, r)
	if err != nil {
		return "", fmt.Errorf("asking its registry for the digest of tag %q: %w", ref, err)
	}
	return d.String(), nil
}

// ImageDigests are the repository digests (RepoDigests, "name@sha256:…")
// of the image ref names in local storage, as podman's image inspect
// reports them, and the manifest digest it was pulled as ("@sha256:…",
// with no name): an image no name points at any more (untagged, still in
// use by a container) has no repository digest, but podman still knows
// what it was. nil when there is no such image.
func (c *Client) ImageDigests(ctx context.Context, ref string) ([]string, error) {
	cctx, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	conn, err := bindings.GetClient(cctx)
	if err != nil {
		return nil, err
	}
	resp, err := conn.DoRequest(cctx, nil, http.MethodGet, "/images/%s/json", nil, nil, ref)
	if err != nil {
		return nil, fmt.Errorf("inspecting image %q: %w", ref, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	var im struct {
		RepoDigests []string `json:"RepoDigests"`
		Digest      string   `json:"Digest"`
	}
	if err := resp.Process(&im); err != nil {
		return nil, fmt.Errorf("inspecting image %q: %w", ref, err)
	}
	if im.Digest != "" {
		return append(im.RepoDigests, "@"+im.Digest), nil
	}
	return im.RepoDigests, nil
}
