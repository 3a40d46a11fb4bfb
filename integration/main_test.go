//go:build integration

// Integration tests: syslet against real test hosts (see integration/README.md and package testhost).
// Run with `go tool task test:integration`.
package integration

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/release"
)

// sysletBin is the syslet binary built by TestMain for the guest
// (linux/amd64, static), as a release builds it but with its source paths
// kept (release.Kept): it reuses the packages the unit tests compiled.
var sysletBin string

// webhookdBin is the webhookd binary built by TestMain for the guest.
var webhookdBin string

// programs are the release's programs TestMain built: name → binary.
var programs map[string]string

// debFile builds the .deb of those two binaries once, exactly as a
// release packages them (package_test.go installs it): on first use, so
// that packaging runs beside the tests rather than before all of them.
var debFile = sync.OnceValues(func() (string, error) {
	root, err := testhost.ModuleRoot()
	if err != nil {
		return "", err
	}
	cache, err := testhost.CacheDir()
	if err != nil {
		return "", err
	}
	return release.Package(root, "deb", "amd64", programs, stamp, filepath.Join(cache, "dist"))
})

// stamp is the version and commit the binaries and the package carry.
var stamp release.Stamp

// faultproxyBin is integration/faultproxy, built by TestMain for the guest.
var faultproxyBin string

// buildTags are the tags syslet's podman bindings need to build without cgo and gpgme.
const buildTags = release.Tags

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
	// One build of each binary and of the package for every test and host
	// of the run, by the release's own code.
	t0 = time.Now()
	release.Log = os.Stderr
	if stamp, err = release.ReadStamp(root); err != nil {
		return fail("%v", err)
	}
	programs = map[string]string{}
	for _, p := range release.Programs {
		programs[p.Name] = filepath.Join(cache, "bin", p.Name)
		if err := release.Binary(root, p, "amd64", programs[p.Name], stamp, release.Kept); err != nil {
			return fail("%v", err)
		}
	}
	sysletBin, webhookdBin = programs["syslet"], programs["webhookd"]
	// The registry that fails on purpose, for the fault suite (faults_registry_test.go).
	faultproxyBin = filepath.Join(cache, "bin", "faultproxy")
	if err := buildFaultproxy(root, faultproxyBin); err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(os.Stderr, "integration: binaries built in %s\n", time.Since(t0).Round(time.Millisecond))
	code := m.Run()
	writeFaultTable()
	testhost.WriteUsage(os.Stderr)
	writeOwnCPU(os.Stderr)
	return code
}

// writeOwnCPU prints the CPU this side of the tests used: the test process
// (SSH clients, servers the tests run here, checks) and the processes it
// waited for (testhost.sh, ssh, git). The guests' CPU is in the
// testhost-usage lines; the two together are what the run cost the
// machine.
func writeOwnCPU(w io.Writer) {
	var self, kids syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids) != nil {
		return
	}
	cpu := func(r *syscall.Rusage) float64 {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano()).Seconds()
	}
	fmt.Fprintf(w, "integration: CPU on this side: the test process %.0fs, processes it ran %.0fs\n", cpu(&self), cpu(&kids))
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
