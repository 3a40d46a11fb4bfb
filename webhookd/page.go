package webhookd

import (
	"bytes"
	"crypto/subtle"
	"embed"
	"html/template"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/syslet/syslet/pkg/runlog"
)

// The status page: GET / (every repository at a glance) and GET
// /runs/{run} (one deploy: its attempt, its run in the journal, its plan).
// Read-only: it serves GET only and offers no action. Plain HTML from
// html/template and one stylesheet, all embedded in the binary; the
// Content-Security-Policy allows that stylesheet and nothing else, so the
// page runs no script and loads nothing from another origin.

//go:embed page
var pageFS embed.FS

var pageTemplates = template.Must(template.ParseFS(pageFS, "page/layout.html", "page/index.html", "page/run.html"))

// pageCSS is the stylesheet, served at /static/page.css.
var pageCSS = func() []byte {
	b, err := pageFS.ReadFile("page/page.css")
	if err != nil {
		panic(err)
	}
	return b
}()

// PageCSP is the page's Content-Security-Policy: its own stylesheet, no
// script, no frame, no form, no other origin.
const PageCSP = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// pageRefresh is how often the overview reloads itself (a meta refresh:
// no script needed).
const pageRefresh = 30

type head struct {
	Title   string
	Refresh int
}

func (d *Daemon) pageRoutes(r chi.Router) {
	r.Get("/", d.overviewPage)
	r.Get("/runs/{run}", d.runPage)
	r.Get("/static/page.css", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Write(pageCSS)
	})
}

// pageAccess says whether r may see the page, and the token to carry on
// its links. With a page token configured, r must present it (?token= or
// "Authorization: Bearer"); without one, only a daemon listening on a
// loopback address serves the page (a reverse proxy in front does the
// auth then).
func (d *Daemon) pageAccess(w http.ResponseWriter, r *http.Request) (token string, ok bool) {
	want := d.cfg.PageToken.bytes()
	if len(want) == 0 {
		if loopbackListen(d.cfg.Listen) {
			return "", true
		}
		http.Error(w, "the status page is served beyond loopback only with a token: set pageTokenFile in webhookd's configuration, or listen on 127.0.0.1 behind a reverse proxy that authenticates", http.StatusForbidden)
		return "", false
	}
	got := r.URL.Query().Get("token")
	if h, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		got = h
	}
	if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="webhookd"`)
		http.Error(w, "the status page needs its token: open /?token=… (webhookd's pageTokenFile)", http.StatusUnauthorized)
		return "", false
	}
	return got, true
}

// loopbackListen reports whether listen (host:port) accepts connections
// from this host only.
func loopbackListen(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (d *Daemon) journalRuns() map[string]*runlog.RunInfo {
	runs, err := runlog.Open(d.root).Runs()
	if err != nil {
		d.log.Warn().Err(err).Msg("status page: reading the run journal")
	}
	byID := make(map[string]*runlog.RunInfo, len(runs))
	for _, r := range runs {
		byID[r.ID()] = r
	}
	return byID
}

func (d *Daemon) overviewPage(w http.ResponseWriter, r *http.Request) {
	token, ok := d.pageAccess(w, r)
	if !ok {
		return
	}
	runs := d.journalRuns()
	v := overview{Host: d.cfg.Hostname, Now: time.Now().UTC().Format(stamp), Refresh: pageRefresh, Token: token}
	for _, wk := range d.order {
		v.Repos = append(v.Repos, repoPage(wk.cfg, wk.status(), runs))
	}
	if mfs, err := d.m.reg.Gather(); err == nil {
		v.Deliveries = counters(mfs, "webhookd_deliveries_total", "outcome")
		v.Notifications = counters(mfs, "webhookd_notifications_total", "result")
		v.Statuses = counters(mfs, "webhookd_commit_statuses_total", "result")
	}
	d.renderPage(w, "index.html", struct {
		Head head
		overview
	}{head{Title: "webhookd · " + d.cfg.Hostname, Refresh: pageRefresh}, v})
}

func (d *Daemon) runPage(w http.ResponseWriter, r *http.Request) {
	token, ok := d.pageAccess(w, r)
	if !ok {
		return
	}
	id := chi.URLParam(r, "run")
	if !runIDRE.MatchString(id) {
		http.NotFound(w, r)
		return
	}
	v := runPage{Host: d.cfg.Hostname, Token: token}
	runs := d.journalRuns()
	v.Run = runPageOf(runs[id])
	// The attempt that made the run, and its plan, from the repository
	// whose status lists it.
	for _, wk := range d.order {
		for _, a := range wk.status().Recent {
			if a.RunID != id {
				continue
			}
			dv := deployPage(wk.cfg, a, runs)
			v.Deploy, v.Repo = &dv, wk.cfg.Name
			plan, err := wk.plans.load(id)
			if err != nil {
				d.log.Warn().Err(err).Str("run", id).Msg("status page: reading the deploy's plan")
			}
			v.Plan = planLines(plan)
		}
	}
	if v.Deploy == nil && v.Run == nil {
		http.NotFound(w, r)
		return
	}
	d.renderPage(w, "run.html", struct {
		Head head
		runPage
	}{head{Title: "deploy " + id + " · " + d.cfg.Hostname}, v})
}

// renderPage executes a template into a buffer first: a template error
// answers 500, never half a page.
func (d *Daemon) renderPage(w http.ResponseWriter, name string, data any) {
	var b bytes.Buffer
	if err := pageTemplates.ExecuteTemplate(&b, name, data); err != nil {
		d.log.Error().Err(err).Str("template", name).Msg("status page")
		http.Error(w, "the status page could not be rendered", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", PageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}
