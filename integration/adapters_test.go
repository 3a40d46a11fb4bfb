//go:build integration

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syslet/syslet/integration/testhost"
)

// TestAdaptersInGuest runs the host adapters' own guest tests (build tag
// "guest": pkg/host/systemd against systemd 257 over D-Bus, pkg/host/podman
// against podman 5.4's REST socket, pkg/host/proxy against HAProxy 3.0)
// inside a test host, the way go-systemd's CI runs its tests in a
// privileged container.
func TestAdaptersInGuest(t *testing.T) {
	adaptersInGuest(t, "systemd", "podman", "proxy")
}

// adaptersInGuest runs the guest tests of the named pkg/host adapters, each
// on a host of its own.
func adaptersInGuest(t *testing.T, pkgs ...string) {
	t.Parallel()
	root, err := testhost.ModuleRoot()
	must(t, err)
	cache, err := testhost.CacheDir()
	must(t, err)
	for _, pkg := range pkgs {
		t.Run(pkg, func(t *testing.T) {
			t.Parallel()
			bin := filepath.Join(cache, "bin", pkg+".test")
			cmd := exec.Command("go", "test", "-c", "-tags", "guest,"+buildTags, "-o", bin, "./pkg/host/"+pkg)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("building the %s guest tests: %v\n%s", pkg, err, out)
			}
			h := testhost.Start(t)
			must(t, h.CopyIn(bin, "/root/"+pkg+".test"))
			r := h.Run("cd /root && ./" + pkg + ".test -test.v -test.count=1 -test.timeout=5m")
			t.Logf("%s", r.Stdout)
			if !r.OK() {
				t.Fatalf("guest tests of pkg/host/%s failed:\n%s", pkg, r)
			}
			if n := strings.Count(r.Stdout, "--- PASS"); n == 0 {
				t.Fatalf("no guest test passed:\n%s", r.Stdout)
			}
		})
	}
}
