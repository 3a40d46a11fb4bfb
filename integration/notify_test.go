//go:build integration

package integration

// Issue 20's acceptance on a real test host: webhookd (as its systemd
// service) and syslet notify a receiver on the guest's loopback
// (integration/receiver, run with systemd-run: the guest has a network
// namespace of its own), which records every request and answers the
// commit-status calls the way GitHub, Gitea/Forgejo and GitLab document
// them (path, auth header, JSON fields and states). Every claim is checked
// against what the receiver recorded, /status, /metrics, the journal and
// the host itself (unit files, InvocationIDs).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/syslet/syslet/integration/testhost"
	"github.com/syslet/syslet/pkg/drift"
	"github.com/syslet/syslet/pkg/forge"
	"github.com/syslet/syslet/pkg/release"
)

const (
	rcvURL     = "http://127.0.0.1:8090"
	rcvLog     = "/var/lib/receiver/requests.jsonl"
	rcvMode    = "/run/receiver.mode"
	rcvToken   = "/etc/syslet/forge-status.token" // the forges' API token
	ntfyToken  = "/etc/syslet/ntfy.token"
	hookSecret = "/etc/syslet/notify-hook.secret" // the signed webhook's HMAC key
	textfile   = "/var/lib/prometheus/node-exporter/syslet.prom"
)

// receiverBin builds the receiver once per run, for the guest.
var receiverBin = sync.OnceValues(func() (string, error) {
	root, err := testhost.ModuleRoot()
	if err != nil {
		return "", err
	}
	cache, err := testhost.CacheDir()
	if err != nil {
		return "", err
	}
	out := filepath.Join(cache, "bin", "receiver")
	return out, release.Binary(root, release.Program{Name: "receiver", Pkg: "./integration/receiver"}, "amd64", out, stamp, release.Kept)
})

// rcvRecord is one request the receiver got.
type rcvRecord struct {
	Time    time.Time
	Method  string
	Path    string
	Header  http.Header
	Body    string
	Code    int
	Verdict string
}

// creds are the credentials a test configures; none may show anywhere.
type creds struct {
	forgeToken, ntfyToken, hookSecret string
}

func (c creds) all() []string { return []string{c.forgeToken, c.ntfyToken, c.hookSecret} }

// startReceiver installs the receiver in h, with fresh credentials, and
// starts it as a transient service.
func startReceiver(t *testing.T, h *testhost.Host) creds {
	t.Helper()
	bin, err := receiverBin()
	must(t, err)
	must(t, h.CopyIn(bin, "/usr/local/bin/receiver"))
	c := creds{forgeToken: randomValue("forge-token"), ntfyToken: randomValue("tk_ntfy"), hookSecret: randomValue("hook-secret")}
	h.MustRun(t, "install -d -m 0755 /etc/syslet && mkdir -p /var/lib/receiver")
	must(t, h.WriteFile(rcvToken, []byte(c.forgeToken+"\n"), 0o600))
	must(t, h.WriteFile(ntfyToken, []byte(c.ntfyToken+"\n"), 0o600))
	must(t, h.WriteFile(hookSecret, []byte(c.hookSecret+"\n"), 0o600))
	startReceiverUnit(t, h)
	return c
}

func startReceiverUnit(t *testing.T, h *testhost.Host) {
	t.Helper()
	h.MustRun(t, "systemd-run -q --unit=receiver --collect /usr/local/bin/receiver -token-file "+rcvToken)
	if r := h.Eventually("ss -Htln 'sport = :8090' | grep -q . && ss -Htln 'sport = :2525' | grep -q .", 10*time.Second); !r.OK() {
		t.Fatalf("the receiver does not listen: %s", r)
	}
}

func setMode(t *testing.T, h *testhost.Host, mode string) {
	t.Helper()
	must(t, h.WriteFile(rcvMode, []byte(mode+"\n"), 0o644))
}

// received are the receiver's records whose path starts with prefix.
func received(t *testing.T, h *testhost.Host, prefix string) []rcvRecord {
	t.Helper()
	b, err := h.ReadFile(rcvLog)
	must(t, err)
	var out []rcvRecord
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var r rcvRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("receiver log: %v: %s", err, l)
		}
		if strings.HasPrefix(r.Path, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// waitReceived waits until ok holds for the records under prefix.
func waitReceived(t *testing.T, h *testhost.Host, prefix, what string, ok func([]rcvRecord) bool) []rcvRecord {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		rs := received(t, h, prefix)
		if ok(rs) {
			return rs
		}
		if time.Now().After(deadline) {
			var lines []string
			for _, r := range rs {
				lines = append(lines, fmt.Sprintf("%s %s %d %s %.200s", r.Method, r.Path, r.Code, r.Verdict, r.Body))
			}
			t.Fatalf("timed out waiting for %s; %s got:\n%s", what, prefix, strings.Join(lines, "\n"))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// event is the part of a notification the tests read.
type event struct {
	Version int
	ID      string
	Event   string
	Host    string
	Source  struct{ Kind, Text, Repo, Commit, Trigger string }
	Run     string
	Summary string
	Plan    *struct{ Create, Change, Drift, Actions int }
	Dur     float64 `json:"durationSeconds"`
	Error   string
	Stage   string
	Failing []struct {
		Unit, Reason string
		Log          []string
	}
	Rollback *struct {
		Run, Generation string
		Passed          bool
	}
	Drift        []struct{ Unit, Kind, Effect string }
	Findings     []struct{ Source, Path, Rule, Message string }
	FindingCount int
}

// invalidSpecsNamed: the gitea case pushed a spec without an image (and
// with an unknown field, a warning). /status, the page, the forge's
// commit status and the notification name the error: the file by its
// path in the repository, the JSON path, the rule and the message (issue
// 54). The warning is not why, and is not listed.
func invalidSpecsNamed(t *testing.T, w *whHost, st whStatus, ev event, statuses []rcvRecord, commit, host string) {
	t.Helper()
	file := w.specDir + "/web.json"
	const path, rule, msg = "[0].unit.Container", "image-required", "[Container] Image is required"
	named := file + ": " + path + ": " + msg
	if f := st.Last.Findings; len(f) != 1 || st.Last.FindingCount != 1 || f[0].Source != file || f[0].Path != path || f[0].Rule != rule || f[0].Message != msg {
		t.Errorf("/status findings %+v (count %d); want %s (%s)", f, st.Last.FindingCount, named, rule)
	}
	page := html.UnescapeString(w.MustRun(t, "curl -sSf "+whURL+"/"))
	if !strings.Contains(page, named) {
		t.Errorf("the status page does not name %q", named)
	}
	_, bodies := statusStates(t, statuses, commit)
	if d := bodies[len(bodies)-1]["description"]; d != forge.ClipDescription("invalid specs on "+host+": "+named) {
		t.Errorf("the forge's description %q; want it to name %q", d, named)
	}
	if f := ev.Findings; len(f) != 1 || ev.FindingCount != 1 || f[0].Source != file || f[0].Path != path || f[0].Rule != rule || f[0].Message != msg {
		t.Errorf("the notification's findings %+v (count %d)", f, ev.FindingCount)
	}
	t.Logf("invalid specs named: %s", named)
}

// hookEvents are the signed webhook's events (for commit, when not ""),
// each one's HMAC checked with the configured secret.
func hookEvents(t *testing.T, rs []rcvRecord, secret, commit string) []event {
	t.Helper()
	var out []event
	for _, r := range rs {
		var ev event
		if err := json.Unmarshal([]byte(r.Body), &ev); err != nil {
			t.Fatalf("webhook body: %v: %s", err, r.Body)
		}
		if commit != "" && ev.Source.Commit != commit {
			continue
		}
		if got, want := r.Header.Get("X-Syslet-Signature-256"), "sha256="+whSign(secret, []byte(r.Body)); got != want {
			t.Errorf("event %s: X-Syslet-Signature-256 %q does not verify with the configured secret (want %q)", ev.ID, got, want)
		}
		if r.Header.Get("X-Syslet-Event") != ev.Event || r.Header.Get("X-Syslet-Delivery") != ev.ID || ev.Version != 1 {
			t.Errorf("event headers %v for %s %s", r.Header, ev.Event, ev.ID)
		}
		out = append(out, ev)
	}
	return out
}

func kinds(evs []event) string {
	var k []string
	for _, e := range evs {
		k = append(k, e.Event)
	}
	return strings.Join(k, " ")
}

// statusStates are the states set on commit, in order, and the bodies.
func statusStates(t *testing.T, rs []rcvRecord, commit string) ([]string, []map[string]string) {
	t.Helper()
	var states []string
	var bodies []map[string]string
	for _, r := range rs {
		if !strings.HasSuffix(r.Path, "/statuses/"+commit) {
			continue
		}
		if r.Code != 201 || r.Verdict != "ok" {
			t.Errorf("the forge refused %s %s: %d %s", r.Method, r.Path, r.Code, r.Verdict)
		}
		var b map[string]string
		must(t, json.Unmarshal([]byte(r.Body), &b))
		states = append(states, b["state"])
		bodies = append(bodies, b)
	}
	return states, bodies
}

// writeNotifyConfig is webhookd's configuration with every notification
// target and the commit status on forge (its API under the receiver).
func (w *whHost) writeNotifyConfig(forge, api, rollback string, extra ...string) {
	w.t.Helper()
	targets := fmt.Sprintf(`notify:
  - {name: hook, type: webhook, url: %[1]s/hook, secretFile: %[2]s, timeout: 1s, attempts: 2}
  - {name: slack, type: slack, url: %[1]s/slack/services/T000/B000/XXXX, timeout: 1s, attempts: 2}
  - {name: mattermost, type: mattermost, url: %[1]s/mattermost/hooks/xxx, timeout: 1s, attempts: 2}
  - {name: ntfy, type: ntfy, url: %[1]s/ntfy/syslet-alerts, tokenFile: %[3]s, timeout: 1s, attempts: 2}
  - {name: mail, type: smtp, url: "smtp://127.0.0.1:2525", from: syslet@testhost.example, to: [ops@example.org], timeout: 1s, attempts: 2}
`, rcvURL, hookSecret, ntfyToken)
	status := fmt.Sprintf(`    status: {forge: %s, api: %q, repo: ops/infra, tokenFile: %s, targetURL: "https://dash.example/{hostname}/{commit}", timeout: 1s, attempts: 2}`,
		forge, api, rcvToken)
	cfg := fmt.Sprintf(`listen: 127.0.0.1:9090
rollback: %s
%srepos:
  - name: infra
    url: ssh://root@127.0.0.1/srv/git/infra.git
    branch: main
    path: hosts/{hostname}
    sshKey: /etc/syslet/deploy_ed25519
    knownHosts: /etc/syslet/known_hosts
    secretFile: %s
%s
%s
`, rollback, targets, whSecret, status, strings.Join(extra, "\n"))
	must(w.t, w.WriteFile(whConfig, []byte(cfg), 0o644))
	w.MustRun(w.t, "webhookd --check --config "+whConfig+" && systemctl restart webhookd.service")
}

// TestNotificationsAndCommitStatus: for each forge, a good and a failing
// webhook deploy give the right sequence of commit statuses (through the
// forge's documented API) and notifications (the signed webhook's HMAC
// verifying with the configured secret; Slack, Mattermost, ntfy and mail
// alike); with the receiver hanging or down, the deploy's duration and
// result are those of a deploy with it up, and the failures are counted;
// no secret value, token or webhook secret shows in any request or in the
// journal.
func TestNotificationsAndCommitStatus(t *testing.T) {
	t.Parallel()
	w := startWebhookd(t)
	c := startReceiver(t, w.Host)
	host := strings.TrimSpace(w.MustRun(t, "hostname"))

	// A secret the deploys carry, so that a leak of its value can be seen.
	recipient := strings.TrimSpace(w.MustRun(t, "syslet host-key"))
	secretValue := randomValue("db-password")
	must(t, w.WriteFile(whWork+"/"+w.specDir+"/secret.json", secretSpec(t, "db", sopsEncryptFor(t, "password: "+secretValue+"\n", recipient)), 0o644))

	image := 1
	good := func(forge string) string {
		t.Helper()
		image = image%5 + 1
		w.writeSpec(fmt.Sprintf("localhost:5000/web:v%d", image), forge+"-good", "")
		commit := w.commit("good for " + forge)
		if code, reply := w.push(whDelivery{forge: forge, ref: "refs/heads/main", after: commit}); code != 202 {
			t.Fatalf("push: %d %s", code, reply)
		}
		st := w.waitStatus("good commit applied", func(s whStatus) bool { return s.LastApplied == commit })
		if st.Last.Result != "success" {
			t.Fatalf("good commit: %+v", st.Last)
		}
		return commit
	}
	crashing := buildBrokenImage(t, w.Host, "web:exits", "echo web-cannot-start; exit 3")

	for _, tc := range []struct {
		forge, api, rollback string
		fail                 func() // makes the failing commit's content
		result, final        string // the failing attempt's result, the forge's word for failure
		events               string // the failing commit's notifications
	}{
		{"github", rcvURL + "/github", "auto", func() { w.writeSpec(crashing, "crash", "") }, "rolled-back", "failure", "started rolled-back"},
		{"gitea", rcvURL + "/gitea", "auto", func() {
			must(t, w.WriteFile(whWork+"/"+w.specDir+"/web.json", []byte(`{"apiVersion":"v1","type":"container","name":"web","bogus":1}`), 0o644))
		}, "failed", "failure", "failed"},
		{"forgejo", rcvURL + "/gitea", "never", func() { w.writeSpec(crashing, "crash-kept", "") }, "failed", "failure", "started failed"},
		{"gitlab", rcvURL + "/gitlab", "auto", func() { w.MustRun(t, "cd "+whWork+" && git rm -rq "+w.specDir) }, "failed", "failed", "failed"},
	} {
		t.Run(tc.forge, func(t *testing.T) {
			w.t = t
			w.writeNotifyConfig(tc.forge, tc.api, tc.rollback)
			ok := good(tc.forge)
			tc.fail()
			bad := w.commit("failing for " + tc.forge)
			if code, reply := w.push(whDelivery{forge: tc.forge, ref: "refs/heads/main", after: bad}); code != 202 {
				t.Fatalf("push: %d %s", code, reply)
			}
			st := w.waitStatus("the failing commit done", func(s whStatus) bool { return s.Last != nil && s.Last.Commit == bad && s.State == "idle" })
			t.Logf("failing commit: result %s, stage %s, error %q, failing %v", st.Last.Result, st.Last.Stage, st.Last.Error, st.Last.FailingUnits)
			if st.Last.Result != tc.result {
				t.Fatalf("failing commit: %+v", st.Last)
			}

			// The commit statuses, as the forge took them.
			apiPath := strings.TrimPrefix(tc.api, rcvURL)
			rs := waitReceived(t, w.Host, apiPath+"/", "4 statuses", func(rs []rcvRecord) bool {
				s1, _ := statusStates(t, rs, ok)
				s2, _ := statusStates(t, rs, bad)
				return len(s1) >= 2 && len(s2) >= 2
			})
			for _, x := range []struct{ commit, want string }{{ok, "pending success"}, {bad, "pending " + tc.final}} {
				states, bodies := statusStates(t, rs, x.commit)
				if strings.Join(states, " ") != x.want {
					t.Errorf("%s: states %v, want %s", short(x.commit), states, x.want)
				}
				nameField := "context"
				if tc.forge == "gitlab" {
					nameField = "name"
				}
				for _, b := range bodies {
					if b[nameField] != "syslet/"+host || b["target_url"] != "https://dash.example/"+host+"/"+x.commit || b["description"] == "" || len(b["description"]) > 140 {
						t.Errorf("%s: status %v", short(x.commit), b)
					}
				}
				t.Logf("%s %s: %v; last description %q", tc.forge, short(x.commit), states, bodies[len(bodies)-1]["description"])
			}
			for _, r := range rs {
				want := map[string]string{"github": "/github/repos/ops/infra/statuses/", "gitea": "/gitea/repos/ops/infra/statuses/",
					"forgejo": "/gitea/repos/ops/infra/statuses/", "gitlab": "/gitlab/projects/ops%2Finfra/statuses/"}[tc.forge]
				if !strings.HasPrefix(r.Path, want) {
					t.Errorf("status path %s, want %s…", r.Path, want)
				}
			}

			// The notifications of both deploys, signed.
			hooks := waitReceived(t, w.Host, "/hook", "the failing commit's events", func(rs []rcvRecord) bool {
				evs := hookEvents(t, rs, c.hookSecret, bad)
				return len(evs) >= len(strings.Fields(tc.events))
			})
			okEvents, badEvents := hookEvents(t, hooks, c.hookSecret, ok), hookEvents(t, hooks, c.hookSecret, bad)
			if kinds(okEvents) != "started succeeded" || kinds(badEvents) != tc.events {
				t.Fatalf("events: good %q, failing %q (want %q)", kinds(okEvents), kinds(badEvents), tc.events)
			}
			for _, ev := range append(okEvents, badEvents...) {
				if ev.Host != host || ev.Source.Kind != "git" || ev.Source.Repo != "infra" || !strings.Contains(ev.Source.Trigger, tc.forge+" push") {
					t.Errorf("event %s: host %q source %+v", ev.Event, ev.Host, ev.Source)
				}
			}
			if s := okEvents[1]; s.Run == "" || s.Run != okEvents[0].Run || s.Dur <= 0 || s.Summary == "" || s.Plan == nil || s.Plan.Actions == 0 {
				t.Errorf("succeeded event %+v", s)
			}
			last := badEvents[len(badEvents)-1]
			t.Logf("%s failing event: %s stage %q error %q failing %+v", tc.forge, last.Event, last.Stage, last.Error, last.Failing)
			switch tc.forge {
			case "github":
				if last.Rollback == nil || !last.Rollback.Passed || len(last.Failing) != 1 || last.Failing[0].Unit != "web.service" ||
					!strings.Contains(strings.Join(last.Failing[0].Log, "\n"), "web-cannot-start") {
					t.Errorf("rolled-back event %+v", last)
				}
			case "forgejo":
				if len(last.Failing) != 1 || last.Failing[0].Unit != "web.service" || last.Stage != "health-gate" {
					t.Errorf("failed event %+v", last)
				}
			case "gitea":
				if !strings.Contains(last.Error, "invalid") || last.Stage != "apply" {
					t.Errorf("failed event %+v", last)
				}
				invalidSpecsNamed(t, w, st, last, rs, bad, host)
			case "gitlab":
				if !strings.Contains(last.Error, "has no directory") || last.Stage != "checkout" {
					t.Errorf("failed event %+v", last)
				}
			}
		})
	}
	w.t = t
	// Back to a deployable state: the host directory with web again.
	w.writeSpec("localhost:5000/web:v1", "back", "")

	t.Run("EveryFormat", func(t *testing.T) {
		w.t = t
		hooks := len(received(t, w.Host, "/hook"))
		for _, p := range []string{"/slack/", "/mattermost/", "/ntfy/", "smtp"} {
			rs := waitReceived(t, w.Host, p, fmt.Sprintf("%d events", hooks), func(rs []rcvRecord) bool { return len(rs) >= hooks })
			if len(rs) != hooks {
				t.Errorf("%s got %d events, the webhook %d", p, len(rs), hooks)
			}
			r := rs[len(rs)-1]
			switch p {
			case "/slack/", "/mattermost/":
				var m map[string]string
				bold := map[string]string{"/slack/": "*", "/mattermost/": "**"}[p]
				if err := json.Unmarshal([]byte(r.Body), &m); err != nil || len(m) != 1 || !strings.HasPrefix(m["text"], bold+"syslet "+host+": deploy ") {
					t.Errorf("%s body %q (%v)", p, r.Body, err)
				}
			case "/ntfy/":
				if r.Path != "/ntfy/syslet-alerts" || !strings.HasPrefix(r.Header.Get("Title"), host+": deploy ") || r.Header.Get("Authorization") != "Bearer "+c.ntfyToken || r.Header.Get("Tags") == "" {
					t.Errorf("ntfy request %s %v", r.Path, r.Header)
				}
			case "smtp":
				if !strings.Contains(r.Body, "Subject: [syslet] "+host+": deploy ") || !strings.Contains(r.Body, `"event": "`) ||
					!strings.Contains(strings.Join(r.Header["Envelope"], ""), "RCPT TO:<ops@example.org>") {
					t.Errorf("mail %q %v", r.Body, r.Header)
				}
			}
			t.Logf("%s: %d requests; the last: %.200q", p, len(rs), r.Body)
		}
	})

	t.Run("ReceiverHangingOrDown", func(t *testing.T) {
		w.t = t
		w.writeNotifyConfig("github", rcvURL+"/github", "auto")
		failed := func() (float64, float64) {
			return w.metric(`webhookd_notifications_total{result="failed",target="hook"}`), w.metric(`webhookd_commit_statuses_total{repo="infra",result="failed"}`)
		}
		deploy := func(mode string) (float64, string) {
			t.Helper()
			c := good("github")
			st := w.status()
			t.Logf("receiver %s: deploy of %s: %s in %.2fs", mode, short(c), st.Last.Result, st.Last.DurationSeconds)
			return st.Last.DurationSeconds, st.Last.Result
		}
		setMode(t, w.Host, "ok")
		base, _ := deploy("up")
		base2, _ := deploy("up")
		if base2 > base {
			base = base2
		}
		n0, s0 := failed()
		for _, mode := range []string{"hang", "down"} {
			if mode == "down" {
				setMode(t, w.Host, "ok")
				w.MustRun(t, "systemctl stop receiver")
			} else {
				setMode(t, w.Host, mode)
			}
			// That the deliveries cost the deploy nothing is shown without a
			// clock by webhookd's TestHangingReceiverHoldsNoDeploy; here the
			// two durations are only logged (a loaded CI machine moved them
			// by seconds either way).
			d, result := deploy(mode)
			if result != "success" {
				t.Errorf("receiver %s: the deploy %s in %.2fs; with it up: success in %.2fs", mode, result, d, base)
			}
			// Each of the deploy's two events and two statuses fails
			// (2 attempts of 1s each, 1s apart), and is counted.
			deadline := time.Now().Add(time.Minute)
			for {
				n, s := failed()
				if n >= n0+2 && s >= s0+2 {
					t.Logf("receiver %s: failed notifications %v → %v, failed statuses %v → %v", mode, n0, n, s0, s)
					n0, s0 = n, s
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("receiver %s: failures not counted: notifications %v → %v, statuses %v → %v", mode, n0, n, s0, s)
				}
				time.Sleep(500 * time.Millisecond)
			}
		}
		log, err := w.JournalSince("", "-u", "webhookd.service", "-o", "cat", "--grep", "notification not delivered|commit status not set")
		must(t, err)
		if !strings.Contains(log, `"target":"hook"`) || !strings.Contains(log, "connection refused") || !strings.Contains(log, "no answer within 1s") {
			t.Errorf("webhookd's log of the failures:\n%s", log)
		}
		t.Logf("logged failures, e.g.: %.300s", log)
		startReceiverUnit(t, w.Host)
	})

	t.Run("NoSecretAnywhere", func(t *testing.T) {
		w.t = t
		// A token reaches its own service in its auth header, and nothing
		// else: not a body, a path, another header, another service.
		authHeader := map[string]string{"/github/": "Authorization", "/gitea/": "Authorization", "/gitlab/": "Private-Token", "/ntfy/": "Authorization"}
		ownToken := map[string]string{"/github/": c.forgeToken, "/gitea/": c.forgeToken, "/gitlab/": c.forgeToken, "/ntfy/": c.ntfyToken}
		var all strings.Builder
		rs := received(t, w.Host, "")
		for _, r := range rs {
			var text strings.Builder
			text.WriteString(r.Path + "\n" + r.Body + "\n")
			for k, vs := range r.Header {
				for _, v := range vs {
					prefix := ""
					for p := range authHeader {
						if strings.HasPrefix(r.Path, p) {
							prefix = p
						}
					}
					if prefix != "" && http.CanonicalHeaderKey(k) == http.CanonicalHeaderKey(authHeader[prefix]) {
						if !strings.Contains(v, ownToken[prefix]) {
							t.Errorf("%s: %s does not carry its token", r.Path, k)
						}
						continue
					}
					text.WriteString(k + ": " + v + "\n")
				}
			}
			all.WriteString(text.String())
		}
		journal, err := w.JournalSince("", "-o", "verbose")
		must(t, err)
		st := w.MustRun(t, "curl -sSf "+whURL+"/status")
		for _, v := range append(c.all(), w.secret, secretValue) {
			for where, text := range map[string]string{"the recorded notifications and status calls": all.String(), "the journal": journal, "/status": st} {
				if strings.Contains(text, v) {
					t.Errorf("%s hold the credential or secret value %.12s…", where, v)
				}
			}
		}
		t.Logf("searched %d recorded requests (%d bytes of paths, bodies and headers but each service's own auth header), the whole journal (%d bytes, -o verbose) and /status for %d credentials and secret values: none found",
			len(rs), all.Len(), len(journal), len(c.all())+2)
	})
}

// TestDriftCheckInWebhookd: a hand edit on the host shows in the drift
// gauge and /status within one interval, one drift notification is sent
// however often it is found again, the host is not changed, and after
// `syslet --force` puts the file back the gauge returns to zero.
func TestDriftCheckInWebhookd(t *testing.T) {
	t.Parallel()
	w := startWebhookd(t)
	c := startReceiver(t, w.Host)
	const interval = 5 * time.Second
	w.writeNotifyConfig("github", rcvURL+"/github", "auto", fmt.Sprintf("    drift: {interval: %s}", interval))
	w.writeSpec("localhost:5000/web:v2", "drift", "")
	applied := w.deploy("web v2")
	// The metrics first: webhookd sets a check's /status before its gauges,
	// so a gauge read first is never newer than the /status read after it.
	driftOf := func() (units, checked float64, doc string) {
		units = w.metric(`webhookd_drift_units{kind="drift",repo="infra"}`)
		checked = w.metric(`webhookd_drift_last_check_timestamp_seconds{repo="infra"}`)
		return units, checked, w.MustRun(t, "curl -sSf "+whURL+"/status")
	}
	// A clean host first: every check finds nothing.
	deadline := time.Now().Add(3 * interval)
	for {
		if _, checked, _ := driftOf(); checked > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no drift check within three intervals")
		}
		time.Sleep(500 * time.Millisecond)
	}
	if u, _, doc := driftOf(); u != 0 || !strings.Contains(doc, `"drift": 0`) {
		t.Fatalf("a clean host shows drift: %v\n%s", u, doc)
	}

	// The hand edit.
	unitFile := "/etc/containers/systemd/web.container"
	inv := prop(t, w.Host, "web.service", "InvocationID")
	w.MustRun(t, `sed -i '/^\[Container\]/a Environment=HAND=edited' `+unitFile)
	edited := w.MustRun(t, "sha256sum "+unitFile)
	t0 := time.Now()
	var doc string
	for {
		var u float64
		if u, _, doc = driftOf(); u == 1 {
			break
		}
		if time.Since(t0) > interval+30*time.Second {
			t.Fatalf("the edit is not shown after %s:\n%s", time.Since(t0), doc)
		}
		time.Sleep(250 * time.Millisecond)
	}
	seen := time.Since(t0)
	t.Logf("the hand edit shows in webhookd_drift_units after %s (interval %s)", seen.Round(100*time.Millisecond), interval)
	if seen > interval+5*time.Second {
		t.Errorf("the drift took %s to show, more than one interval (%s) and a plan", seen, interval)
	}
	var sd struct {
		Repos []struct {
			Drift struct {
				CheckedAt, Since, Commit string
				Drift, Change, Start     int
				Units                    []struct{ Unit, Kind string }
			}
			DriftIntervalSeconds float64
		}
	}
	must(t, json.Unmarshal([]byte(doc), &sd))
	d := sd.Repos[0].Drift
	if d.Drift != 1 || d.Commit != applied || d.Since == "" || len(d.Units) != 1 || d.Units[0].Unit != "web.container" || d.Units[0].Kind != "drift" || sd.Repos[0].DriftIntervalSeconds != interval.Seconds() {
		t.Errorf("/status drift %+v", sd.Repos[0])
	}
	t.Logf("/status drift: %+v", d)

	// Three more intervals: still one drift notification, the host as edited.
	time.Sleep(3 * interval)
	drifts := func() []event {
		var out []event
		for _, ev := range hookEvents(t, received(t, w.Host, "/hook"), c.hookSecret, "") {
			if ev.Event == "drift" {
				out = append(out, ev)
			}
		}
		return out
	}
	evs := drifts()
	if len(evs) != 1 || evs[0].Source.Commit != applied || evs[0].Source.Trigger != "drift check" || len(evs[0].Drift) != 1 || evs[0].Drift[0].Unit != "web.container" {
		t.Fatalf("drift notifications: %+v", evs)
	}
	t.Logf("drift notification: %q %+v", evs[0].Summary, evs[0].Drift)
	if checks := w.metric(`webhookd_drift_checks_total{repo="infra",result="ok"}`); checks < 4 {
		t.Errorf("only %v checks ran", checks)
	}
	if now := w.MustRun(t, "sha256sum "+unitFile); now != edited {
		t.Errorf("a check changed the edited unit")
	}
	if now := prop(t, w.Host, "web.service", "InvocationID"); now != inv {
		t.Errorf("a check restarted web.service")
	}
	if n := w.deploys(); n != 1 {
		t.Errorf("%v deploys: a check deployed", n)
	}

	// syslet --force puts it back; the gauge returns to zero.
	r := w.Run("syslet --force " + filepath.Join(whCheckout, w.specDir))
	if !r.OK() {
		t.Fatalf("syslet --force:\n%s", r)
	}
	if strings.Contains(w.MustRun(t, "cat "+unitFile), "HAND=edited") {
		t.Fatal("--force left the edit")
	}
	t0 = time.Now()
	for {
		if u, _, doc := driftOf(); u == 0 && strings.Contains(doc, `"drift": 0`) {
			break
		}
		if time.Since(t0) > interval+30*time.Second {
			t.Fatalf("the gauge stays up after --force")
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("after syslet --force the gauge is 0 again within %s", time.Since(t0).Round(100*time.Millisecond))
	if len(drifts()) != 1 {
		t.Errorf("another drift notification after --force")
	}
}

// TestDriftCheckTimer: the syslet mode for hosts without webhookd: the
// shipped timer unit's service runs `syslet --diff --detailed-exitcode
// --metrics-file …` against the stored specs; the textfile it writes is
// read by Prometheus's text parser; a hand edit shows in it, is told once
// to syslet.json's target, changes nothing, and is gone after `syslet
// --force`. syslet's own applies notify the same target.
func TestDriftCheckTimer(t *testing.T) {
	t.Parallel()
	h := startWithSyslet(t)
	c := startReceiver(t, h)
	root, err := testhost.ModuleRoot()
	must(t, err)
	for _, u := range []string{"syslet-drift.service", "syslet-drift.timer"} {
		must(t, h.CopyIn(filepath.Join(root, release.Packaging, u), "/etc/systemd/system/"+u))
	}
	// The unit runs the packaged binary's path.
	h.MustRun(t, "ln -sf /usr/local/bin/syslet /usr/bin/syslet")
	h.MustRun(t, "systemctl enable --now podman.socket && mkdir -p /var/lib/prometheus/node-exporter && systemctl daemon-reload")
	// --man=no: the guest has no man-db to look syslet(1) up with (the
	// package ships the page).
	if out := h.MustRun(t, "systemd-analyze verify --man=no /etc/systemd/system/syslet-drift.service /etc/systemd/system/syslet-drift.timer 2>&1"); strings.TrimSpace(out) != "" {
		t.Errorf("systemd-analyze verify: %s", out)
	}
	must(t, h.WriteFile("/etc/syslet/syslet.json", []byte(fmt.Sprintf(`{"notify": [{"name": "hook", "type": "webhook", "url": %q, "secretFile": %q, "timeout": "1s", "attempts": 2}]}`,
		rcvURL+"/hook", hookSecret)), 0o600))
	if _, err := h.MakeImage("web:v1", "marker-1"); err != nil {
		t.Fatal(err)
	}
	spec := `{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":"localhost:5000/web:v1","RunInit":"true","Exec":"sleep infinity"}}}`
	if r := h.RunInput(strings.NewReader(spec), "syslet --stdin"); !r.OK() {
		t.Fatalf("apply:\n%s", r)
	}
	evs := hookEvents(t, waitReceived(t, h, "/hook", "the apply's events", func(rs []rcvRecord) bool { return len(rs) >= 2 }), c.hookSecret, "")
	if kinds(evs) != "started succeeded" || evs[1].Source.Kind != "stdin" || evs[1].Run == "" || evs[1].Dur <= 0 {
		t.Fatalf("the apply's events: %+v", evs)
	}

	check := func() (map[string]float64, float64) {
		t.Helper()
		h.MustRun(t, "systemctl start syslet-drift.service")
		if res := prop(t, h, "syslet-drift.service", "Result"); res != "success" {
			log, _ := h.JournalSince("", "-u", "syslet-drift.service", "-o", "cat")
			t.Fatalf("syslet-drift.service: %s\n%s", res, log)
		}
		b, err := h.ReadFile(textfile)
		must(t, err)
		if mode := strings.TrimSpace(h.MustRun(t, "stat -c %a "+textfile)); mode != "644" {
			t.Errorf("textfile mode %s", mode)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := p.TextToMetricFamilies(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("Prometheus's text parser: %v\n%s", err, b)
		}
		byKind := map[string]float64{}
		for _, m := range mfs["syslet_drift_units"].GetMetric() {
			byKind[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
		if mfs["syslet_drift_check_success"].GetMetric()[0].GetGauge().GetValue() != 1 || len(byKind) != len(drift.Kinds) {
			t.Fatalf("textfile:\n%s", b)
		}
		at := mfs["syslet_drift_last_check_timestamp_seconds"].GetMetric()[0].GetGauge().GetValue()
		t.Logf("textfile parsed by expfmt: %d families; syslet_drift_units %v; last check %.3f", len(mfs), byKind, at)
		return byKind, at
	}
	if k, _ := check(); k["drift"] != 0 || k["change"] != 0 || k["start"] != 0 {
		t.Fatalf("a converged host: %v", k)
	}

	unitFile := "/etc/containers/systemd/web.container"
	inv := prop(t, h, "web.service", "InvocationID")
	h.MustRun(t, `sed -i '/^\[Container\]/a Environment=HAND=edited' `+unitFile)
	edited := h.MustRun(t, "sha256sum "+unitFile)
	var last float64
	for i := range 3 {
		k, at := check()
		if k["drift"] != 1 || at <= last {
			t.Fatalf("check %d after the edit: %v at %v", i, k, at)
		}
		last = at
	}
	drifts := 0
	for _, ev := range hookEvents(t, received(t, h, "/hook"), c.hookSecret, "") {
		if ev.Event == "drift" {
			drifts++
			if len(ev.Drift) != 1 || ev.Drift[0].Unit != "web.container" || ev.Drift[0].Kind != "drift" || ev.Source.Kind != "stored" {
				t.Errorf("drift event %+v", ev)
			}
		}
	}
	if drifts != 1 {
		t.Errorf("%d drift notifications for three checks, want 1", drifts)
	}
	if h.MustRun(t, "sha256sum "+unitFile) != edited || prop(t, h, "web.service", "InvocationID") != inv {
		t.Errorf("a check changed the host")
	}
	if r := h.Run("syslet --force"); !r.OK() {
		t.Fatalf("syslet --force:\n%s", r)
	}
	if k, _ := check(); k["drift"] != 0 {
		t.Fatalf("after --force: %v", k)
	}
	b, err := h.ReadFile(textfile)
	must(t, err)
	if !strings.Contains(string(b), `syslet_notifications_total{result="sent",target="hook"}`) {
		t.Errorf("textfile lacks the notification counters:\n%s", b)
	}
	t.Logf("the textfile after syslet --force:\n%s", b)
	// The timer itself is installed and scheduled.
	h.MustRun(t, "systemctl enable --now syslet-drift.timer")
	if next := prop(t, h, "syslet-drift.timer", "NextElapseUSecMonotonic"); next == "" || next == "0" {
		t.Errorf("the timer is not scheduled: %q", next)
	}
	rb, _ := h.ReadFile(rcvLog)
	journal, _ := h.JournalSince("", "-o", "verbose")
	for _, v := range c.all() {
		if strings.Contains(string(rb), v) || strings.Contains(journal, v) {
			t.Errorf("a credential shows in the requests or the journal")
		}
	}
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
