package config

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/syslet/syslet/pkg/forge"
	"github.com/syslet/syslet/pkg/notify"
)

// The commit status on the forge: "pending" when a deploy of the commit
// starts, then "success" or "failure" (a rolled-back deploy is a failure
// whose description says so), set through each forge's documented
// statuses API (pkg/forge says how) with a token from a 0600 file.
//
// Statuses go through a queue of their own per repository (pkg/notify):
// in order, off the deploy's path, each attempt bounded, a few retries;
// a forge that is down or hangs never delays or fails a deploy.

// StatusTarget is a repository's checked status settings, its token read:
// how the commit's status is set on its forge.
type StatusTarget struct {
	repo      forge.Repo
	token     Secret
	context   string
	targetURL string // with {hostname} and {repo} already substituted
	retry     notify.Retry
}

// defaultStatusRetry bounds setting one commit status: forges answer in
// well under a second when they are well.
var defaultStatusRetry = notify.Retry{Attempts: 3, Timeout: 10 * time.Second, Backoff: time.Second}

// validateStatus checks the repository's commit status settings and
// reads its token.
func (r *Repo) validateStatus(hostname string, f func(string) string, add func(field, format string, args ...any)) {
	sc := r.Status
	if sc == nil {
		return
	}
	st := &StatusTarget{}
	kind, err := forge.ParseKind(sc.Forge)
	if err != nil {
		add(f("status.forge"), "%v", err)
	}
	st.repo.Kind = kind

	// The API base: given, or from the repository's URL.
	api := strings.TrimRight(sc.API, "/")
	if api == "" && kind != "" {
		if api = forge.DefaultAPI(kind, apiHost(r.endpoint)); api == "" {
			add(f("status.api"), "required: the repository's URL names no forge host (e.g. https://git.example/api/v1)")
		}
	}
	if api != "" {
		if err := forge.CheckAPI(api); err != nil {
			add(f("status.api"), "%v", err)
		}
		st.repo.API = api
	}

	// Which repository on the forge.
	full := sc.Repo
	if full == "" && r.endpoint != nil && r.endpoint.Protocol != "file" {
		full = strings.TrimSuffix(strings.Trim(r.endpoint.Path, "/"), ".git")
	}
	if full == "" {
		add(f("status.repo"), "required: the repository's URL does not name it (owner/name)")
	} else if err := forge.CheckPath(kind, full); err != nil {
		add(f("status.repo"), "%v", err)
	}
	st.repo.Path = full

	if sc.TokenFile == "" {
		add(f("status.tokenFile"), "required: a token allowed to set commit statuses")
	} else if tok, err := ReadSecret(sc.TokenFile); err != nil {
		add(f("status.tokenFile"), "%v", err)
	} else {
		st.token = tok
	}

	st.context = sc.Context
	if st.context == "" {
		st.context = "syslet/{hostname}"
	}
	st.context = strings.ReplaceAll(st.context, "{hostname}", hostname)
	if len(st.context) > 255 || strings.ContainsAny(st.context, "\n\r") {
		add(f("status.context"), "must be one line of at most 255 bytes")
	}
	if sc.TargetURL != "" {
		t := strings.NewReplacer("{hostname}", hostname, "{repo}", r.Name).Replace(sc.TargetURL)
		if u, err := url.Parse(strings.ReplaceAll(t, "{commit}", "0")); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			add(f("status.targetURL"), "%q is not an http(s) URL", sc.TargetURL)
		}
		st.targetURL = t
	}
	st.retry = defaultStatusRetry
	if sc.Timeout != 0 {
		d := time.Duration(sc.Timeout)
		if d < 100*time.Millisecond || d > notify.MaxTimeout {
			add(f("status.timeout"), "%s is not between 100ms and %s", d, notify.MaxTimeout)
		}
		st.retry.Timeout = d
	}
	if sc.Attempts != 0 {
		if sc.Attempts < 1 || sc.Attempts > notify.MaxAttempts {
			add(f("status.attempts"), "%d is not between 1 and %d", sc.Attempts, notify.MaxAttempts)
		}
		st.retry.Attempts = sc.Attempts
	}
	r.forgeStatus = st
}

// StatusTarget is where the deployed commit's status is set (nil: no
// status is configured).
func (r *Repo) StatusTarget() *StatusTarget { return r.forgeStatus }

// apiHost is the host a forge serves its API on for the repository's
// remote: for an ssh:// remote its host, for an https:// one its host
// and port; "" for a local path.
func apiHost(ep *transport.Endpoint) string {
	if ep == nil || ep.Host == "" || ep.Protocol == "file" {
		return ""
	}
	if ep.Protocol == "https" && ep.Port != 0 && ep.Port != 443 {
		return net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port))
	}
	return ep.Host
}

// Forge is the forge the status is set on.
func (s *StatusTarget) Forge() forge.Kind { return s.repo.Kind }

// Retry bounds setting one status.
func (s *StatusTarget) Retry() notify.Retry { return s.retry }

// request is the forge's call that sets commit's state.
func (s *StatusTarget) request(commit string, state forge.State, description string) (string, http.Header, []byte) {
	st := forge.Status{Context: s.context, State: state, Description: description}
	if s.targetURL != "" {
		st.TargetURL = strings.ReplaceAll(s.targetURL, "{commit}", commit)
	}
	return s.repo.SetRequest(commit, st, s.token.Bytes())
}

// Job is the delivery of commit's state, for the repository's status queue.
func (s *StatusTarget) Job(commit string, state forge.State, description string) notify.Job {
	u, h, body := s.request(commit, state, description)
	return notify.Job{Event: string(state), Do: func(ctx context.Context) error {
		return notify.Post(ctx, u, h, body, s.token.Bytes())
	}}
}
