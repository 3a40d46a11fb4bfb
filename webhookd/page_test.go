package webhookd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/probe"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/webhookd/config"
	"github.com/syslet/syslet/webhookd/queue"
)

// What a hostile or careless repository, host or plan file could put on
// the page; none of it may appear as markup, and the planted values not
// at all.
const (
	plantedSecret  = "planted-secret-value-6b1f"
	plantedPrivate = "planted-private-content-93ac"
	hostileUnit    = `<script>alert(1)</script>.service`
)

// journalDeployer writes each deploy into a real run journal under root,
// as the apply does, and answers like the real Deployer: the first
// deploy applies, any later one fails its health gate and rolls back.
type journalDeployer struct {
	root string
	mu   sync.Mutex
	n    int
}

func (j *journalDeployer) Check(context.Context, queue.DeployRequest) (queue.CheckReport, error) {
	// A running container that answers its probe with markup of its own.
	failing := host.Probed{Unit: "api.container", Service: "api.service", Container: "api", Probe: "GET :8080/up → 200-399 every 1s", Name: "GET :8080/up",
		Answer: &probe.Answer{Kind: probe.KindHTTP, Status: 503, Body: "<b>db unreachable</b>", Via: "127.0.0.1:8080 (published)", Took: 2500 * time.Microsecond}}
	units := []notify.DriftUnit{{Unit: hostileUnit, Kind: notify.DriftEdited, Effect: "drift"}, {Unit: "db.service", Kind: notify.DriftStart, Effect: "start"},
		{Unit: "api.container", Kind: notify.DriftProbe, Reasons: []string{failing.Reason()}}}
	probes := []host.Probed{failing,
		{Unit: "web.container", Service: "web.service", Container: "web", Probe: "TCP :5432 → connects every 1s", Name: "TCP :5432",
			Answer: &probe.Answer{Kind: probe.KindTCP, OK: true, Via: "10.89.0.4:5432 (network app)", Took: 1200 * time.Microsecond}},
		{Unit: "db.container", Service: "db.service", Container: "db", Probe: "exec pg_isready → exits 0 every 1s", Name: "exec pg_isready"}}
	return queue.CheckReport{Units: units, Probes: probes}, nil
}

func (j *journalDeployer) Deploy(_ context.Context, req queue.DeployRequest) (queue.DeployReport, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.n++
	at := time.Now().UTC()
	result, gateErr := runlog.ResultOK, ""
	if j.n > 1 {
		result, gateErr = runlog.ResultFailed, hostileUnit+": restarted 5 time(s) by Restart="
	}
	id, err := runlog.Open(j.root).Record(
		runlog.Record{Type: runlog.TypeIntent, Time: at, Source: req.Source},
		runlog.Record{Time: at.Add(time.Second), Result: result, Error: gateErr})
	if err != nil {
		return queue.DeployReport{}, err
	}
	// The plan as --diff prints it hides both; the page must not undo
	// that, and masks what a tampered plan file would show.
	plan := fmt.Sprintf("Units:\n  ~ %s  [restart: unit changed]\n      ~ [Container] Environment: API_TOKEN=%s\nSecrets:\n  + db-password = (secret)  new\nConfig files:\n  + /etc/containers/config/web/key.pem (0600)  [file, web]\n      (private file: content hidden)\n", hostileUnit, plantedSecret)
	if j.n == 1 {
		return queue.DeployReport{RunID: id, Summary: "1 to restart", Verdict: verdict.Applied, Plan: plan}, nil
	}
	return queue.DeployReport{RunID: id, Summary: "rolled back", Verdict: verdict.RolledBack, RolledBackTo: "gen-1", Plan: plan,
		Failing: []string{gateErr}}, errors.New("rolled back: " + hostileUnit + " failed the health gate")
}

func newPageFixture(t *testing.T, listen, token string) (*fixture, string) {
	t.Helper()
	root := t.TempDir()
	f := &fixture{t: t, remote: newRemote(t), state: t.TempDir()}
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	must(t, os.WriteFile(secret, []byte(testSecret+"\n"), 0o600))
	extra := ""
	if token != "" {
		tf := filepath.Join(dir, "page-token")
		must(t, os.WriteFile(tf, []byte(token+"\n"), 0o600))
		extra = "pageTokenFile: " + tf
	}
	cfg, err := config.Parse("test.yaml", []byte(fmt.Sprintf(`
listen: %q
stateDir: %s
%s
repos:
  - name: infra
    url: %s
    path: hosts/{hostname}
    secretFile: %s
    drift: {interval: 1h}
`, listen, f.state, extra, f.remote.dir, secret)), "web1")
	must(t, err)
	f.d, err = New(cfg, Options{Deployer: &journalDeployer{root: root}, Log: zerolog.New(zerolog.NewTestWriter(t)), Root: root})
	must(t, err)
	return f, root
}

func (f *fixture) get(path string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	f.d.router.ServeHTTP(rec, req)
	return rec
}

// TestPageShowsDeploysEscapedAndRedacted deploys a good commit, then one
// that rolls back, checks drift, and reads both pages.
func TestPageShowsDeploysEscapedAndRedacted(t *testing.T) {
	f, _ := newPageFixture(t, "127.0.0.1:9090", "")
	f.d.cfg.Repos[0].DriftInterval = 50 * time.Millisecond // checks between the deploys
	f.start()
	good := f.remote.commit(`{"n":1}`)
	f.push(GitHub, "refs/heads/main", good)
	f.wait("the good deploy", func(st queue.RepoStatus) bool { return st.LastApplied == good })
	bad := f.remote.commit(`{"n":2}`)
	f.push(GitHub, "refs/heads/main", bad)
	st := f.wait("the rolled-back deploy", func(st queue.RepoStatus) bool { return st.Last != nil && st.Last.Commit == bad })
	f.wait("a drift check of the applied commit", func(st queue.RepoStatus) bool {
		return st.Drift != nil && st.Drift.Commit == good && st.Drift.Error == "" && len(st.Drift.Units) == 3
	})

	rec := f.get("/")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET / = %d: %s", rec.Code, rec.Body)
	}
	checkPageHeaders(t, rec)
	page := rec.Body.String()
	for _, want := range []string{
		good[:12], bad[:12], "rolled back", "applied",
		"&lt;script&gt;alert(1)&lt;/script&gt;.service: restarted 5 time(s)", // the failing unit, escaped
		`<span class="drift-count">3</span> unit(s) differ`, "1 edited by hand", "1 not running", "1 probe failing",
		// The gate's last verdict: the bad commit rolled back to the
		// good one, which passed the gate again.
		`<span class="warn">rolled back</span>: the deploy of `,
		"and was rolled back; the host runs ",
		"counted since webhookd started at ",       // the delivery counters' start
		"accepted <b>2</b>",                        // webhook deliveries
		"<code>db.service</code> not running</li>", // the drifting units, in words
		// The failing probe's answer, escaped, in the drift list and the
		// probe table beside the passing one and the one not asked.
		"<code>api.container</code> probe failing: probe GET :8080/up answered 503 &#34;&lt;b&gt;db unreachable&lt;/b&gt;&#34;</li>",
		`<td><code>api.service</code></td><td class="wide">GET :8080/up → 200-399 every 1s</td><td><span class="bad">answered 503 &#34;&lt;b&gt;db unreachable&lt;/b&gt;&#34;</span></td><td>2.5ms</td><td class="wide">127.0.0.1:8080 (published)</td>`,
		`<td><code>web.service</code></td><td class="wide">TCP :5432 → connects every 1s</td><td><span class="ok">connected</span></td><td>1.2ms</td><td class="wide">10.89.0.4:5432 (network app)</td>`,
		`<span class="mute">not asked: the service is not up</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	checkNothingLeaks(t, page)

	// /metrics: the probes as the drift check asked them, and the count
	// of units whose probe fails.
	metrics := f.get("/metrics").Body.String()
	for _, want := range []string{
		`webhookd_drift_units{kind="probe",repo="infra"} 1`,
		`webhookd_probe_success{repo="infra",service="api.service"} 0`,
		`webhookd_probe_success{repo="infra",service="web.service"} 1`,
		`webhookd_probe_duration_seconds{repo="infra",service="api.service"} 0.0025`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, metrics)
		}
	}
	if strings.Contains(metrics, `service="db.service"`) {
		t.Errorf("/metrics has a probe series for db.service, which was not asked")
	}

	// The rolled-back deploy's own page: the journal's run and the plan.
	rec = f.get("/runs/" + st.Last.RunID)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /runs/%s = %d: %s", st.Last.RunID, rec.Code, rec.Body)
	}
	checkPageHeaders(t, rec)
	run := rec.Body.String()
	for _, want := range []string{"syslet history " + st.Last.RunID, "git infra@" + bad, "db-password = (secret)", "(private file: content hidden)", "API_TOKEN=" + "(hidden", "rolled back"} {
		if !strings.Contains(run, want) {
			t.Errorf("the deploy's page lacks %q:\n%s", want, run)
		}
	}
	checkNothingLeaks(t, run)

	for _, p := range []string{"/runs/../../etc/passwd", "/runs/20260101T000000Z-abcdef", "/runs/run-1"} {
		if rec := f.get(p); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, rec.Code)
		}
	}
}

func checkPageHeaders(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	h := rec.Header()
	for k, want := range map[string]string{
		"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
		"Content-Type":            "text/html; charset=utf-8",
		"X-Content-Type-Options":  "nosniff",
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "no-referrer",
	} {
		if got := h.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

// refRE finds every URL the page refers to.
var refRE = regexp.MustCompile(`(?i)(?:src|href|action|content)\s*=\s*"([^"]*)"`)

// checkNothingLeaks: no markup from the host or repository, no planted
// value, no script, and nothing referred to on another origin.
func checkNothingLeaks(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"<script", plantedSecret, plantedPrivate, testSecret, "javascript:", "url(", "@import"} {
		if strings.Contains(strings.ToLower(page), strings.ToLower(bad)) {
			t.Errorf("the page holds %q", bad)
		}
	}
	for _, m := range refRE.FindAllStringSubmatch(page, -1) {
		u := m[1]
		if strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") || !strings.Contains(u, ":") && !strings.Contains(u, "/") {
			continue // the page's own origin, or a meta value (width=…, 30)
		}
		if strings.HasPrefix(u, "width=") {
			continue
		}
		t.Errorf("the page refers to another origin: %q", u)
	}
}

func TestPageStylesheetHasNoExternalReference(t *testing.T) {
	f, _ := newPageFixture(t, "127.0.0.1:9090", "")
	rec := f.get("/static/page.css")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/css; charset=utf-8" {
		t.Fatalf("GET /static/page.css = %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, bad := range []string{"url(", "@import", "http:", "https:"} {
		if strings.Contains(rec.Body.String(), bad) {
			t.Errorf("the stylesheet holds %q", bad)
		}
	}
}

func TestPageNeedsATokenBeyondLoopback(t *testing.T) {
	const token = "page-token-0123456789abcdef"
	open, _ := newPageFixture(t, "0.0.0.0:9090", "")
	if rec := open.get("/"); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "pageTokenFile") {
		t.Errorf("beyond loopback without a token: GET / = %d %s, want 403 naming pageTokenFile", rec.Code, rec.Body)
	}
	if rec := open.get("/status"); rec.Code != http.StatusOK {
		t.Errorf("GET /status = %d: the JSON status is not the page's to gate", rec.Code)
	}
	f, _ := newPageFixture(t, "0.0.0.0:9090", token)
	for _, c := range []struct {
		path   string
		header []string
		want   int
	}{
		{"/", nil, http.StatusUnauthorized},
		{"/?token=wrong", nil, http.StatusUnauthorized},
		{"/", []string{"Authorization", "Bearer wrong"}, http.StatusUnauthorized},
		{"/?token=" + token, nil, http.StatusOK},
		{"/", []string{"Authorization", "Bearer " + token}, http.StatusOK},
		{"/runs/20260101T000000Z-abcdef", nil, http.StatusUnauthorized},
	} {
		rec := f.get(c.path, c.header...)
		if rec.Code != c.want {
			t.Errorf("GET %s %v = %d, want %d", c.path, c.header, rec.Code, c.want)
		}
		if c.want == http.StatusOK && !strings.Contains(rec.Body.String(), `href="/status?token=`+token+`"`) {
			t.Errorf("GET %s: links do not carry the token", c.path)
		}
	}
}

func TestPageIsReadOnly(t *testing.T) {
	f, _ := newPageFixture(t, "127.0.0.1:9090", "")
	for _, p := range []string{"/", "/runs/20260101T000000Z-abcdef", "/static/page.css"} {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
			rec := httptest.NewRecorder()
			f.d.router.ServeHTTP(rec, httptest.NewRequest(m, p, nil))
			if rec.Code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s = %d, want 405", m, p, rec.Code)
			}
		}
	}
}
