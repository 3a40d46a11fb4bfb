package webhookd

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/syslet/syslet/pkg/notify"
)

// The commit status on the forge: "pending" when a deploy of the commit
// starts, then "success" or "failure" (a rolled-back deploy is a failure
// whose description says so), set through each forge's documented
// statuses API with a token from a 0600 file:
//
//	GitHub          POST {api}/repos/{owner}/{repo}/statuses/{sha}  Authorization: Bearer TOKEN
//	                {"state", "target_url", "description", "context"}; states pending, success, failure, error
//	Gitea, Forgejo  POST {api}/repos/{owner}/{repo}/statuses/{sha}  Authorization: token TOKEN
//	                {"state", "target_url", "description", "context"}; states pending, success, failure, error, warning
//	GitLab          POST {api}/projects/{url-encoded path}/statuses/{sha}  PRIVATE-TOKEN: TOKEN
//	                {"state", "name", "target_url", "description"}; states pending, running, success, failed, canceled
//
// Statuses go through a queue of their own per repository (pkg/notify):
// in order, off the deploy's path, each attempt bounded, a few retries;
// a forge that is down or hangs never delays or fails a deploy.

// Commit states as webhookd thinks of them; each forge's word for them is
// stateWord's.
const (
	statePending = "pending"
	stateSuccess = "success"
	stateFailure = "failure"
)

// maxDescription is what GitHub keeps of a status's description.
const maxDescription = 140

// statusTarget is a repository's checked status settings, its token read.
type statusTarget struct {
	forge     Forge
	api       string // no trailing slash
	owner     string // GitHub, Gitea, Forgejo
	name      string
	project   string // GitLab: the project's path (or id)
	token     Secret
	context   string
	targetURL string // with {hostname} and {repo} already substituted
	repo      string // webhookd's name of the repository
	retry     notify.Retry
}

// defaultStatusRetry bounds setting one commit status: forges answer in
// well under a second when they are well.
var defaultStatusRetry = notify.Retry{Attempts: 3, Timeout: 10 * time.Second, Backoff: time.Second}

func (r *Repo) validateStatus(hostname string, f func(string) string, add func(field, format string, args ...any)) {
	sc := r.Status
	if sc == nil {
		return
	}
	st := &statusTarget{repo: r.Name}
	switch Forge(sc.Forge) {
	case GitHub, Gitea, Forgejo, GitLab:
		st.forge = Forge(sc.Forge)
	case "":
		add(f("status.forge"), "required: github, gitea, forgejo or gitlab")
	default:
		add(f("status.forge"), "%q is not a forge (want github, gitea, forgejo or gitlab)", sc.Forge)
	}

	// The API base: given, or from the repository's URL.
	api := strings.TrimRight(sc.API, "/")
	if api == "" && st.forge != "" {
		if api = defaultAPI(st.forge, r.endpoint); api == "" {
			add(f("status.api"), "required: the repository's URL names no forge host (e.g. https://git.example/api/v1)")
		}
	}
	if api != "" {
		u, err := url.Parse(api)
		switch {
		case err != nil || u.Host == "":
			add(f("status.api"), "%q is not an absolute URL", sc.API)
		case u.User != nil || u.RawQuery != "" || u.Fragment != "":
			add(f("status.api"), "%q: only scheme, host and path (the token goes in tokenFile)", sc.API)
		case u.Scheme == "https":
		case u.Scheme == "http" && loopbackHost(u.Hostname()):
		case u.Scheme == "http":
			add(f("status.api"), "%q would send the token in clear: use https://", sc.API)
		default:
			add(f("status.api"), "%q: want an https:// URL", sc.API)
		}
		st.api = api
	}

	// Which repository on the forge.
	full := sc.Repo
	if full == "" && r.endpoint != nil && r.endpoint.Protocol != "file" {
		full = strings.TrimSuffix(strings.Trim(r.endpoint.Path, "/"), ".git")
	}
	switch {
	case full == "":
		add(f("status.repo"), "required: the repository's URL does not name it (owner/name)")
	case st.forge == GitLab:
		st.project = full
	default:
		owner, name, ok := strings.Cut(full, "/")
		if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			add(f("status.repo"), "%q: want owner/name", full)
		}
		st.owner, st.name = owner, name
	}

	if sc.TokenFile == "" {
		add(f("status.tokenFile"), "required: a token allowed to set commit statuses")
	} else if tok, err := readSecret(sc.TokenFile); err != nil {
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

// defaultAPI is the API base a forge serves on the repository's host:
// for an ssh:// remote its host, for an https:// one its host and port.
func defaultAPI(forge Forge, ep *transport.Endpoint) string {
	if ep == nil || ep.Host == "" || ep.Protocol == "file" {
		return ""
	}
	host := ep.Host
	if ep.Protocol == "https" && ep.Port != 0 && ep.Port != 443 {
		host = net.JoinHostPort(host, strconv.Itoa(ep.Port))
	}
	switch forge {
	case GitHub:
		if host == "github.com" {
			return "https://api.github.com"
		}
		return "https://" + host + "/api/v3"
	case Gitea, Forgejo:
		return "https://" + host + "/api/v1"
	case GitLab:
		return "https://" + host + "/api/v4"
	}
	return ""
}

// request is the forge's statuses API call that sets commit's state.
func (s *statusTarget) request(commit, state, description string) (string, http.Header, []byte) {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	description = clipDescription(description)
	var u string
	var body map[string]string
	switch s.forge {
	case GitHub:
		u = fmt.Sprintf("%s/repos/%s/%s/statuses/%s", s.api, url.PathEscape(s.owner), url.PathEscape(s.name), commit)
		h.Set("Authorization", "Bearer "+string(s.token.bytes()))
		h.Set("Accept", "application/vnd.github+json")
		h.Set("X-GitHub-Api-Version", "2022-11-28")
		body = map[string]string{"state": state, "description": description, "context": s.context}
	case Gitea, Forgejo:
		u = fmt.Sprintf("%s/repos/%s/%s/statuses/%s", s.api, url.PathEscape(s.owner), url.PathEscape(s.name), commit)
		h.Set("Authorization", "token "+string(s.token.bytes()))
		body = map[string]string{"state": state, "description": description, "context": s.context}
	case GitLab:
		u = fmt.Sprintf("%s/projects/%s/statuses/%s", s.api, url.PathEscape(s.project), commit)
		h.Set("PRIVATE-TOKEN", string(s.token.bytes()))
		if state == stateFailure {
			state = "failed"
		}
		body = map[string]string{"state": state, "description": description, "name": s.context}
	}
	if s.targetURL != "" {
		body["target_url"] = strings.ReplaceAll(s.targetURL, "{commit}", commit)
	}
	b, _ := json.Marshal(body)
	return u, h, b
}

// job is the delivery of one status, for the repository's status queue.
func (s *statusTarget) job(commit, state, description string) notify.Job {
	u, h, body := s.request(commit, state, description)
	return notify.Job{Event: state, Do: func(ctx context.Context) error {
		return notify.Post(ctx, u, h, body, s.token.bytes())
	}}
}

// clipDescription keeps a description to what forges show, on one line.
func clipDescription(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxDescription {
		return s
	}
	n := maxDescription - len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
