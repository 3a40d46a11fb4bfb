//go:build integration && bench

package integration

// The forge, the pushes and the load steps of TestBenchFleet10k.

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/fleetsim"
	"github.com/syslet/syslet/integration/testhost"
)

// forge10k is Gitea in a test host, holding ops/fleet, reached from this
// side through the test host's port forwards: its SSH server (the hosts'
// fetches) and its HTTP (the pushes).
type forge10k struct {
	t                       *testing.T
	h                       *testhost.Host
	sshURL, key, knownHosts string
	httpsURL, tokenFile     string
	pushURL                 string
	c0                      string
}

func newForge10k(t *testing.T) *forge10k {
	t.Helper()
	sshPort, httpPort := freePort(t), freePort(t)
	h := testhost.Start(t, testhost.Options{Forward: map[int]int{sshPort: 2222, httpPort: 3000}})
	g := startGitea(t, h)
	g.api("POST", "/user/repos", map[string]any{"name": "fleet", "default_branch": "main"}, 201)
	f := &forge10k{t: t, h: h, sshURL: fmt.Sprintf("ssh://gitea@127.0.0.1:%d/%s/fleet.git", sshPort, giteaUser),
		pushURL: fmt.Sprintf("http://%s:%s@127.0.0.1:%d/%s/fleet.git", giteaUser, g.password, httpPort, giteaUser)}
	// One deploy key for every host (a fleet has one each: Gitea looks a
	// key up by its fingerprint either way).
	dir := t.TempDir()
	f.key, f.knownHosts = filepath.Join(dir, "deploy_ed25519"), filepath.Join(dir, "known_hosts")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "fleet", "-f", f.key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(f.key + ".pub")
	must(t, err)
	g.api("POST", "/user/keys", map[string]any{"title": "fleet", "key": strings.TrimSpace(string(pub))}, 201)
	hostKey, err := h.ReadFile("/var/lib/gitea/data/ssh/gitea.ed25519.pub")
	must(t, err)
	k := strings.Fields(string(hostKey))
	must(t, os.WriteFile(f.knownHosts, fmt.Appendf(nil, "[127.0.0.1]:%d %s %s\n", sshPort, k[0], k[1]), 0o644))
	f.tokenFile = filepath.Join(dir, "token")
	must(t, os.WriteFile(f.tokenFile, []byte(g.token+"\n"), 0o600))
	f.httpsURL = fmt.Sprintf("https://%s/%s/fleet.git", startTLSProxy(t, fmt.Sprintf("http://127.0.0.1:%d", httpPort)), giteaUser)
	return f
}

// freePort is a loopback port free right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func (f *forge10k) git(dir string, args ...string) string {
	f.t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		f.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// fleetWebSpec is each host's one spec, at an image tag.
func fleetWebSpec(tag string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":"registry.example/web:%s","PublishPort":"8080:8080"}}}`+"\n", tag)
}

// writeHosts writes every host's directory of the repository in work.
func writeHosts(t *testing.T, hosts []*fleetsim.Host, work, tag string) {
	t.Helper()
	for _, h := range hosts {
		dir := filepath.Join(work, "hosts", h.Name)
		must(t, os.MkdirAll(dir, 0o755))
		must(t, os.WriteFile(filepath.Join(dir, "labels"), h.LabelsFile(), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "web.json"), fleetWebSpec(tag), 0o644))
	}
}

// pushInitial makes the repository: a directory per host (labels, one
// spec), the same commit on main and canary.
func (f *forge10k) pushInitial(hosts []*fleetsim.Host, work string) {
	writeHosts(f.t, hosts, work, "v1")
	f.git(work, "init", "-q", "-b", "main")
	f.git(work, "-c", "user.name=ops", "-c", "user.email=ops@example.org", "add", "-A")
	f.git(work, "-c", "user.name=ops", "-c", "user.email=ops@example.org", "commit", "-q", "-m", "the fleet's hosts")
	f.git(work, "remote", "add", "origin", f.pushURL)
	f.git(work, "push", "-q", "origin", "main", "main:canary")
	f.c0 = f.git(work, "rev-parse", "HEAD")
}

// commitCanary changes every host's image and pushes the commit to
// canary.
func (f *forge10k) commitCanary(hosts []*fleetsim.Host, work string) string {
	writeHosts(f.t, hosts, work, "v2")
	f.git(work, "-c", "user.name=ops", "-c", "user.email=ops@example.org", "commit", "-q", "-am", "web v2")
	f.git(work, "push", "-q", "origin", "HEAD:canary")
	return f.git(work, "rev-parse", "HEAD")
}

// giteaCPU is the CPU time Gitea's service (its web process, the `gitea
// serv` and git processes it starts) has used so far.
func (f *forge10k) giteaCPU() time.Duration {
	ns, err := strconv.ParseInt(strings.TrimSpace(f.h.MustRun(f.t, "systemctl show -P CPUUsageNSec gitea.service")), 10, 64)
	must(f.t, err)
	return time.Duration(ns)
}

// giteaUse says how much CPU Gitea used since cpu0, over d.
func (f *forge10k) giteaUse(cpu0, d time.Duration) string {
	used := f.giteaCPU() - cpu0
	hwm := strings.TrimSpace(f.h.MustRun(f.t, `sed -n 's/^VmHWM: *//p' /proc/$(systemctl show -P MainPID gitea.service)/status`))
	return fmt.Sprintf("%.0f s of CPU in %s: %.2f cores; its web process's peak RSS %s", used.Seconds(), d.Round(time.Second), used.Seconds()/d.Seconds(), hwm)
}

// promFigures are Prometheus's own figures for the fleet's scrapes.
func promFigures(t *testing.T, prom string, w *watch, scrape time.Duration) [][2]string {
	t.Helper()
	q := func(s string) float64 { return promValue(t, prom, s) }
	_, fds, _, rss := w.peaks()
	return [][2]string{
		{"Prometheus: targets", fmt.Sprintf("%.0f up of %.0f, every %s (timeout %s)", q(`count(up{job="webhookd"} == 1)`), q(`count(up{job="webhookd"})`), scrape, (scrape * 2 / 3).Round(time.Second))},
		{"Prometheus: scrape duration of a host", fmt.Sprintf("p50 %.1f ms, p99 %.1f ms, slowest %.1f ms (scrape_duration_seconds)",
			1000*q(`quantile(0.5, scrape_duration_seconds{job="webhookd"})`), 1000*q(`quantile(0.99, scrape_duration_seconds{job="webhookd"})`), 1000*q(`max(scrape_duration_seconds{job="webhookd"})`))},
		{"Prometheus: time between two scrapes of a target", fmt.Sprintf("p50 %.2f s, p99 %.2f s (prometheus_target_interval_length_seconds; asked %s)",
			q(`max(prometheus_target_interval_length_seconds{quantile="0.5", interval!="5s"})`), q(`max(prometheus_target_interval_length_seconds{quantile="0.99", interval!="5s"})`), scrape)},
		{"Prometheus: series and samples", fmt.Sprintf("%.0f series in the head; %.0f samples a scrape round (%.0f a host)",
			q(`prometheus_tsdb_head_series`), q(`sum(scrape_samples_scraped{job="webhookd"})`), q(`avg(scrape_samples_scraped{job="webhookd"})`))},
		{"Prometheus: its process", fmt.Sprintf("%.2f cores over the last 5 minutes; peak RSS %.0f MB; peak %d open descriptors",
			q(`rate(process_cpu_seconds_total{job="prometheus"}[5m])`), float64(rss)/(1<<20), fds)},
	}
}

// stage is one load step: the fleet restarted with this poll and spread
// (spread < 0: the whole interval), watched for window; anonymous: the
// hosts send no token (the repository is public), so that a fetch costs
// the forge no token check.
type stage struct {
	name                 string
	poll, spread, window time.Duration
	anonymous            bool
}

func stressStages(poll time.Duration) []stage {
	return []stage{
		{name: "`poll: 60s`", poll: time.Minute, spread: -1, window: time.Minute},
		{name: "`poll: 20s`", poll: 20 * time.Second, spread: -1, window: 40 * time.Second},
		{name: "`poll: 20s`, no token", poll: 20 * time.Second, spread: -1, window: 40 * time.Second, anonymous: true},
		{name: "`poll: 10s`", poll: 10 * time.Second, spread: -1, window: 30 * time.Second},
		{name: "`poll: 10s`, no token", poll: 10 * time.Second, spread: -1, window: 30 * time.Second, anonymous: true},
		{name: "`poll: 5s`", poll: 5 * time.Second, spread: -1, window: 30 * time.Second},
		{name: fmt.Sprintf("`poll: %s`, `pollSpread: 0s`: every host polls at its start", poll), poll: poll, spread: 0, window: time.Minute},
	}
}

// stress runs one stage; it returns its figures and, when something
// failed, what.
func (f *forge10k) stress(hosts []*fleetsim.Host, o fleetsim.Options, s stage, prom string, w *watch, running int) (fig, broke string) {
	t := f.t
	o.Poll, o.Spread = s.poll, s.spread
	if s.anonymous {
		o.TokenFile = ""
	}
	w.peaks()
	t.Logf("stage %s: poll %s, spread %s, for %s", s.name, s.poll, s.spread, s.window)
	run, err := fleetsim.Start(hosts, o)
	must(t, err)
	t0, cpu0 := time.Now(), f.giteaCPU()
	time.Sleep(s.window)
	load := fleetsim.LoadOf(o.Fetches.Between(t0, t0.Add(s.window)), s.window)
	inFlight := o.Fetches.InFlight()
	use := f.giteaUse(cpu0, s.window)
	up := promValue(t, prom, `count(up{job="webhookd"} == 1)`)
	slowest := promValue(t, prom, `max(scrape_duration_seconds{job="webhookd"})`)
	selfFDs, promFDs, _, _ := w.peaks()
	stopped := run.StopWithin(time.Minute)
	asked := float64(running) / s.poll.Seconds()
	if s.spread == 0 {
		asked = float64(running) / s.window.Seconds()
	}
	fig = fmt.Sprintf("%s, %d still running at the end (asked: %.0f/s); Gitea %s; Prometheus %.0f of %d hosts up, slowest scrape %.0f ms; peak descriptors: this process %d, Prometheus %d; load %s",
		load, inFlight, asked, use, up, running, 1000*slowest, selfFDs, promFDs, uptimeLoad())
	switch {
	case load.ErrRate > 0.001:
		broke = fmt.Sprintf("fetches failed (%.1f %%): %s", 100*load.ErrRate, load.FirstError)
	case s.spread != 0 && float64(load.Fetches+inFlight) < 0.9*asked*s.window.Seconds():
		broke = fmt.Sprintf("the fleet fell behind: %d fetches begun of the %.0f asked (p99 %s, %d still running)", load.Fetches+inFlight, asked*s.window.Seconds(), load.P99, inFlight)
	case s.spread != 0 && load.PerSecond < 0.9*asked:
		broke = fmt.Sprintf("the forge fell behind: %.0f fetches/s of the %.0f asked (p99 %s)", load.PerSecond, asked, load.P99)
	case s.spread != 0 && load.P99 > s.poll:
		broke = fmt.Sprintf("fetches slower than the interval: p99 %s", load.P99)
	case up < 0.99*float64(running):
		broke = fmt.Sprintf("Prometheus lost targets: %.0f of %d up", up, running)
	case !stopped:
		broke = "workers still fetching a minute after the stop"
	}
	return fig, broke
}
