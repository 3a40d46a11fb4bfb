//go:build integration && bench

package integration

// The benchmark's zero-downtime section (BENCHMARKS.md, issue 53): what a
// deploy costs the clients of a serving container, by how it is replaced.
// A load client in the host sends requests at a steady rate for the whole
// window around one deploy; the row is what the window came to: failed
// requests, the longest time without a good answer, the latency.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/loadclient/load"
	"github.com/syslet/syslet/integration/testhost"
)

const (
	zdtRate   = 100              // requests a second, at least 100 (issue 53)
	zdtWindow = 55 * time.Second // the load around one deploy: 5,500 requests
	zdtLead   = 20 * time.Second // load before the deploy begins
)

// zdtStrategy is one way of replacing a container the section measures:
// its name in the table, how its spec serves (the JSON of its container,
// given image and config), and the port it answers on.
type zdtStrategy struct {
	name, container string
	port            int
	spec            func(image, conf string) map[string]any
}

var zdtStrategies = []zdtStrategy{
	{name: "socket-held", container: "sock", port: 8080, spec: func(image, conf string) map[string]any {
		return map[string]any{"socket": map[string]any{"Socket": map[string]any{"ListenStream": "0.0.0.0:8080"}},
			"unit": map[string]any{"Container": map[string]any{"Image": image}}}
	}},
	{name: "stop-start (baseline)", container: "plain", port: 8081, spec: func(image, conf string) map[string]any {
		return map[string]any{"unit": map[string]any{"Container": map[string]any{"Image": image, "PublishPort": "8081:8080"}}}
	}},
	{name: "start-first behind syslet's HAProxy", container: "sf", port: 8082, spec: func(image, conf string) map[string]any {
		return map[string]any{"proxy": map[string]any{"listen": "0.0.0.0:8082", "port": 8080, "drain": "5s"},
			"probe": map[string]any{"http": map[string]any{"port": 8080, "path": "/up"}, "interval": "200ms"},
			"unit":  map[string]any{"Container": map[string]any{"Image": image}}}
	}},
}

// zdtChange is one deploy measured for every strategy: the image and
// config it deploys over the first state (v1, "a=1"), and the exit code
// syslet must end with.
type zdtChange struct {
	work        string
	image, conf string
	code        int
}

func benchZeroDowntime(t *testing.T, tb *table) {
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket && mkdir -p /srv/zdt")
	images := map[string]string{
		"v1":   serverImage(t, h, "srv:v1", map[string]string{"MARKER": "v1"}),
		"v2":   serverImage(t, h, "srv:v2", map[string]string{"MARKER": "v2"}),
		"dead": serverImage(t, h, "srv:dead", map[string]string{"DIE": "1"}),
	}
	changes := []zdtChange{
		{"image change", "v2", "a=1\n", 0},
		{"config change", "v1", "a=2\n", 0},
		{"automatic rollback of a dead image", "dead", "a=1\n", 4},
	}
	for i, c := range changes {
		// Alternated: the strategy that goes first changes from one
		// change to the next, so all see the same host.
		order := append(slices.Clone(zdtStrategies[i%len(zdtStrategies):]), zdtStrategies[:i%len(zdtStrategies)]...)
		for _, s := range order {
			sum := zdtDeploy(t, h, images, s, c)
			t.Logf("%s, %s: %s", s.name, c.work, sum)
			verdict := ""
			if s.name != "stop-start (baseline)" {
				verdict = "0 failed met"
				if sum.Failed != 0 {
					verdict = "0 failed **not met**"
				}
			}
			tb.add(row{section: "zero-downtime", work: c.work, peer: s.name, value: zdtValue(sum), verdict: verdict})
		}
	}
	h.MustRun(t, "echo '[]' > /srv/zdt/stack.json && syslet --allow-removals /srv/zdt >/dev/null")
	sum, rss := caddySwitch(t, h, images)
	t.Logf("by hand behind Caddy, image change: %s; Caddy's RSS %s", sum, rss)
	tb.add(row{section: "zero-downtime", work: "image change", peer: "by hand behind Caddy (admin API), RSS " + rss, value: zdtValue(sum)})
}

// caddySwitch is the image change done by hand behind Caddy, the proxy
// HAProxy was chosen over: the v1 container on one loopback port, Caddy
// in front, the v2 container started on another port, Caddy's upstream
// patched to it through its admin API once it answers, the old container
// stopped half a second later. It returns the window's summary and
// Caddy's resident memory.
func caddySwitch(t *testing.T, h *testhost.Host, images map[string]string) (load.Summary, string) {
	t.Helper()
	run := func(name, image string, port int) {
		h.MustRun(t, fmt.Sprintf("podman run -d -q --name %s -p 127.0.0.1:%d:8080 %s >/dev/null", name, port, image))
		if r := h.Eventually(fmt.Sprintf("curl -sf http://127.0.0.1:%d/up", port), 10*time.Second); !r.OK() {
			t.Fatalf("test server %s does not answer: %s", name, r)
		}
	}
	run("caddy-a", images["v1"], 28101)
	must(t, h.WriteFile("/root/caddy.json", []byte(`{"admin":{"listen":"localhost:2019"},"apps":{"http":{"servers":{"srv0":{"listen":[":8083"],`+
		`"routes":[{"handle":[{"handler":"reverse_proxy","upstreams":[{"dial":"127.0.0.1:28101"}]}]}]}}}}}`), 0o644))
	h.MustRun(t, "systemd-run -q --unit bench-caddy caddy run --config /root/caddy.json")
	if r := h.Eventually("curl -sf http://127.0.0.1:8083/", 20*time.Second); !r.OK() {
		t.Fatalf("caddy does not answer: %s", r)
	}
	l := startLoad(t, h, "http://127.0.0.1:8083/", zdtRate, 10*time.Minute)
	from := guestNow(t, h)
	time.Sleep(zdtLead)
	run("caddy-b", images["v2"], 28102)
	h.MustRun(t, `curl -sf -X PATCH -H 'Content-Type: application/json' -d '[{"dial":"127.0.0.1:28102"}]' http://localhost:2019/config/apps/http/servers/srv0/routes/0/handle/0/upstreams`)
	time.Sleep(500 * time.Millisecond)
	h.MustRun(t, "podman stop -t 10 caddy-a >/dev/null")
	if rest := zdtWindow - time.Since(from); rest > 0 {
		time.Sleep(rest)
	}
	rss := strings.TrimSpace(h.MustRun(t, "ps -o rss= -C caddy | head -1")) + " KiB"
	h.MustRun(t, "systemctl stop bench-caddy; podman rm -f caddy-a caddy-b >/dev/null")
	return load.Summarize(l.stop(t), from, from.Add(zdtWindow)), rss
}

// zdtDeploy deploys the first state of every strategy's container, then
// change to one of them under load, and sums up the load's window.
func zdtDeploy(t *testing.T, h *testhost.Host, images map[string]string, s zdtStrategy, c zdtChange) load.Summary {
	t.Helper()
	write := func(changed *zdtStrategy, image, conf string) {
		var stream strings.Builder
		for _, x := range zdtStrategies {
			img, cf := images["v1"], "a=1\n"
			if changed != nil && x.name == changed.name {
				img, cf = images[image], conf
			}
			spec := x.spec(img, cf)
			spec["apiVersion"], spec["type"], spec["name"] = "v1", "container", x.container
			spec["configFiles"] = []map[string]string{{"mountPath": "/etc/app.conf", "content": cf}}
			b, _ := json.Marshal(spec)
			stream.Write(append(b, '\n'))
		}
		must(t, h.WriteFile("/srv/zdt/stack.json", []byte(stream.String()), 0o644))
	}
	write(nil, "", "")
	if r := h.Run("syslet --soak 0 /srv/zdt"); !r.OK() {
		t.Fatalf("deploying the first state: %s", r)
	}
	write(&s, c.image, c.conf)
	l := startLoad(t, h, fmt.Sprintf("http://127.0.0.1:%d/", s.port), zdtRate, 10*time.Minute)
	from := guestNow(t, h)
	time.Sleep(zdtLead)
	r := h.Run("syslet --soak 3s /srv/zdt")
	if r.Code != c.code {
		t.Fatalf("%s, %s: syslet exited %d, want %d:\n%s", s.name, c.work, r.Code, c.code, r)
	}
	if rest := zdtWindow - time.Since(from); rest > 0 {
		time.Sleep(rest)
	}
	rs := l.stop(t)
	return load.Summarize(rs, from, from.Add(zdtWindow))
}

// zdtValue is a row's measurement: failed of all, the longest gap, the
// latency.
func zdtValue(s load.Summary) string {
	return fmt.Sprintf("%d failed of %d; longest gap %s; p50 %s, p99 %s", s.Failed, s.Requests,
		s.Gap.Round(time.Millisecond), s.P50.Round(10*time.Microsecond), s.P99.Round(10*time.Microsecond))
}
