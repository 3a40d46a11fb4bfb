package webhookd

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/syslet/syslet/webhookd/config"
	"github.com/syslet/syslet/webhookd/metrics"
)

// A container registry's own push notifications (CNCF Distribution's
// "notifications": the registry POSTs an envelope of events to each
// configured endpoint) update the containers that run the pushed tag,
// through the same workers as git pushes: one deploy per repository at a
// time, coalesced with the pushes queued meanwhile, under the host's apply
// lock, in the run journal, /status, metrics and notifications. The
// deploy is an update (`syslet update`) of the repository's applied
// commit, narrowed to the pushed references: the plan decides which
// containers run them.

// Media types of a notification envelope: Distribution 2.x sends v1,
// 3.x v2; the fields read here are the same in both.
var registryMediaTypes = []string{"application/vnd.docker.distribution.events.v1+json", "application/vnd.docker.distribution.events.v2+json"}

// registryLabel is the repo label of a registry notification's metrics.
const registryLabel = "(registry)"

// envelope is the part of a notification envelope webhookd reads.
type envelope struct {
	Events []struct {
		ID     string `json:"id"`
		Action string `json:"action"`
		Target struct {
			MediaType  string `json:"mediaType"`
			Digest     string `json:"digest"`
			Repository string `json:"repository"`
			Tag        string `json:"tag"`
		} `json:"target"`
		Request struct {
			Host string `json:"host"`
		} `json:"request"`
	} `json:"events"`
}

// pushedTags reads the tags an envelope says were pushed, as registry
// references ("host/repository:tag"), each once; events of any other
// kind (pulls, blobs, pushes by digest) are skipped. ids are the events'
// ids, for replay refusal.
func pushedTags(body []byte) (refs, ids []string, err error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, nil, fmt.Errorf("reading the notification envelope: %w", err)
	}
	for i, ev := range env.Events {
		if ev.Action != "push" || ev.Target.Tag == "" {
			continue
		}
		t := ev.Target
		if ev.Request.Host == "" || t.Repository == "" || strings.ContainsAny(ev.Request.Host+t.Repository+t.Tag, " \t\r\n@") {
			return nil, nil, fmt.Errorf("events[%d]: a push without request.host, target.repository or with an unreadable tag", i)
		}
		if ev.ID == "" {
			return nil, nil, fmt.Errorf("events[%d]: a push without an id", i)
		}
		ids = append(ids, ev.ID)
		if ref := ev.Request.Host + "/" + t.Repository + ":" + t.Tag; !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	return refs, ids, nil
}

// bearer checks the request's Authorization header against the token, in
// constant time.
func bearer(h http.Header, token config.Secret) error {
	got, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	if !ok {
		return errors.New("no bearer token (Authorization: Bearer …)")
	}
	if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), token.Bytes()) != 1 {
		return errors.New("wrong bearer token")
	}
	return nil
}

// registryHook takes a registry's notification envelope: each pushed tag
// is queued as an update of every repository's applied commit.
func (d *Daemon) registryHook(w http.ResponseWriter, r *http.Request) {
	log := d.log.With().Str("remote", r.RemoteAddr).Str("hook", "registry").Logger()
	answer := func(code int, outcome string, rep reply, msg string) {
		d.m.Deliveries.WithLabelValues(registryLabel, outcome).Inc()
		lev := log.Info()
		if code == http.StatusUnauthorized || code >= 500 {
			lev = log.Warn()
		}
		lev.Int("code", code).Str("outcome", outcome).Str("reason", rep.Reason).Msg(msg)
		writeJSON(w, code, rep)
	}
	if d.cfg.Registry == nil {
		answer(http.StatusNotFound, metrics.OutcomeUnknownRepo, reply{Status: "refused", Reason: "registry notifications are not configured (registry.tokenFile)"}, "notification refused")
		return
	}
	// The token is checked before the body is read: an unauthenticated
	// sender costs nothing.
	if err := bearer(r.Header, d.cfg.Registry.Token); err != nil {
		answer(http.StatusUnauthorized, metrics.OutcomeUnauthorized, reply{Status: "refused", Reason: err.Error()}, "notification refused")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || !slices.Contains(registryMediaTypes, mt) {
		answer(http.StatusUnsupportedMediaType, metrics.OutcomeBadRequest, reply{Status: "refused", Reason: "want Content-Type " + strings.Join(registryMediaTypes, " or ")}, "notification refused")
		return
	}
	if r.ContentLength > MaxBody {
		answer(http.StatusRequestEntityTooLarge, metrics.OutcomeTooLarge, reply{Status: "refused", Reason: fmt.Sprintf("body over %d bytes", MaxBody)}, "notification refused")
		return
	}
	body, held, err := d.readBody(w, r)
	if err != nil {
		answer(http.StatusBadRequest, metrics.OutcomeBadRequest, reply{Status: "refused", Reason: "reading body failed: " + err.Error()}, "notification refused")
		return
	}
	defer d.buffering.Add(-held)
	refs, ids, err := pushedTags(body)
	if err != nil {
		answer(http.StatusBadRequest, metrics.OutcomeBadRequest, reply{Status: "refused", Reason: err.Error()}, "notification refused")
		return
	}
	if len(refs) == 0 {
		answer(http.StatusOK, metrics.OutcomeIgnored, reply{Status: "ignored", Reason: "no tag was pushed"}, "notification ignored")
		return
	}
	keys := make([]string, 0, len(ids))
	for _, id := range ids {
		keys = append(keys, registryLabel+"\x00"+id)
	}
	if !d.seen.addAll(keys...) {
		// 200, not 409: a registry sends an event again until it is
		// answered 2xx, so a refusal would have it retry for ever.
		answer(http.StatusOK, metrics.OutcomeReplayed, reply{Status: "ignored", Reason: "notification was already received (replay)"}, "notification ignored")
		return
	}
	queued := 0
	for _, wk := range d.order {
		for _, ref := range refs {
			if wk.EnqueueUpdate(ref) {
				queued++
			}
		}
	}
	rep := reply{Status: "queued", Reason: "update of " + strings.Join(refs, ", ")}
	if queued == 0 {
		rep = reply{Status: "ignored", Reason: "no repository has an applied commit to update"}
		answer(http.StatusAccepted, metrics.OutcomeIgnored, rep, "notification ignored")
		return
	}
	answer(http.StatusAccepted, metrics.OutcomeAccepted, rep, "image push queued for update")
}
