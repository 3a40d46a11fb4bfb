package podman

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/containers/podman/v5/pkg/bindings/secrets"

	"github.com/syslet/syslet/pkg/host"
)

// Secrets lists podman's secret store, names and labels only, sorted by
// name. The REST list is used because it returns labels (in .Spec.Labels),
// which `podman secret ls` does not print.
func (c *Client) Secrets(ctx context.Context) ([]host.Secret, error) {
	cctx, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	list, err := secrets.List(cctx, nil)
	if err != nil {
		return nil, fmt.Errorf("listing secrets of podman at %q: %w", c.uri, err)
	}
	out := make([]host.Secret, 0, len(list))
	for _, s := range list {
		var labels map[string]string
		if len(s.Spec.Labels) > 0 {
			labels = maps.Clone(s.Spec.Labels)
		}
		out = append(out, host.Secret{Name: s.Spec.Name, ID: s.ID, Labels: labels})
	}
	slices.SortFunc(out, func(a, b host.Secret) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// CreateSecret stores data under name with the given labels, replacing a
// secret of that name if one exists. Containers already running keep the
// value they were started with until they are restarted.
func (c *Client) CreateSecret(ctx context.Context, name string, data []byte, labels map[string]string) error {
	cctx, err := c.connect(ctx)
	if err != nil {
		return err
	}
	opts := new(secrets.CreateOptions).WithName(name).WithReplace(true)
	if len(labels) > 0 {
		opts.WithLabels(labels)
	}
	if _, err := secrets.Create(cctx, bytes.NewReader(data), opts); err != nil {
		return fmt.Errorf("creating secret %q: %w", name, err)
	}
	return nil
}

// RemoveSecret removes the named secret; an absent secret is success.
func (c *Client) RemoveSecret(ctx context.Context, name string) error {
	cctx, err := c.connect(ctx)
	if err != nil {
		return err
	}
	if err := removed(secrets.Remove(cctx, name)); err != nil {
		return fmt.Errorf("removing secret %q: %w", name, err)
	}
	return nil
}
