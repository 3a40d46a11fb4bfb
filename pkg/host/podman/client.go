package podman

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/containers/podman/v5/pkg/bindings"
	"github.com/containers/podman/v5/pkg/errorhandling"
)

// DefaultURI is rootful podman's API socket, served by podman.socket.
const DefaultURI = "unix:///run/podman/podman.sock"

// Client talks to one podman service. It is safe for concurrent use.
type Client struct {
	uri string

	mu sync.Mutex
	// conn is the context bindings.NewConnection returned, kept only for the
	// connection values it carries; calls run under the caller's context.
	conn context.Context
}

// New returns a client for the podman service at uri (DefaultURI when
// empty). It does not connect.
func New(uri string) *Client {
	if uri == "" {
		uri = DefaultURI
	}
	return &Client{uri: uri}
}

// connect returns a context that carries the caller's deadline and
// cancellation plus the bindings connection, dialling on first use. A failed
// dial is not remembered, so a later call retries once the socket is up.
func (c *Client) connect(ctx context.Context) (context.Context, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		conn, err := bindings.NewConnection(ctx, c.uri)
		if err != nil {
			hint := ""
			if c.uri == DefaultURI {
				// The usual first-run failure: podman is installed but its
				// API socket was never enabled.
				hint = " (is podman's API socket running? enable it once with: systemctl enable --now podman.socket)"
			}
			return nil, fmt.Errorf("connecting to podman at %q%s: %w", c.uri, hint, err)
		}
		c.conn = conn
	}
	return withConn{Context: ctx, conn: c.conn}, nil
}

// withConn lets a call made under one context use the connection stored in
// another: bindings keeps its client in unexported context values, so it
// cannot be copied onto the caller's context any other way.
type withConn struct {
	context.Context
	conn context.Context
}

func (w withConn) Value(key any) any {
	if v := w.Context.Value(key); v != nil {
		return v
	}
	return w.conn.Value(key)
}

// exists asks one of podman's .../exists endpoints. The bindings' own Exists
// functions read every non-2xx answer as "absent", which would turn a broken
// service into a plan to pull or create; here only 404 means absent.
func (c *Client) exists(ctx context.Context, what, endpoint, name string) (bool, error) {
	cctx, err := c.connect(ctx)
	if err != nil {
		return false, err
	}
	conn, err := bindings.GetClient(cctx)
	if err != nil {
		return false, err
	}
	resp, err := conn.DoRequest(cctx, nil, http.MethodGet, endpoint, nil, nil, name)
	if err != nil {
		return false, fmt.Errorf("checking %s %q: %w", what, name, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.IsSuccess():
		return true, nil
	case resp.StatusCode == http.StatusNotFound:
		return false, nil
	default:
		return false, fmt.Errorf("checking %s %q: %w", what, name, resp.Process(nil))
	}
}

// removed turns podman's 404 answer into success, for removals.
func removed(err error) error {
	var em *errorhandling.ErrorModel
	if errors.As(err, &em) && em.ResponseCode == http.StatusNotFound {
		return nil
	}
	return err
}
