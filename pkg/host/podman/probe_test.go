package podman

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/containers/podman/v5/libpod/define"

	"github.com/syslet/syslet/pkg/probe"
)

// Where the host reaches a container's port, in the order syslet tries:
// the port it publishes, host networking, its network's address, its
// network namespace.
func TestTargetOf(t *testing.T) {
	running := &define.InspectContainerState{Running: true, Pid: 4242}
	nw := func(ip string) *define.InspectAdditionalNetwork {
		n := &define.InspectAdditionalNetwork{}
		n.IPAddress = ip
		return n
	}
	for _, tc := range []struct {
		name string
		data define.InspectContainerData
		want target
	}{
		{"published on all addresses", define.InspectContainerData{State: running, NetworkSettings: &define.InspectNetworkSettings{
			Ports:    map[string][]define.InspectHostPort{"80/tcp": {{HostIP: "0.0.0.0", HostPort: "8080"}}},
			Networks: map[string]*define.InspectAdditionalNetwork{"podman": nw("10.88.0.2")}}},
			target{addr: "127.0.0.1:8080", via: "127.0.0.1:8080 (published)"}},
		{"published on one address", define.InspectContainerData{State: running, NetworkSettings: &define.InspectNetworkSettings{
			Ports: map[string][]define.InspectHostPort{"80/tcp": {{HostIP: "192.0.2.7", HostPort: "80"}}}}},
			target{addr: "192.0.2.7:80", via: "192.0.2.7:80 (published)"}},
		{"published on IPv6 any", define.InspectContainerData{State: running, NetworkSettings: &define.InspectNetworkSettings{
			Ports: map[string][]define.InspectHostPort{"80/tcp": {{HostIP: "::", HostPort: "8080"}}}}},
			target{addr: "[::1]:8080", via: "[::1]:8080 (published)"}},
		{"another port published", define.InspectContainerData{State: running, NetworkSettings: &define.InspectNetworkSettings{
			Ports:    map[string][]define.InspectHostPort{"443/tcp": {{HostPort: "8443"}}, "80/tcp": nil},
			Networks: map[string]*define.InspectAdditionalNetwork{"b": nw("10.89.1.3"), "a": nw("10.89.0.3")}}},
			target{addr: "10.89.0.3:80", via: "10.89.0.3:80 (network a)"}},
		{"host network", define.InspectContainerData{State: running, HostConfig: &define.InspectContainerHostConfig{NetworkMode: "host"},
			NetworkSettings: &define.InspectNetworkSettings{}},
			target{addr: "127.0.0.1:80", via: "127.0.0.1:80 (host network)"}},
		{"no network", define.InspectContainerData{State: running, HostConfig: &define.InspectContainerHostConfig{NetworkMode: "none"},
			NetworkSettings: &define.InspectNetworkSettings{Networks: map[string]*define.InspectAdditionalNetwork{"none": nw("")}}},
			target{addr: "127.0.0.1:80", pid: 4242, via: "127.0.0.1:80 (in its network namespace)"}},
	} {
		if got := targetOf(&tc.data, 80); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func plainDial(ctx context.Context, _, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// An HTTP probe against a real server: judged by status and body, a
// redirect judged by its own status and never followed, the body read
// to its cap, the Host header sent, a hang cut at the try's timeout.
func TestGet(t *testing.T) {
	followed := false
	mux := http.NewServeMux()
	mux.HandleFunc("/up", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok, ready\n")) })
	mux.HandleFunc("/down", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503); w.Write([]byte("db unreachable")) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://192.0.2.1/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) { followed = true })
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 2*maxProbeBody) + "ready"))
	})
	mux.HandleFunc("/host", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("host=" + r.Host)) })
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	for _, tc := range []struct {
		h    probe.HTTP
		ok   bool
		want string
	}{
		{probe.HTTP{Path: "/up", Status: probe.DefaultStatus, Body: "ready"}, true, `answered 200 "ok, ready"`},
		{probe.HTTP{Path: "/down", Status: probe.DefaultStatus}, false, `answered 503 "db unreachable"`},
		{probe.HTTP{Path: "/moved", Status: probe.Range{Lo: 200, Hi: 299}}, false, `answered 302`},
		{probe.HTTP{Path: "/moved", Status: probe.DefaultStatus}, true, `answered 302`},
		{probe.HTTP{Path: "/huge", Status: probe.DefaultStatus, Body: "ready"}, false, `answered 200 "xxx`},
		{probe.HTTP{Path: "/host", Status: probe.DefaultStatus, Host: "shop.example", Body: "host=shop.example"}, true, `answered 200 "host=shop.example"`},
		{probe.HTTP{Path: "/nope", Status: probe.DefaultStatus}, false, `answered 404 "404 page not found"`},
	} {
		a := get(context.Background(), plainDial, addr, &tc.h)
		if a.OK != tc.ok || !strings.HasPrefix(a.String(), tc.want) || len(a.Body) > probe.ExcerptBytes+len("…") {
			t.Errorf("GET %s: %v %q, want %v %q", tc.h.Path, a.OK, a.String(), tc.ok, tc.want)
		}
	}
	if followed {
		t.Errorf("a redirect was followed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if a := get(ctx, plainDial, addr, &probe.HTTP{Path: "/hang", Status: probe.DefaultStatus}); a.OK || a.Err == "" {
		t.Errorf("a hung answer: %+v", a)
	}
}

// A port nothing listens on is "connection refused".
func TestDialWords(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = plainDial(context.Background(), "tcp", addr)
	if got := dialWords(err); got != "connection refused" {
		t.Errorf("dialWords = %q", got)
	}
	a := get(context.Background(), plainDial, addr, &probe.HTTP{Path: "/", Status: probe.DefaultStatus})
	if a.String() != "connection refused" {
		t.Errorf("GET on a closed port: %q", a.String())
	}
}
