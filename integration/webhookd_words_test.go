//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/integration/testhost"
)

// pageRow is the text a reader sees in the element of the status page
// whose id is id: markup stripped (a list item is a space), spaces folded.
func pageRow(t *testing.T, page, id string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)id="` + regexp.QuoteMeta(id) + `">(.*?)</(dd|p)>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the page has no element %s:\n%s", id, page)
	}
	text := regexp.MustCompile(`<(li|br)>`).ReplaceAllString(m[1], " ")
	text = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(text, "")
	return strings.Join(strings.Fields(text), " ")
}

// TestWebhookdSaysWhatHappened: on a real host, webhookd's page says what
// a rollback and a deploy that changed nothing did to the health gate,
// since when its counters count, and its journal is one JSON object a
// line, its deploys' actions included.
func TestWebhookdSaysWhatHappened(t *testing.T) {
	t.Parallel()
	w := startWebhookd(t)
	w.writeSpec("localhost:5000/web:v2", "good", "")
	good := w.deploy("web v2")

	// A commit whose container cannot start: the gate fails, the host
	// runs good again.
	crashing := buildBrokenImage(t, w.Host, "web:exits", "echo web-cannot-start; exit 3")
	w.writeSpec(crashing, "crash", "")
	bad := w.commit("web that cannot start")
	if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: bad}); code != 202 {
		t.Fatalf("push: %d %s", code, reply)
	}
	st := w.waitStatus("the rollback", func(s whStatus) bool { return s.Last != nil && s.Last.Commit == bad })
	if st.Last.Result != "rolled-back" || st.LastApplied != good {
		t.Fatalf("the crashing commit: %+v (applied %s)", st.Last, st.LastApplied)
	}
	// The host is healthy, running good: the page must not say otherwise.
	if _, _, rev := w.running(); rev != "good" {
		t.Fatalf("after the rollback web runs REV=%s, want good", rev)
	}
	w.MustRun(t, "systemctl is-active web.service")
	page := w.MustRun(t, "curl -sSf "+whURL+"/")
	gate := pageRow(t, page, "gate-infra")
	t.Logf("the gate after the rollback: %s", gate)
	want := regexp.MustCompile(`^rolled back: the deploy of ` + bad[:12] + ` failed the gate at [0-9: -]+ UTC and was rolled back; the host runs ` + good[:12] + ` again, healthy \(it passed the gate\) web\.service: `)
	if !want.MatchString(gate) {
		t.Errorf("the gate after the rollback says %q, want %s", gate, want)
	}
	if strings.Contains(page, `id="gate-infra"><span class="bad">`) {
		t.Errorf("the gate is red after a rollback that passed its own gate")
	}
	since := pageRow(t, page, "counted-since")
	t.Logf("the counters: %s", since)
	if !regexp.MustCompile(`^counted since webhookd started at 20[0-9-]+ [0-9:]+ UTC`).MatchString(since) {
		t.Errorf("the delivery counters say %q: no since", since)
	}

	// Back to good's specs: nothing to change, nothing started.
	inv := prop(t, w.Host, "web.service", "InvocationID")
	w.writeSpec("localhost:5000/web:v2", "good", "")
	same := w.commit("back to web v2")
	if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: same}); code != 202 {
		t.Fatalf("push: %d %s", code, reply)
	}
	st = w.waitStatus("the deploy that changes nothing", func(s whStatus) bool { return s.Last != nil && s.Last.Commit == same })
	if st.Last.Verdict != "no-changes" || prop(t, w.Host, "web.service", "InvocationID") != inv {
		t.Fatalf("going back to web v2 was not a deploy that changed nothing: %+v", st.Last)
	}
	gate = pageRow(t, w.MustRun(t, "curl -sSf "+whURL+"/"), "gate-infra")
	t.Logf("the gate after the deploy that changed nothing: %s", gate)
	want = regexp.MustCompile(`^no changes in ` + same[:12] + ` at [0-9: -]+ UTC: nothing started, nothing to gate · last verdict: rolled back: the deploy of ` + bad[:12] + ` `)
	if !want.MatchString(gate) {
		t.Errorf("the gate after a deploy that changed nothing says %q, want %s", gate, want)
	}

	// webhookd's journal: every line is one JSON object, the actions of
	// its deploys (stop, start, …) with them.
	out, err := w.JournalSince("", "_SYSTEMD_UNIT=webhookd.service", "-o", "cat")
	must(t, err)
	var lines, actions int
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Errorf("webhookd's journal has a line that is not a JSON object: %q", l)
			continue
		}
		lines++
		if ev["op"] != nil && ev["run"] != nil {
			actions++
		}
	}
	t.Logf("webhookd's journal: %d line(s), each one JSON object; %d of them its deploys' actions", lines, actions)
	if actions == 0 {
		t.Errorf("webhookd's journal holds no action of its deploys:\n%s", out)
	}
}

// TestHandRunIsInTheJournal: an apply started by hand from a root shell
// over SSH, its output a pipe or a terminal, is found by
// `journalctl SYSLET_RUN=<run>`, with each action's fields.
func TestHandRunIsInTheJournal(t *testing.T) {
	t.Parallel()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket")
	spec := func(rev string) {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "type": "container", "name": "hand",
			"unit": map[string]any{"Container": map[string]any{"Image": "localhost:5000/busybox:latest", "Exec": "sleep infinity", "Environment": map[string]string{"REV": rev}}}})
		must(t, h.WriteFile("/etc/syslet/specs/hand.json", b, 0o644))
	}
	runID := regexp.MustCompile(`Applying \(run ([0-9TZa-f-]+)\)`)
	for _, tc := range []struct{ name, cmd string }{
		{"a pipe", "syslet /etc/syslet/specs 2>&1 | cat"},
		{"a terminal", "script -qec " + testhost.Quote("syslet --yes /etc/syslet/specs") + " /dev/null"},
	} {
		spec(tc.name)
		out := h.MustRun(t, tc.cmd)
		m := runID.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%s: no run id in syslet's output:\n%s", tc.name, out)
		}
		j, err := h.JournalSince("", "SYSLET_RUN="+m[1], "-o", "json")
		must(t, err)
		var ops []string
		for _, l := range strings.Split(strings.TrimSpace(j), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(l), &e) != nil {
				continue
			}
			ops = append(ops, fmt.Sprintf("%v %v %v", e["SYSLET_RESULT"], e["SYSLET_OP"], e["SYSLET_TARGET"]))
			var msg map[string]any
			if err := json.Unmarshal([]byte(fmt.Sprint(e["MESSAGE"])), &msg); err != nil || msg["run"] != m[1] {
				t.Errorf("%s: an entry's MESSAGE is not the action's JSON object: %v", tc.name, e["MESSAGE"])
			}
		}
		t.Logf("%s: journalctl SYSLET_RUN=%s -o json: %d entries: %s", tc.name, m[1], len(ops), strings.Join(ops, "; "))
		if !slices.Contains(ops, "applied start hand.service") {
			t.Errorf("%s: journalctl SYSLET_RUN=%s does not find the start of hand.service: %q", tc.name, m[1], ops)
		}
		if !strings.Contains(out, "hand.service") {
			t.Errorf("%s: the console lost the action lines:\n%s", tc.name, out)
		}
	}
}
