//go:build integration

package integration

// Issue 43: webhookd against a real forge. Gitea (integration/gitea, built
// once per version into the test host cache) runs in the guest as a plain
// user, configured headless, and is driven only as its users drive it: its
// API, `git push`, and — for what Gitea 1.27 offers nowhere else, the
// record of a webhook's deliveries and their "redeliver" — its web pages,
// signed in. Everything webhookd is said to do is read back from Gitea: the
// delivery's response code as Gitea recorded it, and the commit status
// through Gitea's API.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

const (
	giteaURL  = "http://127.0.0.1:3000"
	giteaUser = "ops"
	giteaRepo = giteaUser + "/infra"
	giteaJar  = "/root/gitea.cookies" // the web session of giteaUser
	giteaSSH  = "ssh://gitea@127.0.0.1:2222/" + giteaRepo + ".git"
)

// giteaDir is Gitea built by integration/gitea/build.sh (once per version:
// a no-op when cached, or when .ci/run built it beforehand): the directory
// holding the program and its templates and options.
var giteaDir = sync.OnceValues(func() (string, error) {
	root, err := testhost.ModuleRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("bash", root+"/integration/gitea/build.sh")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building Gitea (integration/gitea/build.sh): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
})

// giteaHost is a guest running Gitea as the user gitea.
type giteaHost struct {
	*testhost.Host
	t        *testing.T
	password string // giteaUser's
	token    string // giteaUser's API token, every scope
	n        int    // request counter, for file names
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// startGitea installs Gitea in h, sets it up headless (migrate, an admin
// user with an API token), starts it as a service of the user gitea and
// waits until its API answers.
func startGitea(t *testing.T, h *testhost.Host) *giteaHost {
	t.Helper()
	dir, err := giteaDir()
	must(t, err)
	g := &giteaHost{Host: h, t: t, password: randomHex(12)}
	t0 := time.Now()
	must(t, h.CopyIn(dir, "/opt/gitea"))
	copied := time.Since(t0)
	// Headless: the install is locked (no set-up page), webhooks may go to
	// loopback (webhookd), SSH is Gitea's own server on 2222, the web
	// pages and data files come from /opt/gitea (they are not embedded).
	ini := fmt.Sprintf(`APP_NAME = syslet test forge
RUN_USER = gitea
RUN_MODE = prod
WORK_PATH = /var/lib/gitea

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = 3000
DOMAIN = 127.0.0.1
ROOT_URL = %s/
START_SSH_SERVER = true
SSH_DOMAIN = 127.0.0.1
SSH_LISTEN_HOST = 127.0.0.1
SSH_PORT = 2222
SSH_LISTEN_PORT = 2222
STATIC_ROOT_PATH = /opt/gitea
APP_DATA_PATH = /var/lib/gitea/data
OFFLINE_MODE = true
LFS_START_SERVER = false

[database]
DB_TYPE = sqlite3
PATH = /var/lib/gitea/data/gitea.db

[repository]
ROOT = /var/lib/gitea/repositories
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = %s
INTERNAL_TOKEN = %s

[oauth2]
ENABLED = false

[service]
DISABLE_REGISTRATION = true

[webhook]
ALLOWED_HOST_LIST = loopback
PAGING_NUM = 50

[mailer]
ENABLED = false

[cron.update_checker]
ENABLED = false

[log]
MODE = console
LEVEL = Info
`, giteaURL, randomHex(32), randomHex(32))
	h.MustRun(t, "useradd --system --home-dir /var/lib/gitea --create-home --shell /bin/sh gitea && install -d -o gitea -g gitea /etc/gitea /var/lib/gitea/data")
	must(t, h.WriteFile("/etc/gitea/app.ini", []byte(ini), 0o600))
	h.MustRun(t, "chown gitea:gitea /etc/gitea/app.ini")
	asGitea := "runuser -u gitea -- env HOME=/var/lib/gitea /opt/gitea/gitea --config /etc/gitea/app.ini "
	t1 := time.Now()
	h.MustRun(t, asGitea+"migrate")
	migrated := time.Since(t1)
	out := h.MustRun(t, asGitea+"admin user create --admin --username "+giteaUser+" --email ops@example.org --password "+g.password+
		" --must-change-password=false --access-token --access-token-name tests --access-token-scopes all")
	m := regexp.MustCompile(`Access token was successfully created\.\.\. (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("gitea admin user create printed no token:\n%s", out)
	}
	g.token = m[1]
	h.MustRun(t, "systemd-run -q --unit=gitea -p User=gitea -p WorkingDirectory=/var/lib/gitea --setenv=HOME=/var/lib/gitea "+
		"/opt/gitea/gitea --config /etc/gitea/app.ini web")
	if r := h.Eventually("curl -sf "+giteaURL+"/api/healthz >/dev/null && test -s /var/lib/gitea/data/ssh/gitea.ed25519.pub", time.Minute); !r.OK() {
		log, _ := h.JournalSince("", "-u", "gitea.service", "-n", "40", "-o", "cat")
		t.Fatalf("Gitea did not come up: %s\n%s", r, log)
	}
	var v struct{ Version string }
	must(t, json.Unmarshal(g.api("GET", "/version", nil, 200), &v))
	t.Logf("Gitea %s runs as the user gitea (%s), set up in %s (copied in %s, migrated in %s)", v.Version,
		strings.TrimSpace(h.MustRun(t, "ps -o user= -C gitea | sort -u | tr '\\n' ' '")), time.Since(t0).Round(100*time.Millisecond),
		copied.Round(100*time.Millisecond), migrated.Round(100*time.Millisecond))
	return g
}

// api calls Gitea's API with giteaUser's token and returns the reply's
// body; a code other than want fails the test.
func (g *giteaHost) api(method, path string, body any, want int) []byte {
	g.t.Helper()
	return g.call([]string{"-H", "Authorization: token " + g.token}, method, path, body, want)
}

// apiBasic is api signed in with giteaUser's password: Gitea makes tokens
// only for a password login.
func (g *giteaHost) apiBasic(method, path string, body any, want int) []byte {
	g.t.Helper()
	return g.call([]string{"-u", giteaUser + ":" + g.password}, method, path, body, want)
}

func (g *giteaHost) call(auth []string, method, path string, body any, want int) []byte {
	g.t.Helper()
	g.n++
	out := fmt.Sprintf("/tmp/gitea-api-%d.out", g.n)
	args := append([]string{"curl", "-sS", "-X", method, "-o", out, "-w", "%{http_code}", "-H", "Accept: application/json"}, auth...)
	if body != nil {
		b, err := json.Marshal(body)
		must(g.t, err)
		in := fmt.Sprintf("/tmp/gitea-api-%d.in", g.n)
		must(g.t, g.WriteFile(in, b, 0o600))
		args = append(args, "-H", "Content-Type: application/json", "--data-binary", "@"+in)
	}
	args = append(args, giteaURL+"/api/v1"+path)
	code := strings.TrimSpace(g.MustRun(g.t, testhost.QuoteArgs(args...)))
	reply, err := g.ReadFile(out)
	must(g.t, err)
	if code != strconv.Itoa(want) {
		g.t.Fatalf("Gitea's API: %s %s: %s (want %d)\n%s", method, path, code, want, reply)
	}
	return reply
}

// giteaStatus is Gitea's combined status of a commit, as its API gives it.
type giteaStatus struct {
	State    string `json:"state"`
	SHA      string `json:"sha"`
	Statuses []struct {
		Status      string `json:"status"`
		Context     string `json:"context"`
		Description string `json:"description"`
		TargetURL   string `json:"target_url"`
	} `json:"statuses"`
}

// String is the answer's fields this test reads, as JSON.
func (s giteaStatus) String() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// commitStatus asks Gitea's API for commit's combined status; it returns
// the answer and its raw JSON.
func (g *giteaHost) commitStatus(commit string) (giteaStatus, string) {
	g.t.Helper()
	raw := g.api("GET", "/repos/"+giteaRepo+"/commits/"+commit+"/status", nil, 200)
	var s giteaStatus
	must(g.t, json.Unmarshal(raw, &s))
	return s, strings.TrimSpace(string(raw))
}

// waitCommitState polls Gitea's API until commit's combined state is state.
func (g *giteaHost) waitCommitState(commit, state string) (giteaStatus, string) {
	g.t.Helper()
	deadline := time.Now().Add(whWait)
	for {
		s, raw := g.commitStatus(commit)
		if s.State == state {
			return s, raw
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("Gitea's status of %s is still %q, want %q:\n%s", commit, s.State, state, raw)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// signIn opens a web session of giteaUser (cookies in giteaJar).
func (g *giteaHost) signIn() {
	g.t.Helper()
	code := g.MustRun(g.t, "curl -sS -c "+giteaJar+" -b "+giteaJar+" -o /dev/null -w '%{http_code}' "+
		"--data-urlencode user_name="+giteaUser+" --data-urlencode password="+g.password+" "+giteaURL+"/user/login")
	if strings.TrimSpace(code) != "303" {
		g.t.Fatalf("signing in to Gitea's web pages: %s, want 303 (a redirect after the login)", code)
	}
}

// giteaDelivery is one delivery of a webhook as Gitea records it (the
// webhook's page, "Recent Deliveries").
type giteaDelivery struct {
	UUID   string // X-Gitea-Delivery
	Event  string // X-Gitea-Event
	After  string // the payload's "after"
	Status int    // the response code Gitea recorded; 0 while undelivered
	Reply  string // the response body Gitea recorded
}

var (
	giteaItem      = regexp.MustCompile(`class="info tw-hidden tw-mt-2" id="info-\d+"`)
	giteaUUID      = regexp.MustCompile(`<strong>X-Gitea-Delivery:</strong> ([0-9a-f-]+)`)
	giteaEvent     = regexp.MustCompile(`<strong>X-Gitea-Event:</strong> (\S+)`)
	giteaCode      = regexp.MustCompile(`<span class="ui (?:green|red) label">(\d+)</span>`)
	giteaPre       = regexp.MustCompile(`(?s)<pre class="webhook-info">(.*?)</pre>`)
	giteaAfterJSON = regexp.MustCompile(`"after":\s*"([0-9a-f]+)"`)
)

// deliveries reads the webhook's recent deliveries, newest first, from
// its page in Gitea's web UI (Gitea 1.27's API has none).
func (g *giteaHost) deliveries(hook int) []giteaDelivery {
	g.t.Helper()
	page := g.MustRun(g.t, fmt.Sprintf("curl -sSf -b %s %s/%s/settings/hooks/%d", giteaJar, giteaURL, giteaRepo, hook))
	starts := giteaItem.FindAllStringIndex(page, -1)
	if len(starts) == 0 && !strings.Contains(page, "settings/hooks/"+strconv.Itoa(hook)) {
		g.t.Fatalf("Gitea's webhook page is not the page of webhook %d (signed out?):\n%.2000s", hook, page)
	}
	var out []giteaDelivery
	for i, s := range starts {
		end := len(page)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		seg := page[s[0]:end]
		var d giteaDelivery
		if m := giteaUUID.FindStringSubmatch(seg); m != nil {
			d.UUID = m[1]
		}
		if m := giteaEvent.FindStringSubmatch(seg); m != nil {
			d.Event = m[1]
		}
		if m := giteaCode.FindStringSubmatch(seg); m != nil {
			d.Status, _ = strconv.Atoi(m[1])
		}
		pres := giteaPre.FindAllStringSubmatch(seg, -1)
		if len(pres) >= 2 {
			if m := giteaAfterJSON.FindStringSubmatch(html.UnescapeString(pres[1][1])); m != nil {
				d.After = m[1]
			}
		}
		if len(pres) >= 4 {
			d.Reply = strings.TrimSpace(html.UnescapeString(pres[3][1]))
			var b bytes.Buffer
			if json.Compact(&b, []byte(d.Reply)) == nil {
				d.Reply = b.String()
			}
		}
		out = append(out, d)
	}
	return out
}

// waitDelivery waits until Gitea has recorded the response to a delivery
// that ok picks, and returns it.
func (g *giteaHost) waitDelivery(hook int, what string, ok func(giteaDelivery) bool) giteaDelivery {
	g.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ds := g.deliveries(hook)
		for _, d := range ds {
			if d.Status != 0 && ok(d) {
				return d
			}
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("Gitea recorded no answer to %s; its deliveries: %+v", what, ds)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// redeliver presses "Replay" on a recorded delivery, as its web page does.
func (g *giteaHost) redeliver(hook int, uuid string) {
	g.t.Helper()
	code := g.MustRun(g.t, fmt.Sprintf("curl -sS -b %s -o /dev/null -w '%%{http_code}' -X POST %s/%s/settings/hooks/%d/replay/%s",
		giteaJar, giteaURL, giteaRepo, hook, uuid))
	if strings.TrimSpace(code) != "303" {
		g.t.Fatalf("Gitea's replay of delivery %s: %s, want 303 (back to the webhook's page)", uuid, code)
	}
}

// TestGiteaForge: a push to a repository on Gitea reaches webhookd through
// Gitea's own webhook; webhookd fetches over Gitea's SSH with a read-only
// deploy key, deploys, and posts the commit status, which Gitea's API
// shows as success (failure, with the reason, for a commit rolled back);
// Gitea's "test delivery" is accepted, its redelivery of a delivery
// refused as a replay, and a wrong secret configured in Gitea answered 401
// with nothing fetched. Gitea's API answers and recorded response codes
// are printed in the log.
func TestGiteaForge(t *testing.T) {
	t.Parallel()
	w, deployKey := installWebhookd(t)
	g := startGitea(t, w.Host)

	// The repository, webhookd's read-only deploy key, a token for the
	// commit statuses alone, and the webhook with webhookd's secret.
	g.api("POST", "/user/repos", map[string]any{"name": "infra", "private": true, "default_branch": "main"}, 201)
	g.api("POST", "/repos/"+giteaRepo+"/keys", map[string]any{"title": "webhookd on " + w.specDir, "key": deployKey, "read_only": true}, 201)
	var tok struct {
		SHA1 string `json:"sha1"`
	}
	must(t, json.Unmarshal(g.apiBasic("POST", "/users/"+giteaUser+"/tokens", map[string]any{"name": "webhookd-status", "scopes": []string{"write:repository"}}, 201), &tok))
	must(t, w.WriteFile(rcvToken, []byte(tok.SHA1+"\n"), 0o600))
	hookConfig := func(secret string) map[string]any {
		return map[string]any{"url": whURL + "/hooks/infra", "content_type": "json", "secret": secret}
	}
	var hook struct{ ID int }
	must(t, json.Unmarshal(g.api("POST", "/repos/"+giteaRepo+"/hooks", map[string]any{
		"type": "gitea", "config": hookConfig(w.secret), "events": []string{"push"}, "active": true, "branch_filter": "main",
	}, 201), &hook))

	// webhookd fetches over Gitea's SSH server (its host key in
	// known_hosts) and posts statuses to Gitea's API.
	w.MustRun(t, `echo "[127.0.0.1]:2222 $(cut -d' ' -f1,2 /var/lib/gitea/data/ssh/gitea.ed25519.pub)" > /etc/syslet/known_hosts`)
	w.writeConfigLines(giteaSSH, "    secretFile: "+whSecret,
		fmt.Sprintf(`    status: {forge: gitea, api: %q, repo: %s, tokenFile: %s, timeout: 5s, attempts: 2}`, giteaURL+"/api/v1", giteaRepo, rcvToken))
	w.MustRun(t, "webhookd --check --config "+whConfig+" && systemctl daemon-reload && systemctl enable --now webhookd.service")

	// The operator's clone pushes to Gitea over HTTP.
	w.MustRun(t, "git init -q -b main "+whWork+" && git -C "+whWork+" remote add origin "+
		testhost.Quote(fmt.Sprintf("http://%s:%s@127.0.0.1:3000/%s.git", giteaUser, g.password, giteaRepo))+
		" && git -C "+whWork+" config user.email ops@example && git -C "+whWork+" config user.name ops && mkdir -p "+whWork+"/"+w.specDir)
	g.signIn()
	fetches := func() float64 { return w.metric(`webhookd_git_fetches_total{repo="infra",result="ok"}`) }

	var applied string       // the commit the host runs
	var firstDelivery string // the first push's delivery, for the replay
	t.Run("PushDeploysAndGiteaShowsSuccess", func(t *testing.T) {
		w.t, g.t = t, t
		w.writeSpec("localhost:5000/web:v1", "gitea-1", "")
		c := w.commit("web v1, pushed to Gitea")
		st := w.waitStatus("the pushed commit applied", func(s whStatus) bool { return s.LastApplied == c })
		if st.Last.Result != "success" || !strings.HasPrefix(st.Last.Trigger, "gitea push ") {
			t.Fatalf("webhookd's status after Gitea's delivery: %+v", *st.Last)
		}
		if img, marker, rev := w.running(); img != "localhost:5000/web:v1" || marker != "marker-1" || rev != "gitea-1" {
			t.Fatalf("web runs %s (%s, REV=%s), want web:v1 REV=gitea-1", img, marker, rev)
		}
		if h := w.head(); h != c {
			t.Fatalf("webhookd's checkout is at %s, want %s", h, c)
		}
		s, _ := g.waitCommitState(c, "success")
		t.Logf("Gitea's API, GET /api/v1/repos/%s/commits/%s/status: %s", giteaRepo, c, s)
		if len(s.Statuses) != 1 || s.Statuses[0].Context == "" {
			t.Errorf("want one status context on %s, got %+v", c, s.Statuses)
		}
		d := g.waitDelivery(hook.ID, "the push of "+c, func(d giteaDelivery) bool { return d.After == c })
		t.Logf("Gitea's record of its delivery %s (%s of %s): response %d %s", d.UUID, d.Event, c, d.Status, d.Reply)
		if d.Status != 202 || d.Event != "push" || !strings.Contains(d.Reply, `"queued"`) {
			t.Fatalf("Gitea recorded %+v, want 202 queued", d)
		}
		if !strings.Contains(st.Last.Trigger, d.UUID) {
			t.Errorf("webhookd's trigger %q does not name Gitea's delivery %s", st.Last.Trigger, d.UUID)
		}
		applied, firstDelivery = c, d.UUID
	})

	t.Run("RolledBackCommitIsAFailureOnGitea", func(t *testing.T) {
		w.t, g.t = t, t
		bad := buildBrokenImage(t, w.Host, "web:exits", "echo web-cannot-start; exit 3")
		w.writeSpec(bad, "bad", "")
		c := w.commit("web: an image that exits")
		st := w.waitStatus("the bad commit rolled back", func(s whStatus) bool { return s.Last != nil && s.Last.Commit == c && s.State == "idle" })
		if st.Last.Result != "rolled-back" || st.LastApplied != applied {
			t.Fatalf("webhookd's status after the bad commit: %+v %+v", st, *st.Last)
		}
		if _, marker, _ := w.running(); marker != "marker-1" {
			t.Errorf("web runs %s after the rollback, want marker-1 again", marker)
		}
		s, _ := g.waitCommitState(c, "failure")
		t.Logf("Gitea's API, GET /api/v1/repos/%s/commits/%s/status: %s", giteaRepo, c, s)
		if len(s.Statuses) != 1 || !strings.Contains(s.Statuses[0].Description, "web.service") || !strings.Contains(strings.ToLower(s.Statuses[0].Description), "rolled back") {
			t.Errorf("Gitea's failure status must give the reason (the unit, the rollback): %+v", s.Statuses)
		}
		d := g.waitDelivery(hook.ID, "the push of "+c, func(d giteaDelivery) bool { return d.After == c })
		t.Logf("Gitea's record of its delivery %s: response %d", d.UUID, d.Status)
		if d.Status != 202 {
			t.Errorf("Gitea recorded %d for the bad commit's delivery, want 202 (the deploy is judged later)", d.Status)
		}
		// Put the good spec back, so the branch's tip is the applied state.
		w.writeSpec("localhost:5000/web:v2", "gitea-2", "")
		c = w.commit("web v2")
		w.waitStatus("web v2 applied", func(s whStatus) bool { return s.LastApplied == c })
		g.waitCommitState(c, "success")
		applied = c
	})

	t.Run("InvalidSpecIsNamedOnGitea", func(t *testing.T) {
		w.t, g.t = t, t
		// A container without an image: the specs are invalid, and the
		// commit's status on Gitea names the file, the field and what is
		// wrong (issue 54), not only that something is.
		must(t, w.WriteFile(whWork+"/"+w.specDir+"/web.json", []byte(`{"apiVersion":"v1","type":"container","name":"web"}`), 0o644))
		c := w.commit("web: no image")
		st := w.waitStatus("the invalid commit done", func(s whStatus) bool { return s.Last != nil && s.Last.Commit == c && s.State == "idle" })
		if st.Last.Result != "failed" || st.LastApplied != applied {
			t.Fatalf("webhookd's status after the invalid commit: %+v %+v", st, *st.Last)
		}
		s, _ := g.waitCommitState(c, "failure")
		t.Logf("Gitea's API, GET /api/v1/repos/%s/commits/%s/status: %s", giteaRepo, c, s)
		named := w.specDir + "/web.json: [0].unit.Container: [Container] Image is required"
		if len(s.Statuses) != 1 || !strings.Contains(s.Statuses[0].Description, named) {
			t.Errorf("Gitea's failure status must name the error %q: %+v", named, s.Statuses)
		}
		// Put the good spec back, so the branch's tip is the applied state.
		w.writeSpec("localhost:5000/web:v2", "gitea-3", "")
		c = w.commit("web v2 again")
		w.waitStatus("web v2 applied again", func(s whStatus) bool { return s.LastApplied == c })
		g.waitCommitState(c, "success")
		applied = c
	})

	t.Run("GiteasTestDeliveryIsAccepted", func(t *testing.T) {
		w.t, g.t = t, t
		before := w.deploys()
		// Gitea's "Test Delivery": a push event for the branch's head.
		g.api("POST", fmt.Sprintf("/repos/%s/hooks/%d/tests", giteaRepo, hook.ID), nil, 204)
		d := g.waitDelivery(hook.ID, "the test delivery", func(d giteaDelivery) bool {
			return d.After == applied && d.UUID != firstDelivery && !strings.Contains(d.Reply, "replay")
		})
		t.Logf("Gitea's record of its test delivery %s: response %d %s", d.UUID, d.Status, d.Reply)
		if d.Status != 202 || !strings.Contains(d.Reply, `"queued"`) {
			t.Fatalf("Gitea recorded %+v for its test delivery, want 202 queued", d)
		}
		st := w.waitStatus("the test delivery's deploy", func(s whStatus) bool {
			return s.State == "idle" && s.Queued == "" && w.deploys() > before
		})
		if st.LastApplied != applied || st.Last.Result != "success" {
			t.Fatalf("after the test delivery: %+v %+v", st, *st.Last)
		}
	})

	t.Run("RedeliveryIsRefusedAsAReplay", func(t *testing.T) {
		w.t, g.t = t, t
		before, fetched := w.deploys(), fetches()
		g.redeliver(hook.ID, firstDelivery)
		d := g.waitDelivery(hook.ID, "the redelivery", func(d giteaDelivery) bool { return strings.Contains(d.Reply, "replay") })
		t.Logf("Gitea's record of its redelivery %s of %s: response %d %s", d.UUID, firstDelivery, d.Status, d.Reply)
		if d.Status != 409 || d.UUID == firstDelivery {
			t.Fatalf("Gitea recorded %+v for its redelivery, want 409 under a new delivery id", d)
		}
		if n := w.deploys(); n != before {
			t.Errorf("deploys went %v → %v after a refused redelivery", before, n)
		}
		if f := fetches(); f != fetched {
			t.Errorf("fetches went %v → %v after a refused redelivery", fetched, f)
		}
	})

	t.Run("WrongSecretInGiteaIsRefusedWithoutAFetch", func(t *testing.T) {
		w.t, g.t = t, t
		// Gitea's API does not change a webhook's secret: a second webhook
		// carries the wrong one while the first is switched off.
		active := func(id int, on bool) {
			g.api("PATCH", fmt.Sprintf("/repos/%s/hooks/%d", giteaRepo, id), map[string]any{"active": on, "events": []string{"push"}, "branch_filter": "main"}, 200)
		}
		var wrong struct{ ID int }
		must(t, json.Unmarshal(g.api("POST", "/repos/"+giteaRepo+"/hooks", map[string]any{
			"type": "gitea", "config": hookConfig("not-" + w.secret), "events": []string{"push"}, "active": true, "branch_filter": "main",
		}, 201), &wrong))
		active(hook.ID, false)
		fetched, unauthorized := fetches(), w.metric(`webhookd_deliveries_total{outcome="unauthorized",repo="infra"}`)
		w.writeSpec("localhost:5000/web:v3", "wrong-secret", "")
		c := w.commit("web v3, signed with the wrong secret")
		d := g.waitDelivery(wrong.ID, "the push of "+c, func(d giteaDelivery) bool { return d.After == c })
		t.Logf("Gitea's record of its delivery %s signed with a wrong secret: response %d %s", d.UUID, d.Status, d.Reply)
		if d.Status != 401 {
			t.Fatalf("Gitea recorded %+v, want 401", d)
		}
		time.Sleep(2 * time.Second) // room for a fetch that must not happen
		if f := fetches(); f != fetched {
			t.Errorf("fetches went %v → %v after a delivery with a wrong signature", fetched, f)
		}
		if n := w.metric(`webhookd_deliveries_total{outcome="unauthorized",repo="infra"}`); n != unauthorized+1 {
			t.Errorf("unauthorized deliveries went %v → %v, want one more", unauthorized, n)
		}
		if h := w.head(); h != applied {
			t.Errorf("webhookd's checkout moved to %s", h)
		}
		if s, raw := g.commitStatus(c); len(s.Statuses) != 0 {
			t.Errorf("a commit webhookd never received has statuses on Gitea:\n%s", raw)
		}
		// The right webhook again: Gitea's test delivery of the same head deploys it.
		g.api("DELETE", fmt.Sprintf("/repos/%s/hooks/%d", giteaRepo, wrong.ID), nil, 204)
		active(hook.ID, true)
		g.api("POST", fmt.Sprintf("/repos/%s/hooks/%d/tests", giteaRepo, hook.ID), nil, 204)
		w.waitStatus("the commit applied after the secret was put right", func(s whStatus) bool { return s.LastApplied == c })
		s, _ := g.waitCommitState(c, "success")
		t.Logf("Gitea's API once the right webhook delivered again: %s", s)
		if _, _, rev := w.running(); rev != "wrong-secret" {
			t.Errorf("web runs REV=%s", rev)
		}
	})
}
