package page

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
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/webhookd/config"
	"github.com/syslet/syslet/webhookd/queue"
)

// The templates and the stylesheet, embedded in the binary.
//
//go:embed layout.html index.html run.html page.css
var files embed.FS

var templates = template.Must(template.ParseFS(files, "layout.html", "index.html", "run.html"))

// css is the stylesheet, served at /static/page.css.
var css = func() []byte {
	b, err := files.ReadFile("page.css")
	if err != nil {
		panic(err)
	}
	return b
}()

// csp is the page's Content-Security-Policy: its own stylesheet, no
// script, no frame, no form, no other origin.
const csp = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// refresh is how often the overview reloads itself (a meta refresh:
// no script needed).
const refresh = 30

// Page serves the status page of the daemon's repositories.
type Page struct {
	cfg     *config.Config
	workers []*queue.Worker
	metrics prometheus.Gatherer
	root    string // of the run journal
	log     zerolog.Logger
	// started is when the daemon made the page, at its start: the
	// delivery counters count from then (they live in memory).
	started time.Time
}

// New makes the page of workers' repositories: their status, the run
// journal under root and the delivery counters of metrics.
func New(cfg *config.Config, workers []*queue.Worker, metrics prometheus.Gatherer, root string, log zerolog.Logger) *Page {
	return &Page{cfg: cfg, workers: workers, metrics: metrics, root: root, log: log, started: time.Now().UTC()}
}

type head struct {
	Title   string
	Refresh int
}

// Routes serves the page on r: GET /, GET /runs/{run} and the stylesheet.
func (p *Page) Routes(r chi.Router) {
	r.Get("/", p.overview)
	r.Get("/runs/{run}", p.run)
	r.Get("/static/page.css", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Write(css)
	})
}

// pageAccess says whether r may see the page, and the token to carry on
// its links. With a page token configured, r must present it (?token= or
// "Authorization: Bearer"); without one, only a daemon listening on a
// loopback address serves the page (a reverse proxy in front does the
// auth then).
func (p *Page) access(w http.ResponseWriter, r *http.Request) (token string, ok bool) {
	want := p.cfg.PageToken.Bytes()
	if len(want) == 0 {
		if loopbackListen(p.cfg.Listen) {
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

func (p *Page) journalRuns() map[string]*runlog.RunInfo {
	runs, err := runlog.Open(p.root).Runs()
	if err != nil {
		p.log.Warn().Err(err).Msg("status page: reading the run journal")
	}
	byID := make(map[string]*runlog.RunInfo, len(runs))
	for _, r := range runs {
		byID[r.ID()] = r
	}
	return byID
}

func (p *Page) overview(w http.ResponseWriter, r *http.Request) {
	token, ok := p.access(w, r)
	if !ok {
		return
	}
	runs := p.journalRuns()
	v := overview{Host: p.cfg.Hostname, Now: time.Now().UTC().Format(stamp), Refresh: refresh, Token: token, CountedSince: when(&p.started)}
	for _, wk := range p.workers {
		v.Repos = append(v.Repos, repoPage(wk.Repo(), wk.Status(), runs))
	}
	if mfs, err := p.metrics.Gather(); err == nil {
		v.Deliveries = counters(mfs, "webhookd_deliveries_total", "outcome")
		v.Notifications = counters(mfs, "webhookd_notifications_total", "result")
		v.Statuses = counters(mfs, "webhookd_commit_statuses_total", "result")
	}
	p.render(w, "index.html", struct {
		Head head
		overview
	}{head{Title: "webhookd · " + p.cfg.Hostname, Refresh: refresh}, v})
}

func (p *Page) run(w http.ResponseWriter, r *http.Request) {
	token, ok := p.access(w, r)
	if !ok {
		return
	}
	id := chi.URLParam(r, "run")
	if !queue.IsRunID(id) {
		http.NotFound(w, r)
		return
	}
	v := runPage{Host: p.cfg.Hostname, Token: token}
	runs := p.journalRuns()
	v.Run = runPageOf(runs[id])
	// The attempt that made the run, and its plan, from the repository
	// whose status lists it.
	for _, wk := range p.workers {
		for _, a := range wk.Status().Recent {
			if a.RunID != id {
				continue
			}
			dv := deployPage(wk.Repo(), a, runs)
			v.Deploy, v.Repo = &dv, wk.Repo().Name
			plan, err := wk.Plan(id)
			if err != nil {
				p.log.Warn().Err(err).Str("run", id).Msg("status page: reading the deploy's plan")
			}
			v.Plan = planLines(plan)
		}
	}
	if v.Deploy == nil && v.Run == nil {
		http.NotFound(w, r)
		return
	}
	p.render(w, "run.html", struct {
		Head head
		runPage
	}{head{Title: "deploy " + id + " · " + p.cfg.Hostname}, v})
}

// render executes a template into a buffer first: a template error
// answers 500, never half a page.
func (p *Page) render(w http.ResponseWriter, name string, data any) {
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, data); err != nil {
		p.log.Error().Err(err).Str("template", name).Msg("status page")
		http.Error(w, "the status page could not be rendered", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}
