//go:build integration

// Integration tests: syslet against real test hosts (see integration/README.md and package testhost).
// Run with `go tool task test:integration`.
package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

// sysletBin is the syslet binary built by TestMain for the guest (linux/amd64, static).
var sysletBin string

// webhookdBin is the webhookd binary built by TestMain for the guest.
var webhookdBin string

// faultproxyBin is integration/faultproxy, built by TestMain for the guest.
var faultproxyBin string

// buildTags are the tags syslet's podman bindings need to build without cgo and gpgme.
const buildTags = "remote,containers_image_openpgp,exclude_graphdriver_btrfs,btrfs_noversion"

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "integration: FAIL: "+format+"\n", args...)
		return 1
	}
	// Leftovers of killed runs first; the test host must be buildable here, or the run fails (never skips).
	if err := testhost.Sweep(); err != nil {
		return fail("the test host cannot run on this machine: %v", err)
	}
	t0 := time.Now()
	if err := testhost.Build(); err != nil {
		return fail("the test host cannot run on this machine: %v", err)
	}
	fmt.Fprintf(os.Stderr, "integration: base image ready in %s\n", time.Since(t0).Round(time.Millisecond))

	root, err := testhost.ModuleRoot()
	if err != nil {
		return fail("%v", err)
	}
	cache, err := testhost.CacheDir()
	if err != nil {
		return fail("%v", err)
	}
	// One build of each binary for every test and host of the run.
	sysletBin = filepath.Join(cache, "bin", "syslet")
	if err := build(root, "./cmd/syslet", sysletBin); err != nil {
		return fail("%v", err)
	}
	// webhookd, for the tests that run it in the guest as a systemd service (webhookd_test.go).
	webhookdBin = filepath.Join(cache, "bin", "webhookd")
	if err := build(root, "./cmd/webhookd", webhookdBin); err != nil {
		return fail("%v", err)
	}
	// The registry that fails on purpose, for the fault suite (faults_registry_test.go).
	faultproxyBin = filepath.Join(cache, "bin", "faultproxy")
	if err := build(root, "./integration/faultproxy", faultproxyBin); err != nil {
		return fail("%v", err)
	}
	code := m.Run()
	writeFaultTable()
	return code
}

// build compiles the package pkg of the module at root into out, for the
// guests' linux/amd64, and says how long it took.
func build(root, pkg, out string) error {
	t0 := time.Now()
	cmd := exec.Command("go", "build", "-trimpath", "-tags", buildTags, "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w", pkg, err)
	}
	fmt.Fprintf(os.Stderr, "integration: built %s in %s\n", out, time.Since(t0).Round(time.Millisecond))
	return nil
}

// startWithSyslet starts a host and installs the syslet binary as /usr/local/bin/syslet.
func startWithSyslet(t *testing.T) *testhost.Host {
	t.Helper()
	h := testhost.Start(t)
	if err := h.CopyIn(sysletBin, "/usr/local/bin/syslet"); err != nil {
		t.Fatal(err)
	}
	return h
}
