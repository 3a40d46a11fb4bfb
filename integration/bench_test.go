//go:build integration && bench

// The real-host benchmark (go tool task bench; BENCHMARKS.md): whole
// processes on test hosts, syslet side by side with the floor (the same
// work done by hand with the fewest processes) and with Ansible. It is not
// part of go tool task test: it takes a quarter of an hour and measures
// rather than checks.
package integration

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/specgen"
)

// benchImage is the one image every benchmark container runs; each host
// pulls it into podman's store before measuring ("images already local").
const benchImage = "localhost:5000/busybox:latest"

// benchSpecs is the spec set of n containers the benchmark deploys:
// specgen's default mix (a volume per 10 containers, a network per 50, a
// config file and a config dir each), running busybox sleep under
// catatonit, so that every container stops at once on SIGTERM.
func benchSpecs(n int, changed ...int) specgen.Options {
	o := specgen.Default(n)
	o.Images = []string{benchImage}
	o.Exec = "sleep 1000000"
	o.RunInit = true
	o.Changed = changed
	return o
}

// services lists every service a set runs: networks, volumes, containers.
func services(o specgen.Options) []string {
	var s []string
	for i := range o.Networks() {
		s = append(s, fmt.Sprintf("n%04d-network.service", i))
	}
	for i := range o.Volumes() {
		s = append(s, fmt.Sprintf("v%04d-volume.service", i))
	}
	for i := range o.Containers {
		s = append(s, specgen.ContainerName(i)+".service")
	}
	return s
}

// envInt reads a positive count from the environment.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// sample is the wall times of the runs of one measurement.
type sample []time.Duration

func (s sample) sorted() sample { c := slices.Clone(s); slices.Sort(c); return c }
func (s sample) median() time.Duration {
	c := s.sorted()
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}
func (s sample) String() string {
	c := s.sorted()
	return fmt.Sprintf("%s (%s–%s)", secs(s.median()), secs(c[0]), secs(c[len(c)-1]))
}

func secs(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.3f s", d.Seconds())
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// bench is one guest prepared for measuring.
type bench struct {
	t *testing.T
	h *testhost.Host
}

// timed runs cmd in the guest and returns its wall time measured in the
// guest (so SSH is not counted). The command must succeed.
func (b *bench) timed(cmd string) time.Duration {
	b.t.Helper()
	return timedOn(b.t, b.h, cmd)
}

func timedOn(t *testing.T, h *testhost.Host, cmd string) time.Duration {
	t.Helper()
	r := h.Run(`t0=$(date +%s%N); ( ` + cmd + ` ) >/tmp/bench.out 2>&1; rc=$?; t1=$(date +%s%N); ` +
		`if [ $rc != 0 ]; then tail -40 /tmp/bench.out; exit $rc; fi; echo $((t1-t0))`)
	if !r.OK() {
		t.Fatalf("benchmark command failed: %s\n%s", cmd, r)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(r.Stdout), 10, 64)
	if err != nil {
		t.Fatalf("timing %q: %v", cmd, err)
	}
	return time.Duration(ns)
}

func (b *bench) must(cmd string) string {
	b.t.Helper()
	return b.h.MustRun(b.t, cmd)
}

// newBench boots a host, installs syslet and the generated spec sets, and
// pulls the image.
func newBench(t *testing.T, sets map[string]specgen.Options) *bench {
	t.Helper()
	b := &bench{t: t, h: startWithSyslet(t)}
	// podman's API socket, which syslet and the floor's reads both use.
	b.must("mkdir -p /root/bench && podman pull -q " + benchImage + " >/dev/null && systemctl start podman.socket")
	for name, o := range sets {
		b.addSet(name, o)
	}
	return b
}

// addSet writes a spec set, what an apply of it writes (for the floor to
// copy by hand) and the list of its services.
func (b *bench) addSet(name string, o specgen.Options) {
	b.t.Helper()
	must(b.t, b.h.WriteFile("/root/bench/"+name+".json", specgen.Generate(o), 0o644))
	b.must("syslet render /root/bench/" + name + ".json --out /root/bench/" + name + ".tree >/dev/null")
	must(b.t, b.h.WriteFile("/root/bench/"+name+".services", []byte(strings.Join(services(o), " ")), 0o644))
	must(b.t, b.h.WriteFile("/root/bench/"+name+".read", []byte(floorRead(o)), 0o755))
}

// teardown returns the host to no containers: every benchmark unit
// stopped and removed, its volumes and networks deleted.
func (b *bench) teardown() {
	b.t.Helper()
	b.must(`units=$(systemctl list-units --all --plain --no-legend 'c0*' 'v0*' 'n0*' | awk '{print $1}')
[ -z "$units" ] || systemctl stop $units
rm -rf /etc/containers/systemd/* /etc/containers/config /etc/syslet/config.json
systemctl daemon-reload
[ -z "$units" ] || systemctl reset-failed $units 2>/dev/null || true
podman rm -af >/dev/null; podman volume rm -af >/dev/null
podman network ls -q | grep '^n0' | xargs -r podman network rm >/dev/null`)
}

// running checks, untimed, that a set's every service is active and that
// a few of its containers answer with their own config file: how each
// side of a row must leave the host.
func (b *bench) running(set string, o specgen.Options) {
	b.t.Helper()
	checkRunning(b.t, b.h, set, o)
}

func checkRunning(t *testing.T, h *testhost.Host, set string, o specgen.Options) {
	t.Helper()
	if out := h.MustRun(t, "systemctl is-active $(cat /root/bench/"+set+".services) | sort | uniq -c"); strings.TrimSpace(out) != fmt.Sprintf("%d active", len(services(o))) {
		t.Fatalf("%s: not every service is active:\n%s", set, out)
	}
	for _, i := range []int{0, o.Containers / 2, o.Containers - 1} {
		c := specgen.ContainerName(i)
		want := fmt.Sprintf("container=%s\nfile=0\n", c)
		if got := h.MustRun(t, "podman exec "+c+" cat /etc/app/f0.conf"); got != want {
			t.Fatalf("%s: container %s serves %q, want %q", set, c, got, want)
		}
	}
}

// floorDeploy is a first deploy by hand: copy the files an apply writes,
// one daemon-reload, one systemctl start of every service (which waits
// for all of them).
func floorDeploy(set string) string {
	return "cp -a /root/bench/" + set + ".tree/etc/containers/. /etc/containers/ && systemctl daemon-reload && systemctl start $(cat /root/bench/" + set + ".services)"
}

// floorRead is a converged apply by hand, as a shell script: the same
// sources syslet reads, asked at once — every managed file (one cat, the
// config tree expanded by the shell, not by find), the states of all
// units in one systemctl call, podman's image-exists and secret list over
// its socket — and waited for together.
func floorRead(o specgen.Options) string {
	return `#!/bin/bash
cat /etc/containers/systemd/* /etc/containers/config/*/etc/app/* /etc/containers/config/*/etc/app.d/* >/dev/null & a=$!
systemctl list-units --all --plain --no-legend 'c0*' 'v0*' 'n0*' >/dev/null & b=$!
curl -sf --unix-socket /run/podman/podman.sock http://d/v5.0.0/libpod/images/localhost:5000%2Fbusybox:latest/exists >/dev/null & c=$!
curl -sf --unix-socket /run/podman/podman.sock http://d/v5.0.0/libpod/secrets/json >/dev/null & d=$!
wait $a && wait $b && wait $c && wait $d
`
}

// alternate measures two sides of a row: a warm-up run of each, thrown
// away, then runs rounds, the side that goes first alternating from round
// to round, so that both see the same host and the same load. Each side
// does its own untimed preparation and checks and returns its timed part.
func alternate(t *testing.T, what string, runs int, floor, tool func() time.Duration) (sample, sample) {
	t.Helper()
	floor()
	tool()
	var f, s sample
	for i := range runs {
		if i%2 == 0 {
			f = append(f, floor())
			s = append(s, tool())
		} else {
			s = append(s, tool())
			f = append(f, floor())
		}
		t.Logf("%s, run %d: floor %s, tool %s", what, i+1, secs(f[i]), secs(s[i]))
	}
	return f, s
}

// row is one line of the result table.
type row struct {
	section      string
	work         string
	floor, other sample
	peer         string // "syslet", "webhookd", "Ansible", ...
	goal         float64
	// value replaces the floor, tool and ratio columns of a row that is a
	// measurement rather than a comparison (footprint).
	value string
	// verdict says whether such a row met its goal.
	verdict string
}

// table collects rows from sections that may run at once.
type table struct {
	mu   sync.Mutex
	rows []row
}

func (tb *table) add(r ...row) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.rows = append(tb.rows, r...)
}

// TestBenchmark measures on test hosts (BENCHMARKS.md). BENCH_RUNS is the
// number of runs per measurement (default 9, after a warm-up run of each
// side), BENCH_ANSIBLE_RUNS the same for Ansible (default BENCH_RUNS).
// The sections that time syslet against its floors run one after the
// other; Ansible (the longest section) and webhookd's ten-minute idle
// window run beside them, each on its own host. Every ratio is taken
// between runs made alternately on one host, so what runs beside it loads
// both of its sides alike.
func TestBenchmark(t *testing.T) {
	runs := envInt("BENCH_RUNS", 9)
	aruns := envInt("BENCH_ANSIBLE_RUNS", runs)
	tb := &table{}
	start := time.Now()
	load0 := loadAvg()
	t.Run("all", func(t *testing.T) {
		t.Run("hosts", func(t *testing.T) {
			t.Parallel()
			t.Run("syslet", func(t *testing.T) { benchSyslet(t, runs, tb) })
			t.Run("push", func(t *testing.T) { benchPushToServing(t, runs, tb) })
			t.Run("fleet", func(t *testing.T) { benchFleet(t, runs, tb) })
			t.Run("rss", func(t *testing.T) { benchSysletRSS(t, tb) })
			t.Run("zero-downtime", func(t *testing.T) { benchZeroDowntime(t, tb) })
			t.Run("probe", func(t *testing.T) { benchProbe(t, runs, tb) })
		})
		t.Run("ansible", func(t *testing.T) { t.Parallel(); benchAnsible(t, aruns, tb) })
		t.Run("webhookd", func(t *testing.T) { t.Parallel(); benchWebhookdFootprint(t, tb) })
	})
	table := benchTable(tb.rows, start, load0, loadAvg())
	fmt.Println(table)
	if out := os.Getenv("BENCH_OUT"); out != "" {
		must(t, os.WriteFile(out, []byte(table), 0o644))
	}
}

// loadAvg is this machine's 1-minute load average as /proc/loadavg says.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

func benchSyslet(t *testing.T, runs int, tb *table) {
	small, big := benchSpecs(50), benchSpecs(200)
	b := newBench(t, map[string]specgen.Options{"s50": small, "s200": big, "s200c": benchSpecs(200, 7)})
	for _, o := range []specgen.Options{small, big} {
		set := fmt.Sprintf("s%d", o.Containers)
		floor := func() time.Duration {
			b.teardown()
			d := b.timed(floorDeploy(set))
			b.running(set, o)
			return d
		}
		tool := func() time.Duration {
			b.teardown()
			d := b.timed("syslet --soak 0 /root/bench/" + set + ".json")
			b.running(set, o)
			return d
		}
		f, s := alternate(t, "first deploy of "+strconv.Itoa(o.Containers), runs, floor, tool)
		tb.add(row{section: "apply", work: fmt.Sprintf("first deploy of %d", o.Containers), floor: f, other: s, peer: "syslet", goal: 1.1})
	}
	// The host now runs the 200, deployed last by syslet or by hand; one
	// apply makes it syslet's.
	b.must("syslet --soak 0 /root/bench/s200.json >/dev/null")
	b.running("s200", big)

	// Converged: the floor's concurrent read, the apply and --diff, in an
	// order that rotates, each followed by the check that all still runs.
	var floor, apply, diff sample
	steps := []func(){
		func() { floor = append(floor, b.timed("/root/bench/s200.read")) },
		func() { apply = append(apply, b.timed("syslet /root/bench/s200.json")) },
		func() { diff = append(diff, b.timed("syslet --diff /root/bench/s200.json")) },
	}
	for _, s := range steps { // warm-up
		s()
	}
	floor, apply, diff = nil, nil, nil
	for i := range runs {
		for j := range steps {
			steps[(i+j)%len(steps)]()
		}
		b.running("s200", big)
		t.Logf("converged, run %d: floor %s, apply %s, --diff %s", i+1, secs(floor[i]), secs(apply[i]), secs(diff[i]))
	}
	if out := b.must("syslet --diff --detailed-exitcode /root/bench/s200.json >/dev/null; echo $?"); strings.TrimSpace(out) != "0" {
		t.Errorf("the converged host has pending changes (exit %s)", out)
	}
	tb.add(row{section: "apply", work: "converged apply of 200", floor: floor, other: apply, peer: "syslet", goal: 1.25},
		row{section: "apply", work: "`--diff` of 200, converged", floor: floor, other: diff, peer: "syslet", goal: 1.25})

	// One change among 200, back and forth: one container's environment
	// changes, so its unit file is rewritten and it restarts. Whoever goes
	// second in a round puts the other version back.
	target := specgen.ContainerName(7) + ".service"
	unit := "etc/containers/systemd/" + specgen.ContainerName(7) + ".container"
	state := "s200" // the version the host runs
	next := func() string {
		if state == "s200" {
			return "s200c"
		}
		return "s200"
	}
	byHand := func() time.Duration {
		to := next()
		d := b.timed("cp /root/bench/" + to + ".tree/" + unit + " /" + unit + " && systemctl daemon-reload && systemctl restart " + target)
		state = to
		b.running(to, big)
		return d
	}
	withSyslet := func(args string) func() time.Duration {
		return func() time.Duration {
			to := next()
			cur := cursor(t, b.h)
			d := b.timed("syslet " + args + " /root/bench/" + to + ".json")
			state = to
			// podman's API service, socket-activated by syslet's first call,
			// is not a deploy job.
			jobs := slices.DeleteFunc(systemdJobs(t, b.h, cur), func(j string) bool { return strings.Contains(j, "podman.service") })
			count := func(prefix string) int {
				return len(slices.DeleteFunc(slices.Clone(jobs), func(j string) bool { return !strings.HasPrefix(j, prefix) }))
			}
			if count("Reloading...") != 1 || count("Stopping "+target) != 1 || count("Started "+target) != 1 ||
				count("Stopping ") != 1 || count("Started ") != 1 {
				t.Errorf("one change among 200: want one daemon-reload and one restart of %s; systemd did:\n%s", target, strings.Join(jobs, "\n"))
			}
			b.running(to, big)
			// systemd refuses a unit's 6th start within its interval.
			b.must("systemctl reset-failed " + target + " 2>/dev/null || true")
			return d
		}
	}
	f, s := alternate(t, "one change", runs, byHand, withSyslet("--soak 0"))
	tb.add(row{section: "apply", work: "one change among 200 (1 reload, 1 restart), `--soak 0`", floor: f, other: s, peer: "syslet", goal: 1.1})
	// The same with the health gate's default soak: the floor does not
	// wait, so the ratio is the gate's window plus its cost.
	f, s = alternate(t, "one change, default soak", runs, byHand, withSyslet(""))
	tb.add(row{section: "apply", work: fmt.Sprintf("the same with the health gate's default %s soak", gate.DefaultSoak), floor: f, other: s, peer: "syslet"})
	var over sample
	for _, d := range s {
		over = append(over, d-gate.DefaultSoak)
	}
	tb.add(row{section: "apply", work: fmt.Sprintf("… its cost beside the %s window (tool − %s)", gate.DefaultSoak, gate.DefaultSoak), floor: f, other: over, peer: "syslet"})
}

func benchAnsible(t *testing.T, runs int, tb *table) {
	o := benchSpecs(50)
	b := newBench(t, map[string]specgen.Options{"s50": o})
	installAnsible(b)
	must(t, b.h.WriteFile("/root/bench/site.yml", []byte(playbook(o)), 0o644))
	must(t, b.h.WriteFile("/root/bench/files.sh", []byte(configTree(o)), 0o755))
	b.must("/root/bench/files.sh /root/bench/files")
	play := "ANSIBLE_NOCOLOR=1 ansible-playbook -i localhost, -c local /root/bench/site.yml"
	// One round of each side is a first deploy (timed), a check that all
	// runs, and a converged run (timed); the sides alternate.
	var fFirst, fAgain, aFirst, aAgain sample
	floor := func() {
		b.teardown()
		fFirst = append(fFirst, b.timed(floorDeploy("s50")))
		b.running("s50", o)
		fAgain = append(fAgain, b.timed("/root/bench/s50.read"))
	}
	ansible := func() {
		b.teardown()
		aFirst = append(aFirst, b.timed(play))
		b.running("s50", o)
		aAgain = append(aAgain, b.timed(play))
		b.running("s50", o)
	}
	floor()
	ansible()
	fFirst, fAgain, aFirst, aAgain = nil, nil, nil, nil
	for i := range runs {
		if i%2 == 0 {
			floor()
			ansible()
		} else {
			ansible()
			floor()
		}
		t.Logf("ansible run %d: floor %s / %s, ansible first %s, converged %s", i+1, secs(fFirst[i]), secs(fAgain[i]), secs(aFirst[i]), secs(aAgain[i]))
	}
	tb.add(row{section: "ansible", work: "first deploy of 50", floor: fFirst, other: aFirst, peer: "Ansible"},
		row{section: "ansible", work: "converged run of 50", floor: fAgain, other: aAgain, peer: "Ansible"})
}

// benchTable formats the rows: median (min–max) of each, the ratio of the
// medians, and the goal where the issue set one.
func benchTable(rows []row, start time.Time, load0, load1 string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s–%s UTC; this machine's 1-minute load average %s at the start, %s at the end\n",
		start.UTC().Format("2006-01-02 15:04"), time.Now().UTC().Format("15:04"), load0, load1)
	b.WriteString("median (min–max) of whole-process runs after a warm-up run of each side, seconds; ratio = median / floor median\n\n")
	b.WriteString("| work | tool | runs | floor | tool | ratio | goal |\n|---|---|---|---|---|---|---|\n")
	order := []string{"apply", "push", "fleet", "ansible", "footprint", "zero-downtime"}
	slices.SortStableFunc(rows, func(x, y row) int { return cmp.Compare(slices.Index(order, x.section), slices.Index(order, y.section)) })
	for _, r := range rows {
		if r.value != "" {
			fmt.Fprintf(&b, "| %s | %s | | | %s | | %s |\n", r.work, r.peer, r.value, goalText(r))
			continue
		}
		if len(r.floor) == 0 || len(r.other) == 0 {
			continue
		}
		ratio := float64(r.other.median()) / float64(r.floor.median())
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %.2f× | %s |\n", r.work, r.peer, len(r.other), r.floor, r.other, ratio, goalText(r))
	}
	return b.String()
}

func goalText(r row) string {
	switch {
	case r.value != "":
		return r.verdict
	case r.goal == 0:
		return ""
	case float64(r.other.median())/float64(r.floor.median()) <= r.goal:
		return fmt.Sprintf("≤ %.2f× met", r.goal)
	}
	return fmt.Sprintf("≤ %.2f× **not met**", r.goal)
}

// installAnsible installs trixie's ansible package (with the
// containers.podman collection) into the guest from the .debs that
// bench/ansible-debs.sh resolved in a copy of the guest's rootfs; the guest
// itself has no network.
func installAnsible(b *bench) {
	b.t.Helper()
	cache, err := testhost.CacheDir()
	must(b.t, err)
	root, err := testhost.ModuleRoot()
	must(b.t, err)
	debs := filepath.Join(cache, "ansible-debs")
	if _, err := os.Stat(filepath.Join(debs, "ready")); err != nil {
		b.t.Fatalf("no Ansible packages in %s: run bash %s %s (go tool task bench does)", debs, filepath.Join(root, "integration/bench/ansible-debs.sh"), debs)
	}
	must(b.t, b.h.CopyIn(debs, "/root/debs"))
	b.must(`printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d &&
cp /root/debs/*.deb /var/cache/apt/archives/ &&
{ DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-download ansible python3-apt >/root/debs/install.log 2>&1 || { tail -30 /root/debs/install.log; exit 1; }; }
rm -f /usr/sbin/policy-rc.d; ansible --version | head -1; ansible-galaxy collection list containers.podman 2>/dev/null | tail -1`)
}

// playbook deploys the same containers as specgen with Ansible's own
// modules: podman_network / podman_volume / podman_container in quadlet
// state write the units, one copy task writes the config files and config
// dir files from a tree (configTree), then one daemon-reload, and
// systemd_service starts each service.
func playbook(o specgen.Options) string {
	var b strings.Builder
	b.WriteString(`- hosts: all
  gather_facts: false
  tasks:
    - name: networks
      containers.podman.podman_network:
        name: "{{ item }}"
        state: quadlet
      loop: [` + list(o.Networks(), "n%04d") + `]
    - name: volumes
      containers.podman.podman_volume:
        name: "{{ item }}"
        state: quadlet
      loop: [` + list(o.Volumes(), "v%04d") + `]
    - name: config files and config dirs, as a tree of files shipped with the playbook
      ansible.builtin.copy:
        src: /root/bench/files/
        dest: /etc/containers/config/
        remote_src: true
        mode: preserve
    - name: containers
      containers.podman.podman_container:
        name: "{{ item }}"
        image: ` + benchImage + `
        state: quadlet
        command: sleep 1000000
        init: true
        network: "n{{ '%04d' | format((item[1:] | int) // ` + strconv.Itoa(o.PerNetwork) + `) }}.network"
        volume:
          - "v{{ '%04d' | format((item[1:] | int) // ` + strconv.Itoa(o.PerVolume) + `) }}.volume:/data"
          - "/etc/containers/config/{{ item }}/etc/app/f0.conf:/etc/app/f0.conf:ro,Z"
          - "/etc/containers/config/{{ item }}/etc/app.d:/etc/app.d:ro,Z"
        env:
          INDEX: "{{ item[1:] | int }}"
          REVISION: "1"
        quadlet_options:
          - "[Service]"
          - "Restart=always"
          - "ExecReload=/usr/bin/podman kill --signal HUP {{ item }}"
          - "[Install]"
          - "WantedBy=multi-user.target default.target"
      loop: &containers [` + list(o.Containers, "c%05d") + `]
    - name: start
      ansible.builtin.systemd_service:
        name: "{{ item }}.service"
        state: started
        daemon_reload: "{{ ansible_loop.first }}"
      loop: *containers
      loop_control:
        extended: true
`)
	return b.String()
}

// configTree is a shell script that writes, under its argument, the
// config files and config dir files of the set as a plain tree: what an
// Ansible user keeps beside the playbook.
func configTree(o specgen.Options) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\nset -e\ncd \"$1\" 2>/dev/null || { mkdir -p \"$1\"; cd \"$1\"; }\n")
	for i := range o.Containers {
		c := specgen.ContainerName(i)
		fmt.Fprintf(&b, "mkdir -p %s/etc/app %s/etc/app.d\n", c, c)
		for f := range o.ConfigFiles {
			fmt.Fprintf(&b, "printf 'container=%s\\nfile=%d\\n' > %s/etc/app/f%d.conf\n", c, f, c, f)
		}
		for f := range o.ConfigDirFiles {
			fmt.Fprintf(&b, "printf 'container=%s\\npart=%d\\n' > %s/etc/app.d/%02d.conf\n", c, f, c, f)
		}
	}
	b.WriteString("chmod -R u=rwX,go=rX .\n")
	return b.String()
}

func list(n int, format string) string {
	s := make([]string, n)
	for i := range n {
		s[i] = fmt.Sprintf(format, i)
	}
	return strings.Join(s, ", ")
}
