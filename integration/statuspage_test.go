//go:build integration

package integration

// Issue 42's acceptance: webhookd's status page, read by a real headless
// browser (Debian's chromium, on the machine running the tests) from a
// webhookd on a test host after a good deploy, a rolled-back deploy and a
// hand edit the drift check finds. The browser's DOM must show the
// applied commit, the rolled-back attempt with its failing unit and the
// drift count; a secret's value and a 0600 config file's content planted
// in the deploys must be absent; and the browser's network log must hold
// no request to another origin.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

// forwardToGuest listens on this machine's loopback and joins each
// connection to addr on the guest's loopback (through its sshd); it
// returns the local address.
func forwardToGuest(t *testing.T, h *testhost.Host, addr string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close()
				out, err := h.Dial(addr)
				if err != nil {
					return
				}
				defer out.Close()
				done := make(chan struct{}, 2)
				go func() { copyConn(out, in); done <- struct{}{} }()
				go func() { copyConn(in, out); done <- struct{}{} }()
				<-done
				<-done
			}()
		}
	}()
	return ln.Addr().String()
}

func copyConn(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	} else {
		dst.Close()
	}
}

// chromiumFlags keep the browser from talking to anyone but the page:
// no component updates, no sync, no metrics; root needs --no-sandbox.
var chromiumFlags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions", "--disable-domain-reliability",
	"--metrics-recording-only", "--no-default-browser-check", "--hide-scrollbars"}

// chromium runs the browser on url with extra flags and returns stdout.
func chromium(t *testing.T, profile string, extra ...string) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed on this machine (apt install chromium): %v", err)
	}
	args := append(append([]string{"--user-data-dir=" + profile}, chromiumFlags...), extra...)
	cmd := exec.Command(bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(extra, " "), err, stderr.String())
	}
	return string(out)
}

// webSpec is the web container with a 0600 config file holding private.
func (w *whHost) webSpec(image, rev, private string) {
	w.t.Helper()
	spec := map[string]any{"apiVersion": "v1", "type": "container", "name": "web",
		"unit":        map[string]any{"Container": map[string]any{"Image": image, "RunInit": "true", "Exec": "sleep infinity", "Environment": map[string]string{"REV": rev}}},
		"configFiles": []map[string]string{{"mountPath": "/etc/web/token", "content": private + "\n", "mode": "0600"}},
	}
	b, _ := json.MarshalIndent(spec, "", "  ")
	must(w.t, w.WriteFile(whWork+"/"+w.specDir+"/web.json", b, 0o644))
}

func TestStatusPageInBrowser(t *testing.T) {
	t.Parallel()
	w := startWebhookd(t)
	const interval = 5 * time.Second
	w.writeConfigLines("ssh://root@127.0.0.1/srv/git/infra.git", "    secretFile: "+whSecret, fmt.Sprintf("    drift: {interval: %s}", interval))
	w.MustRun(t, "systemctl restart webhookd.service")
	if r := w.Eventually("curl -sSf "+whURL+"/healthz", 30*time.Second); !r.OK() {
		t.Fatalf("webhookd does not answer after its restart:\n%s", r)
	}

	// What must never reach the page: a secret's value and the content of
	// a 0600 config file, both in every deploy.
	recipient := strings.TrimSpace(w.MustRun(t, "syslet host-key"))
	secretValue := randomValue("db-password")
	privateValue := randomValue("private-token")
	must(t, w.WriteFile(whWork+"/"+w.specDir+"/secret.json", secretSpec(t, "db", sopsEncryptFor(t, "password: "+secretValue+"\n", recipient)), 0o644))

	w.webSpec("localhost:5000/web:v2", "good", privateValue)
	good := w.deploy("web v2 with a private file")

	crashing := buildBrokenImage(t, w.Host, "web:exits", "echo web-cannot-start; exit 3")
	w.webSpec(crashing, "crash", privateValue+"-next")
	bad := w.commit("web that cannot start")
	if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: bad}); code != 202 {
		t.Fatalf("push: %d %s", code, reply)
	}
	st := w.waitStatus("the rollback", func(s whStatus) bool { return s.Last != nil && s.Last.Commit == bad })
	if st.Last.Result != "rolled-back" || st.LastApplied != good {
		t.Fatalf("the crashing commit: %+v (applied %s)", st.Last, st.LastApplied)
	}

	// The hand edit, found by the next drift check.
	w.MustRun(t, `sed -i '/^\[Container\]/a Environment=HAND=edited' /etc/containers/systemd/web.container`)
	deadline := time.Now().Add(interval + time.Minute)
	for w.metric(`webhookd_drift_units{kind="drift",repo="infra"}`) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the drift check did not find the hand edit:\n%s", w.MustRun(t, "curl -sS "+whURL+"/status"))
		}
		time.Sleep(500 * time.Millisecond)
	}

	origin := "http://" + forwardToGuest(t, w.Host, "127.0.0.1:9090")
	dir := t.TempDir()
	netlog := filepath.Join(dir, "netlog.json")
	dom := chromium(t, filepath.Join(dir, "profile-dom"), "--log-net-log="+netlog, "--net-log-capture-mode=Everything", "--dump-dom", origin+"/")
	t.Logf("the page's DOM, as chromium built it: %d bytes", len(dom))

	// A commit shows as its short id, linked to the forge's page of it
	// when the remote names a host (here ssh://root@127.0.0.1/…).
	commit := func(c string) string {
		return `(?:<a href="[^"]*" title="` + c + `"><code>` + c[:12] + `</code></a>|<code title="` + c + `">` + c[:12] + `</code>)`
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`id="applied-infra">` + commit(good)),
		regexp.MustCompile(`<td>` + commit(bad) + `</td>\s*<td><span class="outcome bad">rolled back</span><ul class="failing"><li>web\.service: [^<]+</li>`),
		regexp.MustCompile(`<td>` + commit(good) + `</td>\s*<td><span class="outcome ok">applied</span>`),
		regexp.MustCompile(`<span class="drift-count">1</span> unit\(s\) differ`),
		// The gate: the crashing commit rolled back, the host healthy on good.
		regexp.MustCompile(`id="gate-infra"><span class="warn">rolled back</span>: the deploy of ` + commit(bad) + ` failed the gate <small>at [^<]+</small> and was rolled back; the host runs ` + commit(good) + ` again, healthy`),
	} {
		if !want.MatchString(dom) {
			t.Errorf("the DOM lacks %s", want)
		}
	}

	// Each deploy's own page, with its plan.
	runs := regexp.MustCompile(`href="(/runs/[0-9TZa-f-]+)"`).FindAllStringSubmatch(dom, -1)
	if len(runs) < 2 {
		t.Fatalf("the overview links %d deploy pages, want 2:\n%s", len(runs), dom)
	}
	pages := []string{dom}
	for _, r := range runs {
		page := chromium(t, filepath.Join(dir, "profile-run"), "--dump-dom", origin+r[1])
		if !strings.Contains(page, `<pre id="plan">`) || !strings.Contains(page, "syslet history ") {
			t.Errorf("%s shows no plan or run:\n%s", r[1], page)
		}
		pages = append(pages, page)
	}
	for i, page := range pages {
		for _, secret := range []string{secretValue, privateValue, w.secret} {
			if strings.Contains(page, secret) {
				t.Errorf("page %d holds a planted value %q", i, secret)
			}
		}
	}
	if !strings.Contains(strings.Join(pages[1:], ""), "db-password = (secret)") {
		t.Errorf("no deploy page shows the secret as (secret)")
	}

	// Every request the page made went to its own origin. The browser's
	// own background traffic (component updates, time, accounts) is in
	// the log too; the page's requests are those it initiated or that
	// load it: its origin as initiator or as the top frame's site.
	page, others := pageRequests(t, netlog, origin)
	for _, u := range page {
		if !strings.HasPrefix(u, origin+"/") {
			t.Errorf("the page requested %s: not its origin %s", u, origin)
		}
	}
	if !slices.Contains(page, origin+"/") || !slices.Contains(page, origin+"/static/page.css") {
		t.Errorf("the network log lacks the page or its stylesheet: %v", page)
	}
	t.Logf("the page's requests: %v; the browser's own, not the page's: %d", page, len(others))

	// The screenshot the docs show (a phone-width one too).
	shot := filepath.Join(dir, "status-page.png")
	chromium(t, filepath.Join(dir, "profile-shot"), "--window-size=1000,900", "--screenshot="+shot, origin+"/")
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10<<10 {
		t.Fatalf("no screenshot: %v", err)
	}
	if dst := os.Getenv("SYSLET_STATUS_PAGE_SCREENSHOT"); dst != "" {
		b, err := os.ReadFile(shot)
		must(t, err)
		must(t, os.WriteFile(dst, b, 0o644))
		t.Logf("screenshot saved to %s", dst)
	}
}

// pageRequests reads chromium's net log: the URLs of the requests that
// belong to the page at origin (it initiated them, or its site is the
// top frame's), and the others (the browser's own).
func pageRequests(t *testing.T, netlog, origin string) (page, others []string) {
	t.Helper()
	raw, err := os.ReadFile(netlog)
	must(t, err)
	var nl struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int `json:"type"`
			Params struct {
				URL       string `json:"url"`
				Initiator string `json:"initiator"`
				NIK       string `json:"network_isolation_key"`
			} `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(raw, &nl); err != nil {
		t.Fatalf("the net log: %v", err)
	}
	start, ok := nl.Constants.LogEventTypes["URL_REQUEST_START_JOB"]
	if !ok {
		t.Fatal("the net log names no URL_REQUEST_START_JOB event type")
	}
	u, err := url.Parse(origin)
	must(t, err)
	site := u.Scheme + "://" + u.Hostname()
	for _, e := range nl.Events {
		if e.Type != start {
			continue
		}
		if p := e.Params; p.Initiator == origin || strings.HasPrefix(p.NIK, site+" ") {
			page = append(page, p.URL)
		} else {
			others = append(others, p.URL)
		}
	}
	return page, others
}
