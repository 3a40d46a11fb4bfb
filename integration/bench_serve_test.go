//go:build integration && bench

package integration

// The benchmark's push-to-serving, fleet and footprint sections
// (BENCHMARKS.md): what a user waits for after a git push, a push to
// several hosts, and what the daemon costs a host all day.

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/specgen"
)

// The config repository's history: commits of incompressible blobs (so
// no delta shrinks them), spread over a few files outside the spec
// directory, as assets kept beside the specs.
const (
	historyCommits = 1000
	historyBlob    = 56 << 10 // bytes per commit: 1,000 × 56 KiB ≈ 57 MB of history
	historyFiles   = 20
	// noChangePushes is how many deliveries the fetch is measured after
	// (BENCH_PUSHES overrides it, for a short trial of the benchmark).
	noChangePushes = 500
	// deliveries is how many deliveries webhookd's footprint is measured
	// after (BENCH_DELIVERIES overrides it).
	deliveries = 10000
)

// historyStream is a git fast-import stream of the history, on top of
// branch main's tip.
func historyStream(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	blob := make([]byte, historyBlob)
	for i := range historyCommits {
		if _, err := rand.Read(blob); err != nil {
			t.Fatal(err)
		}
		msg := fmt.Sprintf("assets: revision %d", i)
		fmt.Fprintf(&b, "commit refs/heads/main\ncommitter ops <ops@example> %d +0000\ndata %d\n%s\n", 1700000000+i, len(msg), msg)
		if i == 0 {
			b.WriteString("from refs/heads/main^0\n")
		}
		fmt.Fprintf(&b, "M 644 inline assets/blob-%02d.bin\ndata %d\n", i%historyFiles, len(blob))
		b.Write(blob)
		b.WriteString("\n")
	}
	return b.Bytes()
}

// pageSpec is the container the push benchmark changes: busybox httpd on
// the host's port 8080 serving one config file, whose content is the
// revision.
func pageSpec(rev string) string {
	return `{"apiVersion":"v1","type":"container","name":"web","configFiles":[{"mountPath":"/www/index.html","content":"` + rev + `\n"}],` +
		`"unit":{"Container":{"Image":"` + benchImage + `","RunInit":"true","Exec":"httpd -f -p 8080 -h /www","Network":"host"}}}` + "\n"
}

// waitServing waits, inside the timed command, until the web container
// answers with rev.
func waitServing(rev string) string {
	return `timeout 120 sh -c 'until [ "$(curl -s http://127.0.0.1:8080/index.html)" = ` + rev + ` ]; do sleep 0.01; done'`
}

const gitSSH = `GIT_SSH_COMMAND="ssh -i /etc/syslet/deploy_ed25519 -o UserKnownHostsFile=/etc/syslet/known_hosts -o IdentitiesOnly=yes"`

func benchPushToServing(t *testing.T, runs int, tb *table) {
	w := startWebhookd(t)
	h := w.Host
	h.MustRun(t, "systemctl stop webhookd.service && mkdir -p /root/bench && podman pull -q "+benchImage+" >/dev/null")
	// The history, then the specs: 50 containers and the web server.
	must(t, h.WriteFile("/root/bench/history.fi", historyStream(t), 0o644))
	h.MustRun(t, "cd "+whWork+" && git fast-import --quiet < /root/bench/history.fi && git reset -q --hard main && rm -f /root/bench/history.fi")
	must(t, h.WriteFile(whWork+"/"+w.specDir+"/s50.json", specgen.Generate(benchSpecs(50)), 0o644))
	h.MustRun(t, "rm -f "+whWork+"/"+w.specDir+"/web.json")
	rev := 0
	// commit writes the web spec at a new revision, commits, pushes to the
	// forge, and renders what an apply of it writes (for the floor).
	commit := func() (string, string) {
		rev++
		r := fmt.Sprintf("rev-%d", rev)
		must(t, h.WriteFile(whWork+"/"+w.specDir+"/web.json", []byte(pageSpec(r)), 0o644))
		c := w.commit(r)
		h.MustRun(t, "rm -rf /root/pre && syslet render "+whWork+"/"+w.specDir+" --out /root/pre >/dev/null")
		return c, r
	}
	c, r := commit()
	size := h.MustRun(t, "git -C "+whBare+" count-objects -vH | sed -n 's/^size-pack: //p'; git -C "+whBare+" rev-list --count main")
	t.Logf("config repository: %s", strings.ReplaceAll(strings.TrimSpace(size), "\n", " packed, commits: "))

	// webhookd's first deploy of it: every container.
	h.MustRun(t, "systemctl start webhookd.service")
	deliver := func(commit string) string {
		body, headers := w.request(whDelivery{forge: "github", ref: "refs/heads/main", after: commit})
		w.n++
		f := fmt.Sprintf("/tmp/wh-%d.json", w.n)
		must(t, w.WriteFile(f, body, 0o644))
		return whCurl("/hooks/infra", f, headers) + " >/dev/null"
	}
	settled := func(commit string) {
		w.waitStatus("deployed "+commit[:8], func(s whStatus) bool {
			return s.State == "idle" && s.LastApplied == commit
		})
	}
	timedOn(t, h, deliver(c)+" && "+waitServing(r))
	settled(c)
	h.MustRun(t, "rm -rf /root/floor && git init -q /root/floor && cd /root/floor && git remote add origin ssh://root@127.0.0.1"+whBare+" && "+gitSSH+" git fetch -q origin main")

	unit := "/etc/containers/systemd/web.container"
	page := "/etc/containers/config/web/www/index.html"
	// applyByHand is the by-hand apply floor of the change: the new unit
	// file (its marker records the config file's digest) and config file,
	// one daemon-reload, one restart.
	applyByHand := "cp /root/pre" + unit + " " + unit + " && cp /root/pre" + page + " " + page + " && systemctl daemon-reload && systemctl restart web.service"

	firstTool := func() time.Duration {
		h.MustRun(t, "systemctl stop webhookd.service && rm -rf /var/lib/syslet/webhookd && systemctl start webhookd.service && timeout 30 sh -c 'until curl -sf "+whURL+"/status >/dev/null; do sleep 0.05; done'")
		c, r := commit()
		d := timedOn(t, h, deliver(c)+" && "+waitServing(r))
		settled(c)
		return d
	}
	firstFloor := func() time.Duration {
		_, r := commit()
		h.MustRun(t, "rm -rf /root/floor1")
		return timedOn(t, h, "git init -q /root/floor1 && cd /root/floor1 && "+gitSSH+" git fetch -q ssh://root@127.0.0.1"+whBare+" main && git checkout -q FETCH_HEAD && "+applyByHand+" && "+waitServing(r))
	}
	incTool := func() time.Duration {
		c, r := commit()
		d := timedOn(t, h, deliver(c)+" && "+waitServing(r))
		settled(c)
		return d
	}
	incFloor := func() time.Duration {
		_, r := commit()
		return timedOn(t, h, "cd /root/floor && "+gitSSH+" git fetch -q origin main && git checkout -q FETCH_HEAD && "+applyByHand+" && "+waitServing(r))
	}
	f, s := alternate(t, "push to serving, first clone", runs, firstFloor, firstTool)
	tb.add(row{section: "push", work: "push → serving, first clone (webhook delivered → the changed container answers)", floor: f, other: s, peer: "webhookd", goal: 1.2})
	f, s = alternate(t, "push to serving, incremental", runs, incFloor, incTool)
	tb.add(row{section: "push", work: "push → serving, incremental fetch", floor: f, other: s, peer: "webhookd", goal: 1.2})

	// 500 deliveries that change nothing the specs hold: each a fetch, a
	// checkout and a converged apply; webhookd's own durations show
	// whether the fetch grows with what it fetched before.
	pushes := envInt("BENCH_PUSHES", noChangePushes)
	ends := min(50, pushes/2) // the first and last deliveries compared
	var durs sample
	cur, err := h.JournalCursor()
	must(t, err)
	for i := range pushes {
		must(t, h.WriteFile(whWork+"/assets/counter", []byte(strconv.Itoa(i)), 0o644))
		c := w.commit(fmt.Sprintf("counter %d", i))
		h.MustRun(t, deliver(c))
		settled(c)
		durs = append(durs, time.Duration(w.status().Last.DurationSeconds*float64(time.Second)))
	}
	packs := strings.TrimSpace(h.MustRun(t, "ls "+whCheckout+"/.git/objects/pack/*.pack | wc -l"))
	t.Logf("webhookd's clone after %d pushes: %s packs", pushes, packs)
	tb.add(row{section: "push", work: fmt.Sprintf("webhookd's clone over those %d deliveries: packs, repacks between deploys, peak RSS", pushes), peer: "webhookd",
		value: repackFigures(t, w, cur, packs)})
	tb.add(row{section: "push", work: fmt.Sprintf("a delivery that changes no spec: pushes %d–%d against 1–%d (webhookd's clone then holds %s packs)", pushes-ends+1, pushes, ends, packs),
		floor: durs[:ends], other: durs[len(durs)-ends:], peer: "webhookd", goal: 1.2})
	f, s = alternate(t, "push to serving, incremental, after 500 pushes", runs, incFloor, incTool)
	tb.add(row{section: "push", work: fmt.Sprintf("push → serving, incremental fetch after %d pushes", pushes), floor: f, other: s, peer: "webhookd", goal: 1.2})
}

// repackFigures sums up webhookd's repacks since cursor (its log lines)
// and its peak resident memory (VmHWM) since it started.
func repackFigures(t *testing.T, w *whHost, cursor, packs string) string {
	t.Helper()
	log, err := w.JournalSince(cursor, "-u", "webhookd.service", "-o", "cat")
	must(t, err)
	var took sample
	merged, stopped := 0, 0
	for _, l := range strings.Split(log, "\n") {
		var ev struct {
			Message string  `json:"message"`
			Merged  int     `json:"merged"`
			Seconds float64 `json:"seconds"`
		}
		if json.Unmarshal([]byte(l), &ev) != nil {
			continue
		}
		switch {
		case ev.Message == "repacked the clone":
			merged += ev.Merged
			took = append(took, time.Duration(ev.Seconds*float64(time.Second)))
		case strings.HasPrefix(ev.Message, "repack stopped"):
			stopped++
		case strings.HasPrefix(ev.Message, "repack failed"):
			t.Errorf("webhookd: %s", l)
		}
	}
	hwm := strings.TrimSpace(w.MustRun(t, "awk '/^VmHWM:/ {print $2}' /proc/"+w.mainPID()+"/status"))
	kb, err := strconv.Atoi(hwm)
	must(t, err)
	if len(took) == 0 {
		return fmt.Sprintf("%s packs; no repack (%d stopped by a push); peak RSS %.1f MB", packs, stopped, mb(kb))
	}
	return fmt.Sprintf("%s packs at the end; %d repacks merged %d packs, %s median, %s max (%d more stopped by a push); peak RSS %.1f MB",
		packs, len(took), merged, secs(took.median()), secs(slices.Max(took)), stopped, mb(kb))
}

// benchFleet times `syslet push` of one change to one host against the
// same push to four hosts at once (--parallel 4), alternately. Each host
// runs 20 containers; every push changes one container's environment on
// each host it reaches.
func benchFleet(t *testing.T, runs int, tb *table) {
	const n = 4
	hosts := make([]*bench, n)
	e := newPushEnv(t)
	names := make([]string, n)
	version := make([]int, n) // 0 or 1: which version each host runs
	o := benchSpecs(20)
	for i := range hosts {
		hosts[i] = &bench{t: t, h: pushHost(t)}
		hosts[i].must("podman pull -q " + benchImage + " >/dev/null")
		names[i] = fmt.Sprintf("web%d", i+1)
		e.addHost(names[i], hosts[i].h.Port())
		e.trust(hosts[i].h, hostKey(t, hosts[i].h))
		must(t, hosts[i].h.WriteFile("/root/bench/s20.services", []byte(strings.Join(services(o), " ")), 0o644))
	}
	specs := func(i int) string {
		if version[i] == 1 {
			return string(specgen.Generate(benchSpecs(20, 3)))
		}
		return string(specgen.Generate(o))
	}
	write := func(i int) {
		e.writeSpecs("hosts/"+names[i], map[string]string{"s20.json": specs(i)})
	}
	for i := range n {
		write(i)
	}
	if r := e.push(append([]string{"--hosts-dir", "hosts", "--parallel", "4", "--remote-command", "syslet --soak 0"}, names...)...); r.code != 0 {
		t.Fatalf("first fleet push:\n%s", r)
	}
	var gaps []time.Duration
	push := func(targets []int) time.Duration {
		var args []string
		for _, i := range targets {
			version[i] ^= 1
			write(i)
			args = append(args, names[i])
		}
		d, gap, out := timedPush(t, e, append([]string{"--hosts-dir", "hosts", "--parallel", "4", "--remote-command", "syslet --soak 0"}, args...))
		gaps = append(gaps, gap)
		for _, i := range targets {
			if row := tableRow(t, out, names[i]); !strings.Contains(row, " applied ") || !strings.Contains(row, "1 to change") {
				t.Fatalf("%s: %s\n%s", names[i], row, out)
			}
			checkFleetHost(t, hosts[i].h, o)
		}
		return d
	}
	f, s := alternate(t, "fleet", runs, func() time.Duration { return push([]int{0}) }, func() time.Duration { return push([]int{0, 1, 2, 3}) })
	tb.add(row{section: "fleet", work: "`syslet push` of one change: 4 hosts at once (`--parallel 4`) against 1", floor: f, other: s, peer: "syslet push", goal: 1.15})
	tb.add(row{section: "fleet", work: "… from the last host's last line to the table's first", value: "at most " + secs(slices.Max(gaps)) + " (median " + secs(sample(gaps).median()) + ")", peer: "syslet push"})
}

// checkFleetHost checks that every service of the set is active on h.
func checkFleetHost(t *testing.T, h *testhost.Host, o specgen.Options) {
	t.Helper()
	if out := h.MustRun(t, "systemctl is-active $(cat /root/bench/s20.services) | sort | uniq -c"); strings.TrimSpace(out) != fmt.Sprintf("%d active", len(services(o))) {
		t.Fatalf("not every service is active:\n%s", out)
	}
}

// timedPush runs syslet push on this machine and returns its wall time,
// how long after the last line a host sent the table's first line came,
// and its stdout.
func timedPush(t *testing.T, e *pushEnv, args []string) (time.Duration, time.Duration, string) {
	t.Helper()
	full := append([]string{"push", "-F", e.sshConfig, "--known-hosts", e.knownHosts, "--connect-timeout", "20s", "-i", e.key}, args...)
	cmd := exec.Command(sysletBin, full...)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), "HOME="+e.home, "SSH_AUTH_SOCK=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	must(t, err)
	t0 := time.Now()
	must(t, cmd.Start())
	var out strings.Builder
	var lastHost, table time.Time
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		now := time.Now()
		line := sc.Text()
		out.WriteString(line + "\n")
		switch {
		case strings.Contains(line, " | "):
			lastHost = now
		case strings.HasPrefix(line, "HOST") && table.IsZero():
			table = now
		}
	}
	_, _ = io.Copy(io.Discard, pipe)
	err = cmd.Wait()
	d := time.Since(t0)
	if err != nil {
		t.Fatalf("syslet push %v: %v\n%s\n%s", args, err, out.String(), stderr.String())
	}
	return d, table.Sub(lastHost), out.String()
}

// benchSysletRSS measures syslet's peak resident memory (busybox time -v)
// for a converged apply of 200 and for --diff of 20,000 resources.
func benchSysletRSS(t *testing.T, tb *table) {
	b := newBench(t, map[string]specgen.Options{"s200": benchSpecs(200)})
	must(t, b.h.WriteFile("/root/bench/r20000.json", specgen.Generate(specgen.Sized(20000)), 0o644))
	b.must("syslet --soak 0 /root/bench/s200.json >/dev/null")
	// peak is the maximum resident set of one run of cmd, in KiB, and the
	// run's wall time as busybox prints it ("0m 0.63s").
	peak := func(cmd string) (int, string) {
		out := b.must("busybox time -v " + cmd + " 2>&1 >/dev/null | sed -n 's/^\\s*Maximum resident set size (kbytes): //p; s/^\\s*Elapsed (wall clock) time (h:mm:ss or m:ss): //p'")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 {
			t.Fatalf("busybox time -v %s: %q", cmd, out)
		}
		kb, err := strconv.Atoi(strings.TrimSpace(lines[1]))
		must(t, err)
		return kb, strings.TrimSpace(lines[0])
	}
	for _, c := range []struct{ work, cmd string }{
		{"`syslet` peak RSS, converged apply of 200", "syslet /root/bench/s200.json"},
		{"`syslet` peak RSS, `--diff` of 20,000 resources (" + strconv.Itoa(specgen.Sized(20000).Containers) + " containers and their volumes and networks, none deployed)", "syslet --diff /root/bench/r20000.json"},
	} {
		best, took := 0, ""
		for range 3 {
			kb, wall := peak(c.cmd)
			if best == 0 || kb < best {
				best, took = kb, wall
			}
		}
		tb.add(row{section: "footprint", work: c.work, value: fmt.Sprintf("%.1f MB (best of 3; the run took %s)", mb(best), took), peer: "syslet"})
	}
}

// benchWebhookdFootprint measures webhookd idling for BENCH_IDLE (default
// 10 minutes) after its first deploy, then after 10,000 deliveries.
func benchWebhookdFootprint(t *testing.T, tb *table) {
	w := startWebhookd(t)
	h := w.Host
	c := strings.TrimSpace(h.MustRun(t, "git -C "+whWork+" rev-parse HEAD"))
	if code, _ := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: c}); code != 202 {
		t.Fatalf("delivery: %d", code)
	}
	w.waitStatus("first deploy", func(s whStatus) bool { return s.State == "idle" && s.LastApplied == c })
	idle := 10 * time.Minute
	if d, err := time.ParseDuration(os.Getenv("BENCH_IDLE")); err == nil {
		idle = d
	}
	type proc struct {
		rssKB, ticks, wakeups int
		goroutines            float64
	}
	read := func() proc {
		pid := w.mainPID()
		out := h.MustRun(t, "awk '/^VmRSS:/{print $2} /^voluntary_ctxt_switches:/{print $2}' /proc/"+pid+"/status; awk '{print $14+$15}' /proc/"+pid+"/stat")
		f := strings.Fields(out)
		var p proc
		p.rssKB, _ = strconv.Atoi(f[0])
		p.wakeups, _ = strconv.Atoi(f[1])
		p.ticks, _ = strconv.Atoi(f[2])
		p.goroutines = w.metric("go_goroutines")
		return p
	}
	time.Sleep(10 * time.Second)
	p0 := read()
	time.Sleep(idle)
	p1 := read()
	hz := 100 // USER_HZ
	cpu := float64(p1.ticks-p0.ticks) / float64(hz)
	// Reading /metrics itself wakes the daemon: that is 1 of the wakeups.
	tb.add(row{section: "footprint", work: fmt.Sprintf("webhookd idle for %s: RSS", idle), value: fmt.Sprintf("%.1f MB → %.1f MB", mb(p0.rssKB), mb(p1.rssKB)), peer: "webhookd",
		verdict: verdict(mb(p1.rssKB) < 30, "< 30 MB")},
		row{section: "footprint", work: fmt.Sprintf("webhookd idle for %s: CPU, wakeups", idle), value: fmt.Sprintf("%.2f s CPU, %d voluntary context switches", cpu, p1.wakeups-p0.wakeups), peer: "webhookd",
			verdict: verdict(cpu <= 0.05, "~0 CPU, no polling")})

	// 10,000 (BENCH_DELIVERIES) deliveries of the applied commit, 16 at a
	// time: each one checked, queued and coalesced into the deploys between
	// them. 16 curls each send their share one after the other (curl's own
	// --parallel aborts every transfer once one of them fails).
	// Each delivery has a body of its own (as a forge's pushes have), signed
	// for it: webhookd knows a delivery by its signed body too, and would
	// refuse the same body under a fresh id as a replay (409).
	const clients = 16
	cfg := make([]strings.Builder, clients)
	n := envInt("BENCH_DELIVERIES", deliveries)
	for i := range n {
		b := &cfg[i%clients]
		body, headers := w.request(whDelivery{forge: "github", ref: "refs/heads/main", after: c, id: fmt.Sprintf("bench-%d", i)})
		fmt.Fprintf(b, "url = %q\nrequest = \"POST\"\noutput = \"/dev/null\"\nwrite-out = \"%%{http_code} %%{errormsg}\\n\"\nheader = \"Content-Type: application/json\"\ndata-binary = %q\n", whURL+"/hooks/infra", body)
		for _, hd := range headers {
			fmt.Fprintf(b, "header = %q\n", hd)
		}
		b.WriteString("next\n")
	}
	for i := range cfg {
		must(t, h.WriteFile(fmt.Sprintf("/tmp/wh-curl-%d.cfg", i), []byte(cfg[i].String()), 0o644))
	}
	codes := h.MustRun(t, fmt.Sprintf("for i in $(seq 0 %d); do curl -s -K /tmp/wh-curl-$i.cfg > /tmp/wh-codes-$i & done; wait; cat /tmp/wh-codes-* | sort | uniq -c", clients-1))
	t.Logf("%d deliveries: %s", n, codes)
	w.waitStatus("idle after the deliveries", func(s whStatus) bool { return s.State == "idle" && s.Queued == "" })
	time.Sleep(30 * time.Second)
	p2 := read()
	tb.add(row{section: "footprint", work: fmt.Sprintf("webhookd after %d deliveries (30 s later): RSS, goroutines", n), peer: "webhookd",
		value:   fmt.Sprintf("%.1f MB (idle %.1f MB), %v goroutines (idle %v); replies %s", mb(p2.rssKB), mb(p1.rssKB), p2.goroutines, p1.goroutines, strings.Join(strings.Fields(codes), " ")),
		verdict: verdict(float64(p2.rssKB) <= 1.2*float64(p1.rssKB) && p2.goroutines <= p1.goroutines, "RSS within 20 % of idle, goroutines back")})
}

func mb(kb int) float64 { return float64(kb) / 1024 }

func verdict(ok bool, goal string) string {
	if ok {
		return goal + " met"
	}
	return goal + " **not met**"
}
