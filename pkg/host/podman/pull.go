package podman

import (
	"context"
	"fmt"
	"io"

	"github.com/containers/podman/v5/pkg/bindings/images"

	"github.com/syslet/syslet/pkg/host"
)

// PullImageWith pulls ref as an image unit's service would, with the
// unit's [Image] settings that podman's pull API takes (host.PullOptions),
// writing progress as PullImage does.
func (c *Client) PullImageWith(ctx context.Context, ref string, o host.PullOptions, progress io.Writer) error {
	cctx, err := c.connect(ctx)
	if err != nil {
		return err
	}
	opts := new(images.PullOptions)
	if progress == nil {
		opts.WithQuiet(true)
	} else {
		opts.WithProgressWriter(progress)
	}
	if o.Arch != "" {
		opts.WithArch(o.Arch)
	}
	if o.OS != "" {
		opts.WithOS(o.OS)
	}
	if o.Variant != "" {
		opts.WithVariant(o.Variant)
	}
	if o.AllTags {
		opts.WithAllTags(true)
	}
	if o.TLSVerify != nil {
		opts.WithSkipTLSVerify(!*o.TLSVerify)
	}
	if o.AuthFile != "" {
		opts.WithAuthfile(o.AuthFile)
	}
	if o.Policy != "" {
		opts.WithPolicy(o.Policy)
	}
	if o.Retry != nil {
		opts.WithRetry(*o.Retry)
	}
	if o.RetryDelay != "" {
		opts.WithRetryDelay(o.RetryDelay)
	}
	if _, err := images.Pull(cctx, ref, opts); err != nil {
		return fmt.Errorf("pulling image %q: %w", ref, err)
	}
	return nil
}
