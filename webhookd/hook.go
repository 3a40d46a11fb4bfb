package webhookd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/syslet/syslet/webhookd/metrics"
)

// reply is the JSON body of every /hooks answer.
type reply struct {
	Status   string `json:"status"` // queued, ignored, pong, refused
	Reason   string `json:"reason,omitempty"`
	Repo     string `json:"repo,omitempty"`
	Delivery string `json:"delivery,omitempty"`
	Commit   string `json:"commit,omitempty"`
	Busy     bool   `json:"busy,omitempty"` // a deploy is running: this push is deployed after it (coalesced)
}

// hook takes a forge's delivery for the repository {repo}: read within its
// bounds, verified, remembered against replays, and a push of the branch
// queued for the repository's worker; every answer says why.
func (d *Daemon) hook(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "repo")
	wk := d.workers[name]
	log := d.log.With().Str("remote", r.RemoteAddr).Logger()
	answer := func(code int, outcome string, rep reply, msg string) {
		label := name
		if wk == nil {
			label = ""
		}
		d.m.Deliveries.WithLabelValues(label, outcome).Inc()
		lev := log.Info()
		if code == http.StatusUnauthorized || code >= 500 {
			lev = log.Warn()
		}
		lev.Int("code", code).Str("outcome", outcome).Str("delivery", rep.Delivery).Str("reason", rep.Reason).Msg(msg)
		writeJSON(w, code, rep)
	}
	if wk == nil {
		answer(http.StatusNotFound, metrics.OutcomeUnknownRepo, reply{Status: "refused", Reason: "no such repository"}, "delivery refused")
		return
	}
	log = log.With().Str("repo", name).Logger()

	if r.ContentLength > MaxBody {
		answer(http.StatusRequestEntityTooLarge, metrics.OutcomeTooLarge, reply{Status: "refused", Reason: fmt.Sprintf("body over %d bytes", MaxBody)}, "delivery refused")
		return
	}
	body, held, err := d.readBody(w, r)
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			answer(http.StatusRequestEntityTooLarge, metrics.OutcomeTooLarge, reply{Status: "refused", Reason: fmt.Sprintf("body over %d bytes", MaxBody)}, "delivery refused")
		case errors.Is(err, errTooSlow):
			w.Header().Set("Connection", "close")
			answer(http.StatusRequestTimeout, OutcomeTooSlow, reply{Status: "refused", Reason: err.Error()}, "delivery refused")
		case errors.Is(err, errBusy):
			answer(http.StatusTooManyRequests, OutcomeBusy, reply{Status: "refused", Reason: err.Error()}, "delivery refused")
		default:
			answer(http.StatusBadRequest, metrics.OutcomeBadRequest, reply{Status: "refused", Reason: "reading body failed"}, "delivery refused")
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

	forge, err := verify(r.Header, body, wk.Repo().Secret)
	if err != nil {
		answer(http.StatusUnauthorized, metrics.OutcomeUnauthorized, reply{Status: "refused", Reason: err.Error()}, "delivery refused")
		return
	}
	log = log.With().Str("forge", string(forge)).Logger()
	ev, err := parseEvent(forge, r.Header, body)
	if err != nil {
		answer(http.StatusBadRequest, metrics.OutcomeBadRequest, reply{Status: "refused", Reason: err.Error()}, "delivery refused")
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
		answer(http.StatusConflict, metrics.OutcomeReplayed, rep, "delivery refused")
		return
	}
	switch {
	case ev.Kind == "ping":
		rep.Status = "pong"
		answer(http.StatusOK, metrics.OutcomePing, rep, "ping")
	case ev.Kind != "push":
		rep.Status, rep.Reason = "ignored", fmt.Sprintf("event %q is not a push", ev.Kind)
		answer(http.StatusAccepted, metrics.OutcomeIgnored, rep, "delivery ignored")
	case ev.Ref != "refs/heads/"+wk.Repo().Branch:
		rep.Status, rep.Reason = "ignored", fmt.Sprintf("push to %s, not to branch %s", ev.Ref, wk.Repo().Branch)
		answer(http.StatusAccepted, metrics.OutcomeIgnored, rep, "delivery ignored")
	case zeroCommit(ev.After):
		rep.Status, rep.Reason = "ignored", fmt.Sprintf("branch %s was deleted", wk.Repo().Branch)
		answer(http.StatusAccepted, metrics.OutcomeIgnored, rep, "delivery ignored")
	default:
		rep.Status, rep.Commit = "queued", ev.After
		rep.Busy = wk.Enqueue(ev.After, fmt.Sprintf("%s push %s", forge, ev.Delivery))
		answer(http.StatusAccepted, metrics.OutcomeAccepted, rep, "push queued for deploy")
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
