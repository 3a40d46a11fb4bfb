package webhookd

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
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

	"github.com/syslet/syslet/pkg/notify"
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
	Deployer Deployer
	Log      zerolog.Logger
	// NewCheckout makes a repository's private clone; nil means go-git in
	// StateDir/<repo>.
	NewCheckout func(cfg *Repo, dir string) Checkout
	// Root is the root whose run journal the status page reads (the
	// Deployer's); "" means /.
	Root string
}

// Daemon serves webhooks, status and metrics, and runs one deploy worker per repository.
type Daemon struct {
	cfg      *Config
	log      zerolog.Logger
	m        *metrics
	notifier *notify.Notifier
	statuses []*notify.Queue
	seen     *seenSet
	workers  map[string]*worker
	order    []*worker
	router   http.Handler
	root     string // of the run journal

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
func New(cfg *Config, o Options) (*Daemon, error) {
	if o.Deployer == nil {
		return nil, errors.New("webhookd: no Deployer")
	}
	if o.NewCheckout == nil {
		o.NewCheckout = NewGitCheckout
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
		root:    o.Root,
		cfg:     cfg,
		log:     o.Log,
		m:       newMetrics(cfg.Repos, targets),
		seen:    seen,
		workers: map[string]*worker{},
		stop:    make(chan struct{}),
		slots:   make(chan struct{}, maxInFlight),

		bodyGrace:   bodyGrace,
		bodyTimeout: bodyTimeout,
	}
	d.notifier = notify.New(cfg.NotifyTargets, func(r notify.Result) {
		d.m.notifications.WithLabelValues(r.Target, r.Outcome).Inc()
		if r.Outcome != notify.OutcomeSent {
			d.log.Warn().Str("target", r.Target).Str("event", r.Event).Str("result", r.Outcome).Int("attempts", r.Attempts).
				Dur("took", r.Took).AnErr("error", r.Err).Msg("notification not delivered")
		}
	})
	for i := range cfg.Repos {
		r := &cfg.Repos[i]
		dir := filepath.Join(cfg.StateDir, r.Name)
		status := filepath.Join(cfg.StateDir, ".status", r.Name+".json")
		w := newWorker(r, o.NewCheckout(r, dir), o.Deployer, o.Log, d.m, status)
		w.notify, w.hostname = d.notifier.Send, cfg.Hostname
		if r.forgeStatus != nil {
			name := r.Name
			w.statuses = notify.NewQueue("status/"+name, r.forgeStatus.retry, func(res notify.Result) {
				d.m.statuses.WithLabelValues(name, res.Outcome).Inc()
				if res.Outcome != notify.OutcomeSent {
					d.log.Warn().Str("repo", name).Str("state", res.Event).Str("result", res.Outcome).Int("attempts", res.Attempts).
						Dur("took", res.Took).AnErr("error", res.Err).Msg("commit status not set")
				}
			})
			d.statuses = append(d.statuses, w.statuses)
		}
		d.workers[r.Name] = w
		d.order = append(d.order, w)
	}
	d.router = d.routes()
	return d, nil
}

func (d *Daemon) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	r.Post("/hooks/{repo}", d.hook)
	r.Post("/registry", d.registryHook)
	r.Get("/status", d.statusHandler)
	d.pageRoutes(r)
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	r.Method(http.MethodGet, "/metrics", promhttp.HandlerFor(d.m.reg, promhttp.HandlerOpts{}))
	return r
}

// Start starts the deploy workers (and their poll timers).
func (d *Daemon) Start() {
	for _, w := range d.order {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			w.run(d.stop)
		}()
	}
}

// Stop stops taking new work and waits for running deploys to finish.
func (d *Daemon) Stop() {
	d.stopOnce.Do(func() { close(d.stop) })
	for _, w := range d.order {
		if st := w.status(); st.State != "idle" {
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
func (d *Daemon) Status() []RepoStatus {
	out := make([]RepoStatus, 0, len(d.order))
	for _, w := range d.order {
		out = append(out, w.status())
	}
	return out
}

func (d *Daemon) statusHandler(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"repos": d.Status(), "rollback": d.cfg.Rollback, "soakSeconds": d.cfg.Soak.Seconds()})
}

// reply is the JSON body of every /hooks answer.
type reply struct {
	Status   string `json:"status"` // queued, ignored, pong, refused
	Reason   string `json:"reason,omitempty"`
	Repo     string `json:"repo,omitempty"`
	Delivery string `json:"delivery,omitempty"`
	Commit   string `json:"commit,omitempty"`
	Busy     bool   `json:"busy,omitempty"` // a deploy is running: this push is deployed after it (coalesced)
}

func (d *Daemon) hook(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "repo")
	wk := d.workers[name]
	log := d.log.With().Str("remote", r.RemoteAddr).Logger()
	answer := func(code int, outcome string, rep reply, msg string) {
		label := name
		if wk == nil {
			label = ""
		}
		d.m.deliveries.WithLabelValues(label, outcome).Inc()
		lev := log.Info()
		if code == http.StatusUnauthorized || code >= 500 {
			lev = log.Warn()
		}
		lev.Int("code", code).Str("outcome", outcome).Str("delivery", rep.Delivery).Str("reason", rep.Reason).Msg(msg)
		writeJSON(w, code, rep)
	}
	if wk == nil {
		answer(http.StatusNotFound, OutcomeUnknownRepo, reply{Status: "refused", Reason: "no such repository"}, "delivery refused")
		return
	}
	log = log.With().Str("repo", name).Logger()

	if r.ContentLength > MaxBody {
		answer(http.StatusRequestEntityTooLarge, OutcomeTooLarge, reply{Status: "refused", Reason: fmt.Sprintf("body over %d bytes", MaxBody)}, "delivery refused")
		return
	}
	body, held, err := d.readBody(w, r)
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			answer(http.StatusRequestEntityTooLarge, OutcomeTooLarge, reply{Status: "refused", Reason: fmt.Sprintf("body over %d bytes", MaxBody)}, "delivery refused")
		case errors.Is(err, errTooSlow):
			w.Header().Set("Connection", "close")
			answer(http.StatusRequestTimeout, OutcomeTooSlow, reply{Status: "refused", Reason: err.Error()}, "delivery refused")
		case errors.Is(err, errBusy):
			answer(http.StatusTooManyRequests, OutcomeBusy, reply{Status: "refused", Reason: err.Error()}, "delivery refused")
		default:
			answer(http.StatusBadRequest, OutcomeBadRequest, reply{Status: "refused", Reason: "reading body failed"}, "delivery refused")
		}
		return
	}
	defer d.buffering.Add(-held)
	// Only now, the body in hand, does the request take one of the
	// slots: verifying and queueing take microseconds.
	release, ok := d.slot(r.Context())
	if !ok {
		answer(http.StatusTooManyRequests, OutcomeBusy, reply{Status: "refused", Reason: "too many deliveries at once"}, "delivery refused")
		return
	}
	defer release()

	forge, err := verify(r.Header, body, wk.cfg.Secret)
	if err != nil {
		answer(http.StatusUnauthorized, OutcomeUnauthorized, reply{Status: "refused", Reason: err.Error()}, "delivery refused")
		return
	}
	log = log.With().Str("forge", string(forge)).Logger()
	ev, err := parseEvent(forge, r.Header, body)
	if err != nil {
		answer(http.StatusBadRequest, OutcomeBadRequest, reply{Status: "refused", Reason: err.Error()}, "delivery refused")
		return
	}
	log = log.With().Str("event", ev.Kind).Logger()
	rep := reply{Repo: name, Delivery: ev.Delivery}
	// Only deliveries that verified are remembered: a forger cannot burn
	// the ids of real deliveries. A delivery is known by its id and by
	// its signed body: the id is not signed, so a captured delivery sent
	// again under a fresh id is a replay all the same.
	sum := sha256.Sum256(body)
	if !d.seen.addAll(name+"\x00"+ev.Delivery, name+"\x00body\x00"+hex.EncodeToString(sum[:])) {
		rep.Status, rep.Reason = "refused", "delivery was already received (replay)"
		answer(http.StatusConflict, OutcomeReplayed, rep, "delivery refused")
		return
	}
	switch {
	case ev.Kind == "ping":
		rep.Status = "pong"
		answer(http.StatusOK, OutcomePing, rep, "ping")
	case ev.Kind != "push":
		rep.Status, rep.Reason = "ignored", fmt.Sprintf("event %q is not a push", ev.Kind)
		answer(http.StatusAccepted, OutcomeIgnored, rep, "delivery ignored")
	case ev.Ref != "refs/heads/"+wk.cfg.Branch:
		rep.Status, rep.Reason = "ignored", fmt.Sprintf("push to %s, not to branch %s", ev.Ref, wk.cfg.Branch)
		answer(http.StatusAccepted, OutcomeIgnored, rep, "delivery ignored")
	case zeroCommit(ev.After):
		rep.Status, rep.Reason = "ignored", fmt.Sprintf("branch %s was deleted", wk.cfg.Branch)
		answer(http.StatusAccepted, OutcomeIgnored, rep, "delivery ignored")
	default:
		rep.Status, rep.Commit = "queued", ev.After
		rep.Busy = wk.enqueue(ev.After, fmt.Sprintf("%s push %s", forge, ev.Delivery))
		answer(http.StatusAccepted, OutcomeAccepted, rep, "push queued for deploy")
	}
}

// Outcomes of a delivery cut off while its body was read.
const (
	OutcomeTooSlow = "too_slow" // the body came slower than bodyMinRate, or not within bodyTimeout (408)
	OutcomeBusy    = "busy"     // too many bodies being read, or deliveries waiting, at once (429)
)

var (
	errTooSlow = fmt.Errorf("body not sent within %s at %d bytes a second or more", bodyTimeout, bodyMinRate)
	errBusy    = errors.New("too many deliveries being read at once")
)

// readBody reads a hook's body, at most MaxBody, under deadlines of its
// own: all of it within bodyTimeout, and, past bodyGrace, bodyMinRate
// bytes a second on average. Each read waits only until the next byte is
// due (the connection's read deadline, moved forward as bytes arrive), so
// a client that stalls is cut off as soon as it falls behind, not when
// the server's ReadTimeout ends. The buffer counts against maxBuffering
// while the request lasts: the caller gives back held.
func (d *Daemon) readBody(w http.ResponseWriter, r *http.Request) (body []byte, held int64, err error) {
	rc := http.NewResponseController(w)
	in := http.MaxBytesReader(w, r.Body, MaxBody)
	start := time.Now()
	final := start.Add(d.bodyTimeout)
	defer func() {
		if err != nil {
			d.buffering.Add(-held)
			body, held = nil, 0
		}
	}()
	var buf []byte
	for {
		if len(buf) == cap(buf) {
			// Grown by doubling, each step reserved first; one byte past
			// MaxBody is enough for the reader to tell it is too large.
			next := min(max(4096, 2*cap(buf)), MaxBody+1)
			extra := int64(next - cap(buf))
			if d.buffering.Add(extra) > maxBuffering {
				d.buffering.Add(-extra)
				return nil, held, errBusy
			}
			held += extra
			buf = append(make([]byte, 0, next), buf...)
		}
		// The deadline of the next byte: when the average would drop
		// below the minimum rate, or the final one.
		due := start.Add(d.bodyGrace + time.Duration(float64(len(buf)+1)/bodyMinRate*float64(time.Second)))
		if due.After(final) {
			due = final
		}
		if err := rc.SetReadDeadline(due); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return nil, held, err
		}
		n, err := in.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			// Back to the server's own deadlines for what follows.
			_ = rc.SetReadDeadline(time.Time{})
			return buf, held, nil
		}
		var ne net.Error
		switch {
		case err == nil:
		case errors.As(err, &ne) && ne.Timeout():
			return nil, held, errTooSlow
		default:
			return nil, held, err
		}
	}
}

// slot takes one of the maxInFlight slots, waiting at most backlogWait
// behind at most maxBacklog others; release gives it back.
func (d *Daemon) slot(ctx context.Context) (release func(), ok bool) {
	select {
	case d.slots <- struct{}{}:
		return func() { <-d.slots }, true
	default:
	}
	if d.waiting.Add(1) > maxBacklog {
		d.waiting.Add(-1)
		return nil, false
	}
	defer d.waiting.Add(-1)
	t := time.NewTimer(backlogWait)
	defer t.Stop()
	select {
	case d.slots <- struct{}{}:
		return func() { <-d.slots }, true
	case <-t.C:
	case <-ctx.Done():
	}
	return nil, false
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
