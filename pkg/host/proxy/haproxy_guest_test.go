//go:build guest

// These tests run as root inside a disposable test host (integration/'s
// TestAdaptersInGuest), against the HAProxy Debian installs there, run
// under the unit syslet renders (pkg/proxy) with the configuration it
// renders: both slots declared disabled, the saved server state enabling
// the live one.
package proxy

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/layout"
	pxy "github.com/syslet/syslet/pkg/proxy"
)

// sh runs a shell command and fails the test when it fails.
func sh(t *testing.T, cmd string) string {
	t.Helper()
	out, err := exec.Command("sh", "-c", cmd).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	return string(out)
}

// get is what the proxy answers on url: the body, or the status when it
// is not 200.
func get(t *testing.T, url string) string {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	r, err := c.Get(url)
	if err != nil {
		return "error: " + err.Error()
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusOK {
		return r.Status
	}
	return strings.TrimSpace(string(b))
}

func liveSlots(t *testing.T, backend string) []string {
	t.Helper()
	data, err := os.ReadFile(layout.ProxyState)
	if err != nil {
		t.Fatal(err)
	}
	st, err := pxy.ParseState(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return st.Ready(backend)
}

// TestSwitchKeepsTheLiveSlotThroughReloads: the configuration declares
// both slots disabled; a switch is runtime API calls and a saved state,
// and a reload, a restart and an upgrade's re-execution of the master
// keep the live slot live.
func TestSwitchKeepsTheLiveSlotThroughReloads(t *testing.T) {
	ctx := context.Background()
	site := pxy.Site{Name: "web", Listen: "127.0.0.1:18080", Mode: pxy.HTTP, Ports: pxy.Ports{19001, 19002}}
	for _, slot := range pxy.Slots {
		dir := "/tmp/proxy-test-" + slot
		sh(t, "mkdir -p "+dir+" && echo "+slot+" > "+dir+"/index.html")
		unit := "proxy-test-" + slot
		sh(t, "systemd-run -q --unit "+unit+" busybox httpd -f -p "+site.Server(slot)+" -h "+dir)
		t.Cleanup(func() { _ = exec.Command("systemctl", "stop", unit).Run() })
	}
	sh(t, "mkdir -p /etc/syslet/proxy && rm -f "+layout.ProxyState)
	if err := os.WriteFile(layout.ProxyConfig, pxy.Config([]pxy.Site{site}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(layout.ProxyUnit, pxy.Unit(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Command("systemctl", "stop", layout.ProxyService).Run()
		os.Remove(layout.ProxyUnit)
		_ = exec.Command("systemctl", "daemon-reload").Run()
	})
	sh(t, "systemctl daemon-reload && systemctl start "+layout.ProxyService)
	c := New(layout.ProxySocket)

	if got := get(t, "http://127.0.0.1:18080/"); got != "503 Service Unavailable" {
		t.Fatalf("before any switch the proxy answers %q, want 503: both slots are declared disabled", got)
	}
	// The first deploy: blue made ready, the state saved.
	if err := c.SetState(ctx, "web", pxy.Blue, Ready); err != nil {
		t.Fatal(err)
	}
	if err := c.SaveState(ctx, layout.ProxyState); err != nil {
		t.Fatal(err)
	}
	if got := get(t, "http://127.0.0.1:18080/"); got != "blue" {
		t.Fatalf("after blue was readied the proxy answers %q", got)
	}
	if got := liveSlots(t, "web"); !slices.Equal(got, []string{pxy.Blue}) {
		t.Fatalf("the saved state has %v ready, want [blue]", got)
	}
	// Reloaded with blue live, blue stays live.
	sh(t, "systemctl reload "+layout.ProxyService)
	if got := get(t, "http://127.0.0.1:18080/"); got != "blue" {
		t.Fatalf("after a reload the proxy answers %q, want blue (the saved state)", got)
	}

	// The switch: green readied, blue drained (idempotent: twice), its
	// sessions counted, then blue in maintenance.
	for range 2 {
		if err := c.SetState(ctx, "web", pxy.Green, Ready); err != nil {
			t.Fatal(err)
		}
		if err := c.SetState(ctx, "web", pxy.Blue, Drain); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.SaveState(ctx, layout.ProxyState); err != nil {
		t.Fatal(err)
	}
	sessions, err := c.Sessions(ctx, "web")
	if err != nil {
		t.Fatal(err)
	}
	if len(sessions) != 2 || sessions[pxy.Blue] != 0 {
		t.Errorf("sessions %v, want both servers, blue's at 0", sessions)
	}
	if err := c.SetState(ctx, "web", pxy.Blue, Maint); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if got := get(t, "http://127.0.0.1:18080/"); got != "green" {
			t.Fatalf("after the switch the proxy answers %q, want green", got)
		}
	}
	if got := liveSlots(t, "web"); !slices.Equal(got, []string{pxy.Green}) {
		t.Fatalf("the saved state has %v ready, want [green]", got)
	}
	for _, how := range []string{"reload", "restart"} {
		sh(t, "systemctl "+how+" "+layout.ProxyService)
		if got := get(t, "http://127.0.0.1:18080/"); got != "green" {
			t.Fatalf("after a %s the proxy answers %q, want green (the saved state)", how, got)
		}
	}

	// Refusals come back in HAProxy's words.
	err = c.SetState(ctx, "nosuch", pxy.Blue, Ready)
	if err == nil || !strings.Contains(err.Error(), "nosuch/blue") {
		t.Errorf("a switch of an unknown backend: %v", err)
	}
	t.Logf("an unknown backend: %v", err)
	if _, err := c.Sessions(ctx, "nosuch"); err == nil {
		t.Error("sessions of an unknown backend: no error")
	}
}
