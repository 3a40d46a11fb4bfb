//go:build integration && bench

package integration

// The 200-target benchmark of `syslet push` (go tool task bench:fleet;
// BENCHMARKS.md, issue 38): how far SSH fan-out goes from one machine.
//
// One test host plays 200 hosts: 200 sshd daemons, one per loopback port
// (20001–20200), each target's syslet planning against its own --root
// tree of 50 deployed containers (tree-syslet picks the tree by the port
// the SSH connection came in on). syslet push runs in the same guest, so
// its 200 connections stay on the guest's loopback; its peak RSS is GNU
// time's, its open descriptors are counted from /proc, and the time from
// the last host's end to the table is read from its stdout's lines as they
// arrive (integration/bench/fleet-run.sh). Everything shares the guest's
// two CPUs: push, 200 sshd and the targets' syslet.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/specgen"
)

const (
	fleetFirstPort = 20001
	fleetTargets   = 200
)

// fleetRun is one run of fleet-run.sh.
type fleetRun struct {
	wall, gap, cpu time.Duration
	rssKB          int
	fds            int
}

func TestBenchFleet200(t *testing.T) {
	runs := envInt("BENCH_RUNS", 3)
	start, load0 := time.Now(), loadAvg()
	h := startWithSyslet(t)
	script, err := testhost.ModuleRoot()
	must(t, err)
	must(t, h.CopyIn(filepath.Join(script, "integration/bench/fleet-run.sh"), "/usr/local/bin/fleet-run"))
	must(t, h.CopyIn("/usr/bin/time", "/usr/local/bin/time"))

	o := benchSpecs(50)
	base := string(specgen.Generate(o))
	// One container's Description changed: a metadata-only rewrite on
	// every target (no restart).
	meta := strings.Replace(base, `"unit":{"Container":{`, `"unit":{"Unit":{"Description":"`+specgen.ContainerName(0)+`, revision 2"},"Container":{`, 1)
	if meta == base {
		t.Fatal("the metadata-only change did not apply to the generated specs")
	}
	must(t, h.WriteFile("/root/fleet/s50.json", []byte(base), 0o644))
	must(t, h.WriteFile("/root/fleet/s50-meta.json", []byte(meta), 0o644))
	last := fleetFirstPort + fleetTargets - 1
	t0 := time.Now()
	h.MustRun(t, fmt.Sprintf(`set -e
ports=$(seq %d %d)
syslet render /root/fleet/s50.json --out /srv/fleet/base >/dev/null
for p in $ports; do cp -a /srv/fleet/base /srv/fleet/trees-$p; done
ssh-keygen -q -t ed25519 -N '' -f /root/fleet/key
cat /root/fleet/key.pub >> /root/.ssh/authorized_keys
hk=$(cut -d' ' -f1,2 /etc/ssh/ssh_host_ed25519_key.pub)
for p in $ports; do echo "[127.0.0.1]:$p $hk"; printf 'Host t%%s\n  HostName 127.0.0.1\n  Port %%s\n  User root\n' $p $p >> /root/fleet/ssh_config; done > /root/fleet/known_hosts
cat > /usr/local/bin/tree-syslet <<'EOF'
#!/bin/sh
# syslet against the --root tree of the port this SSH connection came in on
exec /usr/local/bin/syslet --root "/srv/fleet/trees-${SSH_CONNECTION##* }" "$@"
EOF
chmod 755 /usr/local/bin/tree-syslet
cat > /etc/systemd/system/fleet-sshd@.service <<'EOF'
[Unit]
Description=sshd of fleet target %%i
[Service]
ExecStart=/usr/sbin/sshd -D -p %%i -o PidFile=none -o PerSourcePenalties=no -o LogLevel=ERROR
EOF
systemctl daemon-reload
systemctl start $(for p in $ports; do echo fleet-sshd@$p.service; done)
for p in $ports; do timeout 10 bash -c "until exec 3<>/dev/tcp/127.0.0.1/$p; do sleep 0.05; done" 2>/dev/null; done`, fleetFirstPort, last))
	t.Logf("200 targets ready in %s", time.Since(t0).Round(time.Millisecond))

	var one sample
	targets := make([]string, fleetTargets)
	for i := range targets {
		targets[i] = fmt.Sprintf("t%d", fleetFirstPort+i)
	}
	push := func(name string, specs string, extra ...string) fleetRun {
		t.Helper()
		args := append([]string{"-F", "/root/fleet/ssh_config", "--known-hosts", "/root/fleet/known_hosts", "-i", "/root/fleet/key",
			"--remote-command", "tree-syslet", "--diff"}, extra...)
		cmd := "fleet-run /tmp/" + name + " " + testhost.QuoteArgs(args...) + " " + specs
		out := strings.Fields(h.MustRun(t, cmd))
		if len(out) != 6 || out[4] != "0" {
			t.Fatalf("%s: %v\n%s", name, out, h.Run("tail -5 /tmp/"+name+".err; grep -v ' t[0-9]* | ' /tmp/"+name+".lines | tail -20"))
		}
		f := func(s string) time.Duration {
			v, _ := strconv.ParseFloat(s, 64)
			return time.Duration(v * float64(time.Second))
		}
		rss, _ := strconv.Atoi(out[1])
		fds, _ := strconv.Atoi(out[2])
		return fleetRun{wall: f(out[0]), rssKB: rss, fds: fds, gap: f(out[3]), cpu: f(out[5])}
	}

	// Every target converged: the plan of the base set finds nothing.
	if r := h.MustRun(t, "fleet-run /tmp/check -F /root/fleet/ssh_config --known-hosts /root/fleet/known_hosts -i /root/fleet/key --remote-command tree-syslet --diff t20001 t20200 /root/fleet/s50.json >/dev/null && grep -c 'unchanged *no changes' /tmp/check.lines"); strings.TrimSpace(r) != "2" {
		t.Fatalf("the trees are not converged:\n%s", h.Run("cat /tmp/check.lines"))
	}

	var rows []string
	row := func(cells ...string) { rows = append(rows, "| "+strings.Join(cells, " | ")+" |") }
	measure := func(name, what, specs string, p, waves int, extra ...string) {
		var wall, gaps, cpu sample
		var rss, fds int
		for range runs {
			r := push(name, specs, append(append([]string{"--parallel", strconv.Itoa(p)}, extra...), targets...)...)
			wall, gaps, cpu = append(wall, r.wall), append(gaps, r.gap), append(cpu, r.cpu)
			rss, fds = max(rss, r.rssKB), max(fds, r.fds)
		}
		expect := one.median() * time.Duration(waves)
		row(what, fmt.Sprintf("%s (%d × %s)", secs(expect), waves, secs(one.median())),
			wall.String(), fmt.Sprintf("%.2f×", wall.median().Seconds()/expect.Seconds()),
			fmt.Sprintf("%s (%.1f ms a host)", secs(cpu.median()), cpu.median().Seconds()*1000/fleetTargets),
			fmt.Sprintf("%.1f MB", float64(rss)/1024), strconv.Itoa(fds), fmt.Sprintf("at most %.1f ms", gapsMax(gaps).Seconds()*1000))
	}

	// One host, then all 200 at several --parallel: push --diff of the
	// base set (every target converged: "no changes").
	for range max(runs, 5) {
		one = append(one, push("one", "/root/fleet/s50.json", "t20001").wall)
	}
	row("`push --diff`, 1 target", "", one.String(), "", "", "", "", "")
	for _, p := range []int{4, 10, 25, 50} {
		measure(fmt.Sprintf("all-p%d", p), fmt.Sprintf("`push --diff`, 200 targets, `--parallel %d`", p), "/root/fleet/s50.json",
			p, int(math.Ceil(float64(fleetTargets)/float64(p))))
	}
	// A rollout: the metadata-only change, 10 % (20 targets) at a time.
	for _, p := range []int{10, 20} {
		name := fmt.Sprintf("batch-p%d", p)
		measure(name, fmt.Sprintf("`push --diff --batch 10%%` (10 batches of 20), metadata-only change, `--parallel %d`", p), "/root/fleet/s50-meta.json",
			p, 10*int(math.Ceil(20/float64(p))), "--batch", "10%")
		if n := strings.TrimSpace(h.MustRun(t, "grep -c ' planned .*1 metadata-only' /tmp/"+name+".lines")); n != "200" {
			t.Fatalf("the rollout did not plan the metadata-only change on every target (%s of 200):\n%s", n, h.Run("grep -v ' t[0-9]* | ' /tmp/"+name+".lines | head -30"))
		}
	}
	guest := strings.Fields(h.MustRun(t, "nproc; syslet version | head -1"))
	table := fmt.Sprintf("%s–%s UTC, this machine's load %s → %s; the guest's %s CPUs run push, the 200 sshd and their syslet; %s %s; %d run(s) a row (median, min–max)\n\n",
		start.UTC().Format("2006-01-02 15:04"), time.Now().UTC().Format("15:04"), load0, loadAvg(), guest[0], guest[1], guest[2], runs) +
		"| work | one host × ⌈hosts / parallel⌉ | wall time | ratio | push CPU (user + sys) | push peak RSS | push peak open fds | last host's end → table |\n|---|---|---|---|---|---|---|---|\n" +
		strings.Join(rows, "\n") + "\n"
	fmt.Println(table)
	if out := os.Getenv("BENCH_OUT"); out != "" {
		must(t, os.WriteFile(out, []byte(table), 0o644))
	}
}

func gapsMax(s sample) time.Duration { return s.sorted()[len(s)-1] }
