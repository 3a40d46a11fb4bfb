//go:build integration

package integration

// What the probe and zero-downtime tests deploy and measure with: the test
// server (integration/testserver) alone in a `FROM scratch` image, and the
// load client (integration/loadclient) sending requests from inside the
// host around a deploy.

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/loadclient/load"
	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/release"
)

// guestBin builds one of integration/'s programs once per run, for the guest.
func guestBin(name string) func() (string, error) {
	return sync.OnceValues(func() (string, error) {
		root, err := testhost.ModuleRoot()
		if err != nil {
			return "", err
		}
		cache, err := testhost.CacheDir()
		if err != nil {
			return "", err
		}
		out := filepath.Join(cache, "bin", name)
		return out, release.Binary(root, release.Program{Name: name, Pkg: "./integration/" + name}, "amd64", out, stamp, release.Kept)
	})
}

var (
	testserverBin = guestBin("testserver")
	loadclientBin = guestBin("loadclient")
)

// installGuestBin copies one of the programs into the guest's /usr/local/bin, once per host.
func installGuestBin(t *testing.T, h *testhost.Host, name string, bin func() (string, error)) {
	t.Helper()
	if h.Run("test -x /usr/local/bin/" + name).OK() {
		return
	}
	path, err := bin()
	must(t, err)
	must(t, h.CopyIn(path, "/usr/local/bin/"+name))
}

// serverImage builds an image holding nothing but the test server, its
// behaviour set by env (testserver's doc lists the variables), pushes it
// to the guest's registry as localhost:5000/REF and returns that name.
func serverImage(t *testing.T, h *testhost.Host, ref string, env map[string]string) string {
	t.Helper()
	installGuestBin(t, h, "testserver", testserverBin)
	var cf strings.Builder
	cf.WriteString("FROM scratch\nCOPY testserver /testserver\n")
	for _, k := range slices.Sorted(maps.Keys(env)) {
		fmt.Fprintf(&cf, "ENV %s=%q\n", k, env[k])
	}
	cf.WriteString("EXPOSE 8080\nENTRYPOINT [\"/testserver\"]\n")
	dir := "/root/images/" + strings.NewReplacer("/", "_", ":", "_").Replace(ref)
	h.MustRun(t, "mkdir -p "+dir+" && cp /usr/local/bin/testserver "+dir+"/")
	must(t, h.WriteFile(dir+"/Containerfile", []byte(cf.String()), 0o644))
	full := "localhost:5000/" + ref
	h.MustRun(t, fmt.Sprintf("podman build -q -t %s %s >/dev/null && podman push -q --tls-verify=false %s", full, dir, full))
	return full
}

// loadRun is a load client running in a guest.
type loadRun struct {
	h   *testhost.Host
	out string
}

// startLoad starts the load client in h against url at rate requests a
// second from 4 workers, for at most d, and waits for its first good answer.
func startLoad(t *testing.T, h *testhost.Host, url string, rate int, d time.Duration) *loadRun {
	t.Helper()
	installGuestBin(t, h, "loadclient", loadclientBin)
	out := fmt.Sprintf("/run/load-%d.tsv", time.Now().UnixNano())
	h.MustRun(t, fmt.Sprintf("rm -f %[1]s.ready; systemd-run -q --unit load-%[2]d --collect loadclient -url %[3]s -workers 4 -rate %[4]d -for %[5]s -out %[1]s -ready %[1]s.ready",
		out, time.Now().UnixNano(), url, rate, d))
	if r := h.Eventually("test -e "+out+".ready", 20*time.Second); !r.OK() {
		t.Fatalf("the load client got no good answer from %s within 20s", url)
	}
	return &loadRun{h: h, out: out}
}

// now is the guest's clock (it is this machine's kernel clock).
func guestNow(t *testing.T, h *testhost.Host) time.Time {
	t.Helper()
	var ns int64
	if _, err := fmt.Sscan(h.MustRun(t, "date +%s%N"), &ns); err != nil {
		t.Fatal(err)
	}
	return time.Unix(0, ns)
}

// stop ends the load client and reads its record.
func (l *loadRun) stop(t *testing.T) []load.Request {
	t.Helper()
	l.h.MustRun(t, "pkill -TERM -x loadclient || true")
	if r := l.h.Eventually("test -s "+l.out+" && ! pgrep -x loadclient", 30*time.Second); !r.OK() {
		t.Fatalf("the load client did not write its record %s", l.out)
	}
	rs, err := load.Read(strings.NewReader(l.h.MustRun(t, "cat "+l.out)))
	must(t, err)
	return rs
}
