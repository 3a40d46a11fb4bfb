package proxy

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/bounded"
)

// Client talks to one HAProxy's runtime API. It holds no connection: each
// command dials the socket. It is safe for concurrent use.
type Client struct {
	socket string
}

// New returns a client for the runtime API at socket (a unix socket
// path). It does not connect.
func New(socket string) *Client { return &Client{socket: socket} }

// maxAnswer bounds what one answer may hold: `show stat` of a backend or
// `show servers state` of a few hundred sites is a few tens of KB.
const maxAnswer = 8 << 20

// defaultDeadline bounds a command when the context sets no deadline: the
// runtime API answers at once or not at all.
const defaultDeadline = 10 * time.Second

// Do sends one command and returns HAProxy's answer.
func (c *Client) Do(ctx context.Context, cmd string) (string, error) {
	if strings.ContainsAny(cmd, "\n\r;") {
		return "", fmt.Errorf("haproxy runtime API: one command, on one line: %q", cmd)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.socket)
	if err != nil {
		return "", fmt.Errorf("haproxy runtime API at %s (is syslet-proxy.service running?): %w", c.socket, err)
	}
	defer conn.Close()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(defaultDeadline)
	}
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	if _, err := io.WriteString(conn, cmd+"\n"); err != nil {
		return "", fmt.Errorf("haproxy runtime API at %s: sending %q: %w", c.socket, cmd, err)
	}
	b, err := io.ReadAll(io.LimitReader(conn, maxAnswer+1))
	if err == nil && len(b) > maxAnswer {
		err = fmt.Errorf("the answer is longer than %s", bounded.Size(maxAnswer))
	}
	if err != nil {
		switch {
		case ctx.Err() != nil:
			err = ctx.Err()
		case errors.Is(err, os.ErrDeadlineExceeded):
			err = fmt.Errorf("no answer in time: %w", context.DeadlineExceeded)
		}
		return "", fmt.Errorf("haproxy runtime API at %s: %q: %w", c.socket, cmd, err)
	}
	return string(b), nil
}

// Admin is a server's administrative state, as `set server … state` sets
// it.
type Admin string

const (
	// Ready: the server takes new requests.
	Ready Admin = "ready"
	// Drain: no new requests (but a persistent session's), the current
	// ones finish.
	Drain Admin = "drain"
	// Maint: no requests; the current ones are ended.
	Maint Admin = "maint"
)

// SetState sets the administrative state of backend/server. Setting the
// state a server has already is no change, and no error: every call is
// idempotent.
func (c *Client) SetState(ctx context.Context, backend, server string, st Admin) error {
	switch st {
	case Ready, Drain, Maint:
	default:
		return fmt.Errorf("haproxy: no server state %q", st)
	}
	if err := name(backend); err != nil {
		return err
	}
	if err := name(server); err != nil {
		return err
	}
	out, err := c.Do(ctx, fmt.Sprintf("set server %s/%s state %s", backend, server, st))
	if err != nil {
		return err
	}
	// Success is an empty answer; anything else is HAProxy's refusal.
	if msg := strings.TrimSpace(out); msg != "" {
		return fmt.Errorf("haproxy: set server %s/%s state %s: %s", backend, server, st, msg)
	}
	return nil
}

// Sessions are how many sessions each server of backend holds (current
// and queued), by server name, as `show stat` counts them.
func (c *Client) Sessions(ctx context.Context, backend string) (map[string]int, error) {
	if err := name(backend); err != nil {
		return nil, err
	}
	// Servers only (type 4) of every proxy: HAProxy 3.0 answers a proxy
	// named by name with the header alone.
	out, err := c.Do(ctx, "show stat -1 4 -1")
	if err != nil {
		return nil, err
	}
	rows, err := readStat(out)
	if err != nil {
		return nil, fmt.Errorf("haproxy: show stat %s: %w", backend, err)
	}
	sessions := map[string]int{}
	for _, r := range rows {
		if r["pxname"] != backend || r["svname"] == "BACKEND" || r["svname"] == "FRONTEND" {
			continue
		}
		cur, err1 := strconv.Atoi(r["scur"])
		queued, err2 := strconv.Atoi(orZero(r["qcur"]))
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("haproxy: show stat %s, server %s: %w", backend, r["svname"], err)
		}
		sessions[r["svname"]] = cur + queued
	}
	if len(sessions) == 0 {
		return nil, fmt.Errorf("haproxy: show stat %s: no servers (%s)", backend, strings.TrimSpace(firstLine(out)))
	}
	return sessions, nil
}

// ServersState is `show servers state`: the server state file's content,
// every backend's servers.
func (c *Client) ServersState(ctx context.Context) ([]byte, error) {
	out, err := c.Do(ctx, "show servers state")
	if err != nil {
		return nil, err
	}
	// The file's first line is its version; an answer that is not one is
	// HAProxy's refusal.
	if v, _, _ := strings.Cut(out, "\n"); strings.TrimSpace(v) != "1" {
		return nil, fmt.Errorf("haproxy: show servers state: %s", strings.TrimSpace(firstLine(out)))
	}
	return []byte(out), nil
}

// SaveState saves the server state into path (its directory made 0700
// when missing): the next start or reload of HAProxy reads it, so the
// live slots stay live.
func (c *Client) SaveState(ctx context.Context, path string) error {
	data, err := c.ServersState(ctx)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("saving haproxy's server state: %w", err)
	}
	if err := bounded.WriteState(path, data, 0o600); err != nil {
		return fmt.Errorf("saving haproxy's server state to %s: %w", path, err)
	}
	return nil
}

// readStat reads `show stat`'s CSV: a "# " header naming the columns,
// then a row per proxy or server.
func readStat(out string) ([]map[string]string, error) {
	head, body, ok := strings.Cut(out, "\n")
	cols, isHeader := strings.CutPrefix(head, "# ")
	if !ok || !isHeader {
		return nil, errors.New(strings.TrimSpace(firstLine(out)))
	}
	names := strings.Split(cols, ",")
	r := csv.NewReader(strings.NewReader(body))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	var rows []map[string]string
	for _, rec := range recs {
		row := map[string]string{}
		for i, v := range rec {
			if i < len(names) {
				row[names[i]] = v
			}
		}
		rows = append(rows, row)
	}
	if !slices.Contains(names, "scur") {
		return nil, errors.New("no scur column")
	}
	return rows, nil
}

// name refuses what cannot be a proxy or server name on a command line.
func name(s string) error {
	if s == "" || strings.ContainsAny(s, " \t/;\n\r") {
		return fmt.Errorf("haproxy: %q is not a proxy or server name", s)
	}
	return nil
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}
