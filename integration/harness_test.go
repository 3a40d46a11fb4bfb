//go:build integration

package integration

import (
	"bytes"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

// TestHarness proves the test host is what the other tests rely on.
func TestHarness(t *testing.T) {
	t.Parallel()
	h := startWithSyslet(t)

	t.Run("systemd is PID 1 and the system is running", func(t *testing.T) {
		out := h.MustRun(t, "readlink /proc/1/exe; ps -p 1 -o comm=; systemctl is-system-running")
		want := "/usr/lib/systemd/systemd\nsystemd\nrunning\n"
		if out != want {
			t.Fatalf("got %q, want %q\nfailed units: %s", out, want, h.Run("systemctl --failed --no-legend").Stdout)
		}
	})

	t.Run("podman runs rootful with quadlet", func(t *testing.T) {
		out := h.MustRun(t, `podman info --format '{{.Host.Security.Rootless}} {{.Host.CgroupsVersion}} {{.Host.CgroupManager}} {{.Store.GraphDriverName}}'`)
		if got, want := strings.TrimSpace(out), "false v2 systemd overlay"; got != want {
			t.Fatalf("podman info: got %q, want %q", got, want)
		}
		h.MustRun(t, "test -x /usr/libexec/podman/quadlet")
	})

	t.Run("registry holds busybox", func(t *testing.T) {
		out := h.MustRun(t, "curl -sSf http://127.0.0.1:5000/v2/busybox/tags/list")
		if !strings.Contains(out, `"latest"`) {
			t.Fatalf("busybox tags: %s", out)
		}
		if out := h.MustRun(t, "podman run --rm localhost:5000/busybox:latest cat /etc/testhost-marker"); strings.TrimSpace(out) != "busybox:latest" {
			t.Fatalf("busybox marker: %q", out)
		}
	})

	t.Run("MakeImage gives tags with different digests", func(t *testing.T) {
		refs := map[string]string{"marker-1": "web:v1", "marker-2": "web:v2"}
		digests := map[string]string{}
		for marker, ref := range refs {
			got, err := h.MakeImage(ref, marker)
			if err != nil {
				t.Fatal(err)
			}
			if want := "localhost:5000/" + ref; got != want {
				t.Fatalf("MakeImage(%q) = %q, want %q", ref, got, want)
			}
			tag := strings.TrimPrefix(ref, "web:")
			digests[ref] = strings.TrimSpace(h.MustRun(t, "curl -sSf -o /dev/null -D - -H 'Accept: application/vnd.oci.image.manifest.v1+json' -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' http://127.0.0.1:5000/v2/web/manifests/"+tag+" | tr -d '\\r' | sed -n 's/^[Dd]ocker-[Cc]ontent-[Dd]igest: //p'"))
			if !strings.HasPrefix(digests[ref], "sha256:") {
				t.Fatalf("no digest for %s: %q", ref, digests[ref])
			}
			if out := h.MustRun(t, "podman run --rm localhost:5000/"+ref+" cat /etc/testhost-marker"); strings.TrimSpace(out) != marker {
				t.Fatalf("%s: marker %q, want %q", ref, out, marker)
			}
		}
		if digests["web:v1"] == digests["web:v2"] {
			t.Fatalf("web:v1 and web:v2 have the same digest %s", digests["web:v1"])
		}
		t.Logf("digests: %v", digests)
	})

	t.Run("journal since a cursor", func(t *testing.T) {
		h.MustRun(t, "logger -t syslet-it before-cursor")
		cur, err := h.JournalCursor()
		if err != nil {
			t.Fatal(err)
		}
		h.MustRun(t, "logger -t syslet-it after-cursor")
		var out string
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out, "after-cursor") && time.Now().Before(deadline) {
			if out, err = h.JournalSince(cur, "-t", "syslet-it", "-o", "cat"); err != nil {
				t.Fatal(err)
			}
		}
		if out != "after-cursor\n" {
			t.Fatalf("JournalSince: got %q, want only %q", out, "after-cursor\n")
		}
	})

	t.Run("commands get stdin, stdout, stderr and the exit code", func(t *testing.T) {
		r := h.RunInput(strings.NewReader("in put\n"), "cat; echo err >&2; exit 3")
		if r.Err != nil || r.Code != 3 || r.Stdout != "in put\n" || r.Stderr != "err\n" {
			t.Fatalf("got %s", r)
		}
	})

	t.Run("copy in and out round-trips", func(t *testing.T) {
		src := t.TempDir()
		files := map[string]struct {
			data string
			mode fs.FileMode
		}{
			"a.txt":            {"alpha\n", 0o644},
			"sub/b.sh":         {"#!/bin/sh\necho b\n", 0o755},
			"sub/deep/c.conf":  {"secret=1\n", 0o600},
			"sub/deep/empty":   {"", 0o640},
			"with space/d.bin": {string([]byte{0, 1, 2, 255}), 0o644},
		}
		for name, f := range files {
			p := filepath.Join(src, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(f.data), f.mode); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink("a.txt", filepath.Join(src, "link")); err != nil {
			t.Fatal(err)
		}
		if err := h.CopyIn(src, "/srv/roundtrip"); err != nil {
			t.Fatal(err)
		}
		if out := h.MustRun(t, "stat -c '%a %U' /srv/roundtrip/sub/deep/c.conf; sh /srv/roundtrip/sub/b.sh; readlink /srv/roundtrip/link"); out != "600 root\nb\na.txt\n" {
			t.Fatalf("in the guest: %q", out)
		}
		dst := filepath.Join(t.TempDir(), "back")
		if err := h.CopyOut("/srv/roundtrip", dst); err != nil {
			t.Fatal(err)
		}
		for name, f := range files {
			p := filepath.Join(dst, name)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			fi, _ := os.Stat(p)
			if !bytes.Equal(data, []byte(f.data)) || fi.Mode().Perm() != f.mode {
				t.Errorf("%s: got %q %v, want %q %v", name, data, fi.Mode().Perm(), f.data, f.mode)
			}
		}
		if l, err := os.Readlink(filepath.Join(dst, "link")); err != nil || l != "a.txt" {
			t.Errorf("link: %q %v", l, err)
		}
		// single files, both ways
		if err := h.CopyIn(filepath.Join(src, "sub/b.sh"), "/opt/x/run.sh"); err != nil {
			t.Fatal(err)
		}
		one := filepath.Join(t.TempDir(), "one.sh")
		if err := h.CopyOut("/opt/x/run.sh", one); err != nil {
			t.Fatal(err)
		}
		if data, _ := os.ReadFile(one); string(data) != files["sub/b.sh"].data {
			t.Fatalf("single file round trip: %q", data)
		}
		if err := h.CopyOut("/no/such/file", one); err == nil {
			t.Fatal("CopyOut of a missing file succeeded")
		}
	})

	t.Run("syslet binary runs in the guest", func(t *testing.T) {
		r := h.Run("/usr/local/bin/syslet --help")
		if r.Err != nil || r.Code == 126 || r.Code == 127 {
			t.Fatalf("syslet does not run in the guest: %s", r)
		}
	})
}

// TestConcurrentHosts runs two hosts at once (parallel subtests): each has its own registry,
// network namespace and SSH port.
func TestConcurrentHosts(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	ports := map[int]string{}
	for i := range 2 {
		t.Run(fmt.Sprintf("host-%d", i), func(t *testing.T) {
			t.Parallel()
			t0 := time.Now()
			h := testhost.Start(t)
			t.Logf("up in %s", time.Since(t0).Round(time.Millisecond))
			mu.Lock()
			if other, dup := ports[h.Port()]; dup {
				t.Errorf("port %d used by %s too", h.Port(), other)
			}
			ports[h.Port()] = h.Name()
			mu.Unlock()
			name := fmt.Sprintf("only-on-%d", i)
			if _, err := h.MakeImage(name+":v1", name); err != nil {
				t.Fatal(err)
			}
			cat := h.MustRun(t, "curl -sSf http://127.0.0.1:5000/v2/_catalog")
			if want := fmt.Sprintf(`{"repositories":["busybox","%s"]}`, name); strings.TrimSpace(cat) != want {
				t.Errorf("catalog: got %s, want %s", cat, want)
			}
			if out := h.MustRun(t, "podman run --rm localhost:5000/"+name+":v1 cat /www/index.html"); strings.TrimSpace(out) != name {
				t.Errorf("image content: %q", out)
			}
		})
	}
}

// TestSweepRemovesLeftovers: an instance whose owner process died (a test run killed with kill -9)
// is removed by the next sweep: no nspawn, no forwarder, no listening port, no cgroup, no run dir.
func TestSweepRemovesLeftovers(t *testing.T) {
	t.Parallel()
	script, err := testhost.Script()
	if err != nil {
		t.Fatal(err)
	}
	owner := exec.Command("sleep", "600") // stands in for a test binary that will be killed
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	defer owner.Process.Kill()
	name := fmt.Sprintf("sweep-%d", os.Getpid())
	env := append(os.Environ(), "TESTHOST_NAME="+name, fmt.Sprintf("TESTHOST_OWNER=%d", owner.Process.Pid))
	t.Cleanup(func() { // only does something if the test failed half-way
		cmd := exec.Command("bash", script, "down")
		cmd.Env = append(env, "TESTHOST_STOP_TIMEOUT=0")
		cmd.Run()
	})
	up := exec.Command("bash", script, "up")
	up.Env = env
	out, err := up.Output()
	if err != nil {
		t.Fatalf("testhost.sh up: %v", err)
	}
	port := strings.TrimSpace(string(out))

	// what the instance holds on this machine, from `testhost.sh list`
	list := exec.Command("bash", script, "list")
	lout, err := list.Output()
	if err != nil {
		t.Fatal(err)
	}
	var cgroup, runDir, pid string
	for _, l := range strings.Split(string(lout), "\n") {
		f := strings.Split(l, "\t")
		if len(f) >= 3 && strings.HasSuffix(f[1], "/run/"+name) {
			cgroup, runDir, pid = f[0], f[1], strings.TrimPrefix(f[2], "pid=")
		}
	}
	if cgroup == "" {
		t.Fatalf("instance %s not in testhost.sh list:\n%s", name, lout)
	}
	cgDirs := []string{"/sys/fs/cgroup/unified/" + cgroup, "/sys/fs/cgroup/systemd/" + cgroup}
	held := func() []string {
		var h []string
		if comm, err := os.ReadFile("/proc/" + pid + "/comm"); err == nil && strings.TrimSpace(string(comm)) == "systemd-nspawn" {
			h = append(h, "systemd-nspawn pid "+pid)
		}
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second); err == nil {
			c.Close()
			h = append(h, "listening port "+port)
		}
		for _, p := range append(cgDirs, runDir) {
			if _, err := os.Stat(p); err == nil {
				h = append(h, p)
			}
		}
		return h
	}
	before := held()
	t.Logf("instance %s holds: %s", name, strings.Join(before, ", "))
	if len(before) < 4 {
		t.Fatalf("instance %s is not fully up: %v", name, before)
	}

	// a sweep while the owner lives keeps the instance
	if err := testhost.Sweep(); err != nil {
		t.Fatal(err)
	}
	if h := held(); len(h) != len(before) {
		t.Fatalf("sweep stopped an instance whose owner lives: left %v", h)
	}
	// the owner dies (kill -9), the next sweep removes everything
	owner.Process.Kill()
	owner.Wait()
	if err := testhost.Sweep(); err != nil {
		t.Fatal(err)
	}
	if h := held(); len(h) > 0 {
		t.Fatalf("left behind after the sweep: %v", h)
	}
}
