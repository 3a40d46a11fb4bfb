package webhookd

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/webhookd/clone"
	"github.com/syslet/syslet/webhookd/config"
	"github.com/syslet/syslet/webhookd/metrics"
	"github.com/syslet/syslet/webhookd/page"
	"github.com/syslet/syslet/webhookd/queue"
)

// Limits of the HTTP side. Forges give up on a delivery after about 10 s,
// so nothing here waits on git or an apply.
const (
	MaxBody = 1 << 20 // bytes of payload accepted; more answers 413

	maxHeaderBytes    = 64 << 10
	readHeaderTimeout = 5 * time.Second // the request line and headers, from the connection's first byte
	readTimeout       = 15 * time.Second
	writeTimeout      = 15 * time.Second
	idleTimeout       = 60 * time.Second
	shutdownGrace     = 10 * time.Second // for in-flight requests at shutdown

	// A hook's body is read before it takes a slot, under a deadline of
	// its own and at a minimum rate: past bodyGrace, bodyMinRate bytes a
	// second on average, or the request ends (408) — so a slow client,
	// or two hundred of them, never holds what a forge's delivery needs.
	// Forges send a delivery of kilobytes in one go.
	bodyTimeout = 10 * time.Second
	bodyGrace   = time.Second
	bodyMinRate = 4 << 10
	// maxBuffering bounds the bytes of hook bodies being read at once
	// (each up to MaxBody): past it a request is turned away (429)
	// rather than buffered.
	maxBuffering = 32 << 20

	// maxInFlight bounds hook requests being verified and handled at once
	// (their bodies read already); up to maxBacklog more wait for a slot
	// for at most backlogWait (a forge fires many deliveries at once),
	// and past that the answer is 429.
	maxInFlight = 16
	maxBacklog  = 256
	backlogWait = 5 * time.Second
	// seenDeliveries is how many delivery ids are remembered for replay refusal.
	seenDeliveries = 10000
	// replayFile (in stateDir/.status) holds the remembered ids' digests.
	replayFile = ".deliveries"
	// flushGrace is how long a stopping daemon still delivers the
	// notifications and commit statuses already queued.
	flushGrace = 10 * time.Second
)

// Options are the daemon's collaborators.
type Options struct {
	Deployer queue.Deployer
	Log      zerolog.Logger
	// NewCheckout makes a repository's private clone; nil means go-git in
	// StateDir/<repo>.
	NewCheckout func(cfg *config.Repo, dir string) clone.Checkout
	// Root is the root whose run journal the status page reads (the
	// Deployer's); "" means /.
	Root string
}

// Daemon serves webhooks, status and metrics, and runs one deploy worker per repository.
type Daemon struct {
	cfg      *config.Config
	log      zerolog.Logger
	m        *metrics.Set
	notifier *notify.Notifier
	statuses []*notify.Queue
	seen     *seenSet
	workers  map[string]*queue.Worker
	order    []*queue.Worker
	page     *page.Page
	router   http.Handler

	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup

	slots     chan struct{} // maxInFlight
	waiting   atomic.Int64  // requests waiting for a slot
	buffering atomic.Int64  // bytes of hook bodies being read
	// The constants of these names; a test lengthens them to hold slow
	// clients open for as long as it needs them, whatever the load.
	bodyGrace, bodyTimeout time.Duration
}

// New builds the daemon for a validated configuration.
func New(cfg *config.Config, o Options) (*Daemon, error) {
	if o.Deployer == nil {
		return nil, errors.New("webhookd: no Deployer")
	}
	if o.NewCheckout == nil {
		o.NewCheckout = clone.New
	}
	// The replay memory lives beside the status files, so a restart
	// (a crash, a kill, an upgrade) does not forget it.
	log := o.Log
	seen, err := openSeenSet(seenDeliveries, filepath.Join(cfg.StateDir, ".status", replayFile), func(err error) {
		log.Error().Err(err).Msg("a delivery id could not be saved: it is refused as a replay until webhookd restarts, not after")
	})
	if err != nil {
		return nil, err
	}
	var targets []string
	for _, t := range cfg.NotifyTargets {
		targets = append(targets, t.Name())
	}
	if o.Root == "" {
		o.Root = "/"
	}
	d := &Daemon{
		cfg:     cfg,
		log:     o.Log,
		m:       metrics.New(cfg.Repos, targets, queue.Results),
		seen:    seen,
		workers: map[string]*queue.Worker{},
		stop:    make(chan struct{}),
		slots:   make(chan struct{}, maxInFlight),

		bodyGrace:   bodyGrace,
		bodyTimeout: bodyTimeout,
	}
	d.notifier = notify.New(cfg.NotifyTargets, func(r notify.Result) {
		d.m.Notifications.WithLabelValues(r.Target, r.Outcome).Inc()
		if r.Outcome != notify.OutcomeSent {
			d.log.Warn().Str("target", r.Target).Str("event", r.Event).Str("result", r.Outcome).Int("attempts", r.Attempts).
				Dur("took", r.Took).AnErr("error", r.Err).Msg("notification not delivered")
		}
	})
	for i := range cfg.Repos {
		r := &cfg.Repos[i]
		var statuses *notify.Queue
		if target := r.StatusTarget(); target != nil {
			name := r.Name
			statuses = notify.NewQueue("status/"+name, target.Retry(), func(res notify.Result) {
				d.m.Statuses.WithLabelValues(name, res.Outcome).Inc()
				if res.Outcome != notify.OutcomeSent {
					d.log.Warn().Str("repo", name).Str("state", res.Event).Str("result", res.Outcome).Int("attempts", res.Attempts).
						Dur("took", res.Took).AnErr("error", res.Err).Msg("commit status not set")
				}
			})
			d.statuses = append(d.statuses, statuses)
		}
		d.startLabels(r)
		w := queue.New(r, queue.Options{
			Checkout:   o.NewCheckout(r, filepath.Join(cfg.StateDir, r.Name)),
			Deployer:   o.Deployer,
			Log:        o.Log,
			Metrics:    d.m,
			StatusFile: filepath.Join(cfg.StateDir, ".status", r.Name+".json"),
			Hostname:   cfg.Hostname,
			Notify:     d.notifier.Send,
			Statuses:   statuses,

			OverrideFile: queue.OverrideFile(cfg.StateDir, r.Name),
		})
		if len(r.MaintenanceWindows) > 0 {
			d.m.WatchWindow(r.Name, w.WindowState)
		}
		d.workers[r.Name] = w
		d.order = append(d.order, w)
	}
	d.page = page.New(cfg, d.order, d.m.Reg, o.Root, o.Log)
	d.router = d.routes()
	return d, nil
}

// startLabels exports this host's labels as the clone's last checkout
// left them (none before the first), until the next deploy reads them
// again: a restarted daemon does not drop out of its ring's selector.
func (d *Daemon) startLabels(r *config.Repo) {
	dir, err := bounded.DirBeneath(filepath.Join(d.cfg.StateDir, r.Name), filepath.FromSlash(r.SpecPath))
	if err != nil {
		d.m.SetLabels(r.Name, d.cfg.Hostname, nil)
		return
	}
	if err := d.m.ReadLabels(r.Name, d.cfg.Hostname, dir); err != nil {
		d.log.Warn().Err(err).Str("repo", r.Name).Msg("this host's labels are not exported")
	}
}

func (d *Daemon) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	// Uptime monitors ask with HEAD: every page that answers GET answers
	// HEAD the same, without the body.
	r.Use(middleware.GetHead)
	r.Post("/hooks/{repo}", d.hook)
	r.Post("/registry", d.registryHook)
	r.Get("/status", d.statusHandler)
	d.page.Routes(r)
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	r.Method(http.MethodGet, "/metrics", promhttp.HandlerFor(d.m.Reg, promhttp.HandlerOpts{}))
	return r
}

// Start starts the deploy workers (and their poll timers).
func (d *Daemon) Start() {
	for _, w := range d.order {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			w.Run(d.stop)
		}()
	}
}

// Stop stops taking new work and waits for running deploys to finish.
func (d *Daemon) Stop() {
	d.stopOnce.Do(func() { close(d.stop) })
	for _, w := range d.order {
		if st := w.Status(); st.State != "idle" {
			d.log.Info().Str("repo", st.Name).Str("commit", st.Deploying).Msg("waiting for the running deploy to finish")
		}
	}
	d.wg.Wait()
	d.seen.close()
	// What the last deploys told is still delivered, within a bound.
	ctx, cancel := context.WithTimeout(context.Background(), flushGrace)
	defer cancel()
	if err := d.notifier.Close(ctx); err != nil {
		d.log.Warn().Msg("stopping: notifications not delivered in time were dropped")
	}
	for _, q := range d.statuses {
		if err := q.Close(ctx); err != nil {
			d.log.Warn().Msg("stopping: commit statuses not set in time were dropped")
		}
	}
}

// Serve runs the daemon on ln until ctx is done, then shuts down gracefully:
// no new requests, in-flight requests get shutdownGrace, and a running
// deploy always finishes. ready is called once the server accepts requests.
func (d *Daemon) Serve(ctx context.Context, ln net.Listener, ready func()) error {
	srv := &http.Server{
		Handler:           d.router,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
	if t := d.cfg.TLS; t != nil {
		cert, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return fmt.Errorf("tls: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	d.Start()
	errc := make(chan error, 1)
	go func() {
		if srv.TLSConfig != nil {
			errc <- srv.ServeTLS(ln, "", "")
			return
		}
		errc <- srv.Serve(ln)
	}()
	var targets []string
	for _, t := range d.notifier.Targets() {
		targets = append(targets, t.String())
	}
	d.log.Info().Str("listen", ln.Addr().String()).Bool("tls", d.cfg.TLS != nil).Int("repos", len(d.order)).
		Str("rollback", d.cfg.Rollback).Dur("soak", d.cfg.Soak).Strs("notify", targets).Msg("webhookd serving")
	if ready != nil {
		ready()
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	d.log.Info().Msg("shutting down: no new deliveries; a running deploy finishes first")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		d.log.Warn().Err(err).Msg("closing HTTP connections")
	}
	d.Stop()
	d.log.Info().Msg("webhookd stopped")
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return nil
}

// Status returns every repository's status, in configuration order.
func (d *Daemon) Status() []queue.RepoStatus {
	out := make([]queue.RepoStatus, 0, len(d.order))
	for _, w := range d.order {
		out = append(out, w.Status())
	}
	return out
}

func (d *Daemon) statusHandler(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"repos": d.Status(), "rollback": d.cfg.Rollback, "soakSeconds": d.cfg.Soak.Seconds()})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
