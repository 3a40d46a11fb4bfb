package podman

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/containers/podman/v5/libpod/define"
	"github.com/containers/podman/v5/pkg/api/handlers"
	"github.com/containers/podman/v5/pkg/bindings/containers"
	dockerContainer "github.com/docker/docker/api/types/container"

	"github.com/syslet/syslet/pkg/probe"
)

// maxProbeBody is how much of an HTTP answer's body (or a command's
// output) a probe reads: enough to find what it must hold, never a
// download.
const maxProbeBody = 64 << 10

// Probe runs one try of p against the container named container, from
// the host, within p's timeout: an HTTP GET or a TCP connect to the
// container's port where the host reaches it — the port it publishes,
// else its address on its podman network, else inside its network
// namespace (Network=none, a pod that publishes nothing), 127.0.0.1 with
// host networking — or p's command run in it with podman exec. Nothing
// but the container is ever asked: no redirect is followed, no proxy
// used, and at most maxProbeBody of an answer read.
func (c *Client) Probe(ctx context.Context, container string, p *probe.Probe) probe.Answer {
	start := time.Now()
	tctx, cancel := context.WithTimeout(ctx, time.Duration(p.Timeout))
	defer cancel()
	a := c.try(tctx, container, p)
	if !a.OK && tctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		a = probe.Answer{Kind: p.Kind(), Err: p.TimedOut(), Via: a.Via}
	}
	a.At, a.Took = start, time.Since(start)
	return a
}

func (c *Client) try(ctx context.Context, container string, p *probe.Probe) probe.Answer {
	cctx, err := c.connect(ctx)
	if err != nil {
		return p.Failed(err.Error())
	}
	data, err := containers.Inspect(cctx, container, nil)
	if err != nil {
		return p.Failed(fmt.Sprintf("could not inspect its container %s: %v", container, err))
	}
	if data.State == nil || !data.State.Running {
		st := "gone"
		if data.State != nil {
			st = data.State.Status
		}
		return p.Failed(fmt.Sprintf("found its container %s not running (%s)", container, st))
	}
	if p.Exec != nil {
		return c.exec(cctx, container, p)
	}
	t := targetOf(data, p.Port())
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		if t.pid > 0 {
			return dialIn(ctx, t.pid, t.addr)
		}
		return d.DialContext(ctx, "tcp", t.addr)
	}
	var a probe.Answer
	if p.HTTP != nil {
		a = get(ctx, dial, t.addr, p.HTTP)
	} else {
		a = probe.Answer{Kind: probe.KindTCP, OK: true}
		conn, err := dial(ctx, "tcp", t.addr)
		if err != nil {
			a = p.Failed(dialWords(err))
		} else {
			conn.Close()
		}
	}
	a.Via = t.via
	return a
}

// target is where the host reaches a container's port: addr, dialled
// from the host, or inside the network namespace of process pid.
type target struct {
	addr string
	pid  int
	via  string
}

// targetOf finds where the host reaches the container's TCP port.
func targetOf(data *define.InspectContainerData, port int) target {
	p := strconv.Itoa(port)
	if ns := data.NetworkSettings; ns != nil {
		for _, hp := range ns.Ports[p+"/tcp"] {
			if hp.HostPort == "" {
				continue
			}
			ip := hp.HostIP
			switch ip {
			case "", "0.0.0.0":
				ip = "127.0.0.1"
			case "::":
				ip = "::1"
			}
			return target{addr: net.JoinHostPort(ip, hp.HostPort), via: net.JoinHostPort(ip, hp.HostPort) + " (published)"}
		}
	}
	if data.HostConfig != nil && data.HostConfig.NetworkMode == "host" {
		addr := net.JoinHostPort("127.0.0.1", p)
		return target{addr: addr, via: addr + " (host network)"}
	}
	if ns := data.NetworkSettings; ns != nil {
		names := make([]string, 0, len(ns.Networks))
		for n, nw := range ns.Networks {
			if nw != nil && nw.IPAddress != "" {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		if len(names) > 0 {
			addr := net.JoinHostPort(ns.Networks[names[0]].IPAddress, p)
			return target{addr: addr, via: addr + " (network " + names[0] + ")"}
		}
		if ns.IPAddress != "" {
			addr := net.JoinHostPort(ns.IPAddress, p)
			return target{addr: addr, via: addr + " (its network)"}
		}
	}
	addr := net.JoinHostPort("127.0.0.1", p)
	return target{addr: addr, pid: data.State.Pid, via: addr + " (in its network namespace)"}
}

// get makes the HTTP probe's one request through dial and judges the
// answer.
func get(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), addr string, h *probe.HTTP) probe.Answer {
	tr := &http.Transport{DialContext: dial, Proxy: nil, DisableKeepAlives: true, MaxResponseHeaderBytes: maxProbeBody}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+h.Path, nil)
	if err != nil {
		return probe.Answer{Kind: probe.KindHTTP, Err: "the request could not be made: " + err.Error()}
	}
	if h.Host != "" {
		req.Host = h.Host
	}
	req.Header.Set("User-Agent", "syslet-probe")
	resp, err := cl.Do(req)
	if err != nil {
		return probe.Answer{Kind: probe.KindHTTP, Err: dialWords(err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProbeBody))
	if err != nil && ctx.Err() != nil {
		return probe.Answer{Kind: probe.KindHTTP, Err: dialWords(err)}
	}
	return h.JudgeHTTP(resp.StatusCode, body)
}

// dialWords says why a connection or request failed, in a probe's
// words.
func dialWords(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "unreachable: " + err.Error()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection closed without an answer"
	}
	return err.Error()
}

// exec runs the probe's command in the container and judges its exit
// code. One that outlives the try's deadline is killed (the session is
// removed by force), so a hung command never piles up.
func (c *Client) exec(ctx context.Context, container string, p *probe.Probe) probe.Answer {
	id, err := containers.ExecCreate(ctx, container, &handlers.ExecCreateConfig{ExecOptions: dockerContainer.ExecOptions{
		Cmd: p.Exec, AttachStdout: true, AttachStderr: true,
	}})
	if err != nil {
		return p.Failed("could not be run: " + err.Error())
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		force := true
		_ = containers.ExecRemove(rctx, id, &containers.ExecRemoveOptions{Force: &force})
	}()
	var out capped
	w := io.Writer(&out)
	yes := true
	done := make(chan error, 1)
	go func() {
		done <- containers.ExecStartAndAttach(ctx, id, &containers.ExecStartAndAttachOptions{OutputStream: &w, ErrorStream: &w, AttachOutput: &yes, AttachError: &yes})
	}()
	select {
	case err = <-done:
	case <-ctx.Done():
		return p.Failed(p.TimedOut())
	}
	if err != nil {
		return p.Failed("could not be run: " + err.Error())
	}
	st, err := containers.ExecInspect(ctx, id, nil)
	if err != nil {
		return p.Failed("its exit code could not be read: " + err.Error())
	}
	return probe.JudgeExec(st.ExitCode, out.b.Bytes())
}

// capped keeps the first maxProbeBody bytes written to it and drops the
// rest.
type capped struct{ b bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxProbeBody - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
