//go:build integration

package integration

// A full disk (ENOSPC) under the trees syslet writes and under its state:
// a small tmpfs, holding a copy of what was there, mounted over
// /etc/containers/config, /etc/containers/systemd and /var/lib/syslet.
// The run that meets the full disk must exit non-zero naming the path,
// leave every file whole and the host serving what it served (nothing
// stopped, nothing replaced); once space is freed one plain run converges.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

// contents fingerprints every file and link under dir (mode, size, link
// target, content) but not directories' times: a staging that was
// removed again leaves it equal.
func contents(t *testing.T, h *testhost.Host, dir string) string {
	t.Helper()
	return h.MustRun(t, `cd `+dir+` && { find . ! -type d -printf '%p %m %s %l\n' | sort; find . -type f -exec sha256sum {} + | sort; } | sha256sum`)
}

// overTmpfs mounts a tmpfs of size over dir, holding a copy of what dir
// held.
func overTmpfs(t *testing.T, h *testhost.Host, dir, size string) {
	t.Helper()
	h.MustRun(t, fmt.Sprintf("cp -a %[1]s /root/before-tmpfs%[2]s && mount -t tmpfs -o size=%[3]s,mode=$(stat -c %%a %[1]s) tmpfs %[1]s && cp -a /root/before-tmpfs%[2]s/. %[1]s/",
		dir, strings.ReplaceAll(dir, "/", "-"), size))
}

// fill leaves about free bytes free on the filesystem holding dir.
func fill(t *testing.T, h *testhost.Host, dir string, free int) {
	t.Helper()
	h.MustRun(t, fmt.Sprintf("avail=$(df --output=avail -B1 %[1]s | tail -1); fallocate -l $((avail - %[2]d)) %[1]s/.filler", dir, free))
}

func TestFaultFullDisk(t *testing.T) {
	t.Parallel()
	h := applyHost(t)
	apply(t, h, specDir)
	h.MustRun(t, "head -c 300000 /dev/urandom | base64 -w 100 | head -c 400000 > /root/big.txt")
	web := func() (inv, serves string) {
		return prop(t, h, "web.service", "InvocationID"), strings.TrimSpace(h.Run("curl -fsS http://127.0.0.1:8080/").Stdout)
	}
	// change writes dir's 60-web.json with web serving index and,
	// when big is set, a 400 KB config file beside it.
	change := func(dir, index string, big bool) string {
		h.MustRun(t, "rm -rf "+dir+" && mkdir -p "+dir+" && cp "+specDir+"/*.json "+dir+"/")
		filter := fmt.Sprintf(`if .name == "web" then .configFiles[0].content = %q else . end`, index)
		if big {
			filter = fmt.Sprintf(`if .name == "web" then .configFiles[0].content = %q | .configFiles += [{"mountPath": "/www/big.txt", "content": $big}] else . end`, index)
		}
		h.MustRun(t, fmt.Sprintf("jq -c --rawfile big /root/big.txt %s %s/60-web.json > %s/60-web.json.new && mv %s/60-web.json.new %s/60-web.json",
			testhost.Quote(filter), specDir, dir, dir, dir))
		return dir
	}
	// fullRun applies dir on the full disk and checks that it failed
	// naming want, and that nothing changed: web not restarted and
	// serving what it served, every file of /etc/containers as it was.
	fullRun := func(t *testing.T, dir, want string) testhost.Result {
		t.Helper()
		inv, serves := web()
		before := contents(t, h, "/etc/containers")
		r := syslet(h, dir)
		t.Logf("the run on the full disk (exit %d):\n%s\n%s", r.Code, r.Stdout, r.Stderr)
		if r.OK() || !strings.Contains(r.Stdout+r.Stderr, want) || !strings.Contains(r.Stdout+r.Stderr, "no space left on device") {
			t.Errorf("a run that meets a full disk must exit non-zero naming %s and ENOSPC (exit %d)", want, r.Code)
		}
		if i, s := web(); i != inv || s != serves {
			t.Errorf("web was restarted or serves something else: invocation %s → %s, serves %q → %q", inv, i, serves, s)
		}
		if after := contents(t, h, "/etc/containers"); after != before {
			t.Errorf("a file under /etc/containers changed:\n%s", h.Run("cd /etc/containers && find . -newer /root/big.txt ! -type d"))
		}
		sane(t, h, true)
		return r
	}
	// converge frees space, then one plain run must apply dir and the
	// next plan nothing.
	converge := func(t *testing.T, dir, serves string, free func()) string {
		t.Helper()
		free()
		r := syslet(h, "--soak", testSoak, dir)
		if !r.OK() {
			t.Fatalf("the run after freeing space:\n%s", r)
		}
		if got := h.Eventually("curl -fsS http://127.0.0.1:8080/ | grep -qx "+testhost.Quote(serves), 15*time.Second); !got.OK() {
			t.Errorf("web does not serve %q: %s", serves, h.Run("curl -sS http://127.0.0.1:8080/").Stdout)
		}
		if d := syslet(h, "--diff", dir); !strings.Contains(d.Stdout, "No changes") {
			t.Errorf("the plan after converging:\n%s", d.Stdout)
		}
		sane(t, h, true)
		return nextRun(r.Stdout)
	}

	// The measurement: a 192 KiB tmpfs under /etc/containers/config
	// and a change that rewrites web's index.html and adds a 400 KB file.
	t.Run("config", func(t *testing.T) {
		overTmpfs(t, h, "/etc/containers/config", "192k")
		dir := change("/root/full-config", "<h1>shop v3</h1>\n", true)
		fullRun(t, dir, "/etc/containers/config/web/www/big.txt")
		next := converge(t, dir, "<h1>shop v3</h1>", func() { h.MustRun(t, "mount -o remount,size=4m /etc/containers/config") })
		if got := h.MustRun(t, "sha256sum < /etc/containers/config/web/www/big.txt") + h.MustRun(t, "podman exec web sha256sum /www/big.txt"); strings.Count(got, hexSum(h.MustRun(t, "cat /root/big.txt"))) != 2 {
			t.Errorf("big.txt on disk and inside web is not the spec's content: %s", got)
		}
		recordFault(t, faultRow{Fault: "ENOSPC: /etc/containers/config full (192 KiB tmpfs) while a run adds a 400 KB config file and rewrites another", Tries: 1, Survived: 1,
			DataLost: "none: nothing stopped or replaced, no file truncated, web kept serving", NextRun: next})
	})

	// The unit directory full: web's unit cannot be rewritten.
	t.Run("units", func(t *testing.T) {
		overTmpfs(t, h, "/etc/containers/systemd", "1m")
		fill(t, h, "/etc/containers/systemd", 0)
		dir := change("/root/full-units", "<h1>shop v4</h1>\n", false)
		editFile(t, h, dir+"/60-web.json", `if .name == "web" then .unit.Container.Label += ["fault=enospc"] else . end`)
		fullRun(t, dir, "/etc/containers/systemd/web.container")
		next := converge(t, dir, "<h1>shop v4</h1>", func() { h.MustRun(t, "rm /etc/containers/systemd/.filler") })
		recordFault(t, faultRow{Fault: "ENOSPC: /etc/containers/systemd full while a run rewrites a unit", Tries: 1, Survived: 1,
			DataLost: "none: nothing stopped or replaced", NextRun: next})
	})

	// syslet's own state full: the run journal cannot take the run.
	t.Run("state", func(t *testing.T) {
		overTmpfs(t, h, "/var/lib/syslet", "1m")
		fill(t, h, "/var/lib/syslet", 4096)
		dir := change("/root/full-state", "<h1>shop v5</h1>\n", false)
		r := fullRun(t, dir, "/var/lib/syslet/runs.jsonl")
		if !strings.Contains(r.Stderr, "nothing was changed") {
			t.Errorf("the refusal must say nothing was changed:\n%s", r.Stderr)
		}
		// No torn line: every line of the journal is a whole record.
		for i, l := range strings.Split(strings.TrimSpace(h.MustRun(t, "cat /var/lib/syslet/runs.jsonl")), "\n") {
			if !json.Valid([]byte(l)) {
				t.Errorf("journal line %d is torn: %q", i+1, l)
			}
		}
		next := converge(t, dir, "<h1>shop v5</h1>", func() { h.MustRun(t, "rm /var/lib/syslet/.filler") })
		recordFault(t, faultRow{Fault: "ENOSPC: /var/lib/syslet full (the run journal cannot take the run's records)", Tries: 1, Survived: 1,
			DataLost: "none: refused before any change, no torn journal line", NextRun: "refused: " + firstLine(r.Stderr, "run journal") + "; after freeing space: " + next})
	})
}

func hexSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// firstLine is the first line of out containing s.
func firstLine(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}
