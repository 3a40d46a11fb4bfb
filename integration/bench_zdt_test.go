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
// given image and config), and the port it answers on. The start-first
// strategy (behind the proxy) adds a row here.
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
		// change to the next, so both see the same host.
		order := []zdtStrategy{zdtStrategies[0], zdtStrategies[1]}
		if i%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, s := range order {
			sum := zdtDeploy(t, h, images, s, c)
			t.Logf("%s, %s: %s", s.name, c.work, sum)
			verdict := ""
			if s.name == "socket-held" {
				verdict = "0 failed met"
				if sum.Failed != 0 {
					verdict = "0 failed **not met**"
				}
			}
			tb.add(row{section: "zero-downtime", work: c.work, peer: s.name, value: zdtValue(sum), verdict: verdict})
		}
	}
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
