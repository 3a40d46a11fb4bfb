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
	r := b.h.Run(`t0=$(date +%s%N); ( ` + cmd + ` ) >/tmp/bench.out 2>&1; rc=$?; t1=$(date +%s%N); ` +
		`if [ $rc != 0 ]; then tail -40 /tmp/bench.out; exit $rc; fi; echo $((t1-t0))`)
	if !r.OK() {
		b.t.Fatalf("benchmark command failed: %s\n%s", cmd, r)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(r.Stdout), 10, 64)
	if err != nil {
		b.t.Fatalf("timing %q: %v", cmd, err)
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
		must(t, b.h.WriteFile("/root/bench/"+name+".json", specgen.Generate(o), 0o644))
		// What an apply writes, for the floor to copy by hand.
		b.must("syslet render /root/bench/" + name + ".json --out /root/bench/" + name + ".tree >/dev/null")
		must(t, b.h.WriteFile("/root/bench/"+name+".services", []byte(strings.Join(services(o), " ")), 0o644))
	}
	return b
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

// floorDeploy is a first deploy by hand: copy the files an apply writes,
// one daemon-reload, one systemctl start of every service (which waits
// for all of them).
func floorDeploy(set string) string {
	return "cp -a /root/bench/" + set + ".tree/etc/containers/. /etc/containers/ && systemctl daemon-reload && systemctl start $(cat /root/bench/" + set + ".services)"
}

// floorRead is a converged apply by hand: read the managed files, list the
// states of all units in one call, ask podman for the image and the
// secrets over its socket.
const floorRead = `cat $(find /etc/containers/systemd /etc/containers/config -type f) >/dev/null &&
systemctl list-units --all --plain --no-legend 'c0*' 'v0*' 'n0*' >/dev/null &&
curl -sf --unix-socket /run/podman/podman.sock http://d/v5.0.0/libpod/images/localhost:5000%2Fbusybox:latest/exists >/dev/null &&
curl -sf --unix-socket /run/podman/podman.sock http://d/v5.0.0/libpod/secrets/json >/dev/null`

// row is one line of the result table.
type row struct {
	work         string
	floor, other sample
	peer         string // "syslet" or "Ansible"
}

// TestBenchmark measures on two test hosts, one for syslet and the floor,
// one for Ansible and the floor. BENCH_RUNS is the number of runs per
// measurement (default 5), BENCH_ANSIBLE_RUNS the same for Ansible
// (default BENCH_RUNS); BENCH_PARALLEL=1 measures on both hosts at once
// (each ratio still compares runs made side by side on one host).
func TestBenchmark(t *testing.T) {
	runs := envInt("BENCH_RUNS", 5)
	aruns := envInt("BENCH_ANSIBLE_RUNS", runs)
	parallel := os.Getenv("BENCH_PARALLEL") == "1"
	var mu sync.Mutex
	var rows []row
	add := func(r ...row) {
		mu.Lock()
		defer mu.Unlock()
		rows = append(rows, r...)
	}
	t.Run("hosts", func(t *testing.T) { benchHosts(t, runs, aruns, parallel, add) })
	table := benchTable(rows)
	fmt.Println(table)
	if out := os.Getenv("BENCH_OUT"); out != "" {
		must(t, os.WriteFile(out, []byte(table), 0o644))
	}
}

func benchHosts(t *testing.T, runs, aruns int, parallel bool, add func(...row)) {
	t.Run("syslet", func(t *testing.T) {
		if parallel {
			t.Parallel()
		}
		small, big := benchSpecs(50), benchSpecs(200)
		b := newBench(t, map[string]specgen.Options{"s50": small, "s200": big, "s200c": benchSpecs(200, 7)})
		for _, n := range []int{50, 200} {
			set := fmt.Sprintf("s%d", n)
			var floor, sys sample
			for i := range runs {
				floor = append(floor, b.timed(floorDeploy(set)))
				b.teardown()
				sys = append(sys, b.timed("syslet --soak 0 /root/bench/"+set+".json"))
				if i < runs-1 || n != 200 {
					b.teardown()
				}
				t.Logf("first deploy of %d, run %d: floor %s, syslet %s", n, i+1, secs(floor[i]), secs(sys[i]))
			}
			add(row{fmt.Sprintf("first deploy of %d", n), floor, sys, "syslet"})
		}
		// The host now runs the 200 as syslet deployed them.
		var floor, apply, diff sample
		for range runs {
			floor = append(floor, b.timed(floorRead))
			apply = append(apply, b.timed("syslet /root/bench/s200.json"))
			diff = append(diff, b.timed("syslet --diff /root/bench/s200.json"))
		}
		if out := b.must("syslet --diff --detailed-exitcode /root/bench/s200.json >/dev/null; echo $?"); strings.TrimSpace(out) != "0" {
			t.Errorf("the converged host has pending changes (exit %s)", out)
		}
		add(row{"converged apply of 200", floor, apply, "syslet"}, row{"`--diff` of 200, converged", floor, diff, "syslet"})

		// One change among 200, back and forth: syslet, then the same
		// change by hand. syslet's health gate runs with no soak window
		// (the floor does not wait either), then again with the default.
		floor, apply = nil, nil
		var gated sample
		target := specgen.ContainerName(7) + ".service"
		for i := range 2 * runs {
			set, other := "s200c", "s200"
			if i%2 == 1 {
				set, other = other, set
			}
			cur := cursor(t, b.h)
			if i >= runs {
				gated = append(gated, b.timed("syslet /root/bench/"+set+".json"))
			} else {
				apply = append(apply, b.timed("syslet --soak 0 /root/bench/"+set+".json"))
			}
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
			unit := "etc/containers/systemd/" + specgen.ContainerName(7) + ".container"
			// By hand: put the other version of the unit back, reload, restart.
			if i < runs {
				floor = append(floor, b.timed("cp /root/bench/"+other+".tree/"+unit+" /"+unit+" && systemctl daemon-reload && systemctl restart "+target))
			} else {
				b.must("cp /root/bench/" + other + ".tree/" + unit + " /" + unit + " && systemctl daemon-reload && systemctl restart " + target)
			}
			b.must("cp /root/bench/" + set + ".tree/" + unit + " /" + unit + " && systemctl daemon-reload && systemctl restart " + target)
		}
		add(row{"one change among 200 (1 reload, 1 restart)", floor, apply, "syslet"},
			row{fmt.Sprintf("the same with the health gate's default %s soak", gate.DefaultSoak), floor, gated, "syslet"})
	})

	t.Run("ansible", func(t *testing.T) {
		if parallel {
			t.Parallel()
		}
		o := benchSpecs(50)
		b := newBench(t, map[string]specgen.Options{"s50": o})
		installAnsible(b)
		must(t, b.h.WriteFile("/root/bench/site.yml", []byte(playbook(o)), 0o644))
		must(t, b.h.WriteFile("/root/bench/files.sh", []byte(configTree(o)), 0o755))
		b.must("/root/bench/files.sh /root/bench/files")
		play := "ANSIBLE_NOCOLOR=1 ansible-playbook -i localhost, -c local /root/bench/site.yml"
		var floor, first, again sample
		for i := range aruns {
			floor = append(floor, b.timed(floorDeploy("s50")))
			b.teardown()
			first = append(first, b.timed(play))
			again = append(again, b.timed(play))
			if out := b.must("systemctl is-active $(cat /root/bench/s50.services) | sort | uniq -c"); strings.Contains(out, "inactive") || strings.Contains(out, "failed") {
				t.Fatalf("after the playbook not every unit is active:\n%s", out)
			}
			b.teardown()
			t.Logf("ansible run %d: floor %s, first %s, converged %s", i+1, secs(floor[i]), secs(first[i]), secs(again[i]))
		}
		// The converged floor is the syslet table's (reading 200 units);
		// here it is the same read for 50.
		b.timed(floorDeploy("s50"))
		var read sample
		for range aruns {
			read = append(read, b.timed(floorRead))
		}
		add(row{"first deploy of 50", floor, first, "Ansible"}, row{"converged run of 50", read, again, "Ansible"})
	})
}

// benchTable formats the rows: median (min–max) of each, and the ratio of
// the medians.
func benchTable(rows []row) string {
	var b strings.Builder
	b.WriteString("\nmedian (min–max) of whole-process runs, seconds; ratio = median / floor median\n\n")
	b.WriteString("| work | tool | runs | floor | tool | ratio |\n|---|---|---|---|---|---|\n")
	slices.SortStableFunc(rows, func(x, y row) int { return cmp.Compare(x.peer, y.peer) * -1 })
	for _, r := range rows {
		if len(r.floor) == 0 || len(r.other) == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %.2f× |\n", r.work, r.peer, len(r.other), r.floor, r.other, float64(r.other.median())/float64(r.floor.median()))
	}
	return b.String()
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
