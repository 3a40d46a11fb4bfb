//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

// Readiness probes on a real host (issue 52): the health gate asks the
// service itself, from the host, whether it serves. Every image here is
// the test server alone in a FROM scratch image (no shell, nothing to
// run inside), and one host serves every subtest in turn.

const probeDir = "/srv/probe"

// probeHost is a host with the test server images a probe test deploys.
type probeHost struct {
	*testhost.Host
	t *testing.T
	// ok answers 200 "ok" on /up; v2 too, with another marker; bad
	// answers 503 "db unreachable"; hang accepts /up and never answers.
	ok, v2, bad, hang string
	// specs are the specs every apply has besides web.
	specs []string
}

func newProbeHost(t *testing.T) *probeHost {
	t.Helper()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket && mkdir -p "+probeDir)
	return &probeHost{Host: h, t: t,
		ok:   serverImage(t, h, "srv:ok", map[string]string{"MARKER": "ok"}),
		v2:   serverImage(t, h, "srv:v2", map[string]string{"MARKER": "v2"}),
		bad:  serverImage(t, h, "srv:bad", map[string]string{"MARKER": "bad", "UP_STATUS": "503", "UP_BODY": "db unreachable"}),
		hang: serverImage(t, h, "srv:hang", map[string]string{"MARKER": "hang", "HANG": "1"}),
	}
}

// web is the container spec the subtests deploy: image published on
// 127.0.0.1:8080, probed with probe (nil: none).
func web(image string, probe map[string]any) string {
	s := map[string]any{"apiVersion": "v1", "type": "container", "name": "web",
		"unit": map[string]any{"Container": map[string]any{"Image": image, "PublishPort": "127.0.0.1:8080:8080"}}}
	if probe != nil {
		s["probe"] = probe
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// upProbe is the probe of GET :8080/PATH, ready within deadline.
func upProbe(path, deadline string) map[string]any {
	return map[string]any{"http": map[string]any{"port": 8080, "path": path}, "deadline": deadline}
}

// apply writes the specs and applies them with --output json.
func (p *probeHost) apply(specs ...string) (testhost.Result, probeOutcome) {
	p.t.Helper()
	specs = append(specs, p.specs...)
	must(p.t, p.WriteFile(probeDir+"/specs.json", []byte(strings.Join(specs, "\n")), 0o644))
	res := p.Run("syslet --output json " + probeDir + "/specs.json")
	var o probeOutcome
	if err := json.Unmarshal([]byte(res.Stdout), &o); err != nil {
		p.t.Fatalf("syslet --output json printed no document (%v):\n%s", err, res)
	}
	return res, o
}

// probeOutcome is what the tests read of syslet's --output json.
type probeOutcome struct {
	Summary string
	Gate    *struct {
		Took     time.Duration
		Failures []struct{ Service, Reason string }
		Probes   []struct {
			Service string
			Ready   bool
			Last    struct{ Via string }
		}
	}
	Rollback *struct {
		Passed bool
		Gate   *struct{ Units []string }
	}
}

// reasons are the gate's failure reasons, one a line.
func (o probeOutcome) reasons() string {
	if o.Gate == nil {
		return ""
	}
	var rs []string
	for _, f := range o.Gate.Failures {
		rs = append(rs, f.Service+": "+f.Reason)
	}
	return strings.Join(rs, "\n")
}

// stats is the test server's request count per path, read from inside
// the host.
func (p *probeHost) stats(port int) map[string]int {
	p.t.Helper()
	var m map[string]int
	must(p.t, json.Unmarshal([]byte(p.MustRun(p.t, fmt.Sprintf("curl -sS --retry 5 --retry-connrefused --retry-delay 1 http://127.0.0.1:%d/stats", port))), &m))
	return m
}

// serves is what GET / answers on 127.0.0.1:8080.
func (p *probeHost) serves() string {
	p.t.Helper()
	return strings.TrimSpace(p.MustRun(p.t, "curl -sS --retry 5 --retry-connrefused --retry-delay 1 http://127.0.0.1:8080/"))
}

// rolledBack checks a run that failed its gate: exit 4, the rollback's
// gate passed, the old image serves, and the verdict names each of want.
func (p *probeHost) rolledBack(res testhost.Result, o probeOutcome, want ...string) {
	p.t.Helper()
	if res.Code != 4 {
		p.t.Fatalf("exit %d, want 4 (rolled back):\n%s", res.Code, res)
	}
	p.t.Logf("the gate's verdict: %s (after %s)", o.reasons(), o.Gate.Took)
	for _, w := range want {
		if !strings.Contains(o.reasons(), w) {
			p.t.Errorf("the gate's verdict does not say %q:\n%s", w, o.reasons())
		}
	}
	if o.Rollback == nil || !o.Rollback.Passed {
		p.t.Errorf("the rollback did not pass its gate: %+v", o.Rollback)
	}
	if got := p.serves(); got != "ok" {
		p.t.Errorf("after the rollback the server answers %q, want the old image's \"ok\"", got)
	}
}

func TestProbe(t *testing.T) {
	p := newProbeHost(t)

	// A FROM scratch image probed over HTTP passes, and the first apply
	// is what every later subtest changes.
	t.Run("passes", func(t *testing.T) {
		p.t = t
		res, o := p.apply(web(p.ok, upProbe("/up", "20s")))
		if !res.OK() || o.Gate == nil || len(o.Gate.Failures) > 0 {
			t.Fatalf("the first apply: %s", res)
		}
		if n := p.stats(8080)["/up"]; n == 0 {
			t.Errorf("the gate made no probe request (/stats counts %d on /up)", n)
		}
	})

	t.Run("converged run probes nothing", func(t *testing.T) {
		p.t = t
		before := p.stats(8080)
		if res, _ := p.apply(web(p.ok, upProbe("/up", "20s"))); !res.OK() {
			t.Fatalf("converged run: %s", res)
		}
		if after := p.stats(8080); after["/up"] != before["/up"] {
			t.Errorf("a converged run made %d probe request(s)", after["/up"]-before["/up"])
		}
	})

	// Where a container publishes nothing, the host still reaches it: a
	// TCP probe on its podman network's address, an HTTP probe inside
	// the network namespace of a container with Network=none, and a
	// command run in a container with podman exec.
	t.Run("network, namespace and exec", func(t *testing.T) {
		p.t = t
		net := `{"apiVersion":"v1","type":"network","name":"app","unit":{"Network":{}}}`
		db, _ := json.Marshal(map[string]any{"apiVersion": "v1", "type": "container", "name": "db",
			"probe": map[string]any{"tcp": map[string]any{"port": 8080}},
			"unit":  map[string]any{"Container": map[string]any{"Image": p.ok, "Network": "app.network"}}})
		solo, _ := json.Marshal(map[string]any{"apiVersion": "v1", "type": "container", "name": "solo",
			"probe": upProbe("/up", "20s"),
			"unit":  map[string]any{"Container": map[string]any{"Image": p.ok, "Network": "none"}}})
		bb, _ := json.Marshal(map[string]any{"apiVersion": "v1", "type": "container", "name": "bb",
			"probe": map[string]any{"exec": []string{"test", "-e", "/etc/testhost-marker"}},
			"unit":  map[string]any{"Container": map[string]any{"Image": "localhost:5000/busybox:latest", "Exec": "sleep 3600"}}})
		res, o := p.apply(web(p.ok, upProbe("/up", "20s")), net, string(db), string(solo), string(bb))
		if !res.OK() || o.Gate == nil {
			t.Fatalf("apply: %s", res)
		}
		via := map[string]string{}
		for _, pr := range o.Gate.Probes {
			if !pr.Ready {
				t.Errorf("%s: not ready", pr.Service)
			}
			via[pr.Service] = pr.Last.Via
		}
		if !strings.Contains(via["db.service"], "(network app)") || !strings.Contains(via["solo.service"], "(in its network namespace)") || len(via) != 3 {
			t.Errorf("probes went through %v", via)
		}
		p.specs = []string{net, string(db), string(solo), string(bb)}

		// Between deploys, syslet status asks each probe once.
		var st struct {
			Probes []struct {
				Service string
				Answer  *struct{ OK bool }
			}
		}
		must(t, json.Unmarshal([]byte(p.MustRun(t, "syslet status --output json "+probeDir+"/specs.json")), &st))
		if len(st.Probes) != 4 {
			t.Errorf("syslet status lists %d probes, want 4: %+v", len(st.Probes), st.Probes)
		}
		for _, pr := range st.Probes {
			if pr.Answer == nil || !pr.Answer.OK {
				t.Errorf("syslet status: %s's probe did not pass: %+v", pr.Service, pr.Answer)
			}
		}
		t.Logf("syslet status:\n%s", p.MustRun(t, "syslet status "+probeDir+"/specs.json"))
	})

	// Between deploys the drift check asks each probe once: a container
	// that still runs but no longer passes its probe is drift of its own
	// kind, in the textfile with each probe's answer, until it passes again.
	t.Run("drift check names a failing probe", func(t *testing.T) {
		p.t = t
		check := func() map[string]string {
			t.Helper()
			p.MustRun(t, "syslet --diff --metrics-file /run/probe.prom "+probeDir+"/specs.json >/dev/null")
			m := map[string]string{}
			for _, line := range strings.Split(p.MustRun(t, "cat /run/probe.prom"), "\n") {
				if k, v, ok := strings.Cut(line, " "); ok && (strings.HasPrefix(k, "syslet_drift_units") || strings.HasPrefix(k, "syslet_probe_success")) {
					m[k] = v
				}
			}
			return m
		}
		m := check()
		t.Logf("the drift check, every probe passing: %v", m)
		if m[`syslet_drift_units{kind="probe"}`] != "0" || m[`syslet_probe_success{service="bb.service"}`] != "1" || m[`syslet_probe_success{service="web.service"}`] != "1" {
			t.Errorf("a drift check with every probe passing: %v", m)
		}
		// bb runs on, but what its exec probe tests is gone.
		p.MustRun(t, "podman exec bb rm /etc/testhost-marker")
		m = check()
		t.Logf("the drift check, bb's probe failing: %v", m)
		if m[`syslet_drift_units{kind="probe"}`] != "1" || m[`syslet_probe_success{service="bb.service"}`] != "0" || m[`syslet_probe_success{service="db.service"}`] != "1" {
			t.Errorf("a drift check with bb's probe failing: %v", m)
		}
		if st := p.MustRun(t, "syslet status "+probeDir+"/specs.json"); !strings.Contains(st, "probe failing: bb.service") {
			t.Errorf("syslet status does not name bb's failing probe:\n%s", st)
		}
		p.MustRun(t, "podman exec bb touch /etc/testhost-marker")
		if m = check(); m[`syslet_drift_units{kind="probe"}`] != "0" {
			t.Errorf("bb passes again, but the drift check still counts %s failing probe(s)", m[`syslet_drift_units{kind="probe"}`])
		}
	})

	t.Run("503 rolls back", func(t *testing.T) {
		p.t = t
		res, o := p.apply(web(p.bad, upProbe("/up", "8s")))
		p.rolledBack(res, o, `web.service: probe GET :8080/up`, `503 "db unreachable"`)
		// The rollback's own gate probed the restored container: the
		// restored server has answered /up since it started.
		if n := p.stats(8080)["/up"]; n == 0 {
			t.Errorf("the rollback's gate did not probe the restored container (/stats counts %d on /up)", n)
		}
		if o.Rollback != nil && o.Rollback.Gate == nil {
			t.Errorf("the rollback's gate watched nothing")
		}
	})

	t.Run("wrong path rolls back", func(t *testing.T) {
		p.t = t
		res, o := p.apply(web(p.v2, upProbe("/nope", "6s")))
		p.rolledBack(res, o, `probe GET :8080/nope`, `404`)
	})

	t.Run("hang times out", func(t *testing.T) {
		p.t = t
		res, o := p.apply(web(p.hang, upProbe("/up", "6s")))
		p.rolledBack(res, o, `probe GET :8080/up`, `timed out after 2s`)
		// The gate ends at the probe's deadline, not later: the bound is
		// the gate's structure (deadline + soak), which this checks.
		if o.Gate != nil && o.Gate.Took > 6*time.Second+5*time.Second {
			t.Errorf("the gate took %s, more than the probe's deadline and the soak window", o.Gate.Took)
		}
	})
}

// TestProbeInWebhookd: webhookd's drift check asks the applied
// containers' probes too. A container that runs on but stops passing its
// probe is counted on /metrics, shown on the page with its answer, and
// deployed again by nothing (no apply would mend it).
func TestProbeInWebhookd(t *testing.T) {
	t.Parallel()
	w := startWebhookd(t)
	w.writeConfigLines("ssh://root@127.0.0.1/srv/git/infra.git", "    secretFile: "+whSecret, "    drift: {interval: 5s, reconcile: true}")
	w.MustRun(t, "webhookd --check --config "+whConfig+" && systemctl restart webhookd.service")
	spec, _ := json.MarshalIndent(map[string]any{"apiVersion": "v1", "type": "container", "name": "web",
		"probe": map[string]any{"exec": []string{"test", "-e", "/etc/testhost-marker"}},
		"unit":  map[string]any{"Container": map[string]any{"Image": "localhost:5000/web:v2", "RunInit": "true", "Exec": "sleep infinity"}}}, "", "  ")
	must(t, w.WriteFile(whWork+"/"+w.specDir+"/web.json", spec, 0o644))
	w.deploy("web, probed")

	waitMetric := func(what, series string, want float64) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for w.metric(series) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s is %v, want %v", what, series, w.metric(series), want)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	success := `webhookd_probe_success{repo="infra",service="web.service"}`
	failing := `webhookd_drift_units{kind="probe",repo="infra"}`
	waitMetric("a passing probe", success, 1)

	// web runs on, but what its probe tests is gone.
	w.MustRun(t, "podman exec web rm /etc/testhost-marker")
	waitMetric("the probe failing", success, 0)
	waitMetric("the probe failing", failing, 1)
	page := w.MustRun(t, "curl -sSf "+whURL+"/")
	for _, want := range []string{"1 probe failing", "<code>web.container</code> probe failing: probe exec test -e /etc/testhost-marker exited 1",
		`<td><code>web.service</code></td><td class="wide">exec test -e /etc/testhost-marker → exits 0 every 1s</td><td><span class="bad">exited 1</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}

	// It passes again: the gauges say so at the next check. In all that
	// time the only deploy was the push's: a reconciling repository does
	// not deploy again for a failing probe alone.
	w.MustRun(t, "podman exec web touch /etc/testhost-marker")
	waitMetric("the probe passing again", failing, 0)
	waitMetric("the probe passing again", success, 1)
	if n := w.deploys(); n != 1 {
		t.Errorf("%v deploys, want 1: a failing probe alone was reconciled", n)
	}
}
