package forge

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Kind names a forge's API dialect.
type Kind string

// The forges whose commit statuses syslet sets and reads.
const (
	GitHub  Kind = "github"
	Gitea   Kind = "gitea"
	Forgejo Kind = "forgejo"
	GitLab  Kind = "gitlab"
)

// Kinds are the forges, as usage messages list them.
var Kinds = []Kind{GitHub, Gitea, Forgejo, GitLab}

// ParseKind reads a forge's name.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case GitHub, Gitea, Forgejo, GitLab:
		return k, nil
	case "":
		return "", errors.New("required: github, gitea, forgejo or gitlab")
	}
	return "", fmt.Errorf("%q is not a forge (want github, gitea, forgejo or gitlab)", s)
}

// State is a commit status's state as syslet reads it: pending (it may
// still change), success, or failure (any final state that is not
// success: GitHub's error and failure, GitLab's failed and canceled,
// Gitea's warning).
type State string

const (
	Pending State = "pending"
	Success State = "success"
	Failure State = "failure"
)

// Status is the status of one context (GitLab: name) on a commit.
type Status struct {
	Context string
	State   State
	// Word is the forge's own word for the state, when it says more than
	// State does ("error", "failed", "canceled").
	Word        string
	Description string
	TargetURL   string
}

// stateOf reads a forge's state word. A word that is not success and
// will not turn into it on its own counts as a failure, so that a state
// this package does not know never promotes a commit.
func stateOf(word string) State {
	switch word {
	case "success":
		return Success
	case "pending", "running", "created", "preparing", "waiting_for_resource", "scheduled":
		return Pending
	}
	return Failure
}

// Repo names a repository on a forge's API.
type Repo struct {
	Kind Kind
	// API is the API's base URL without a trailing slash:
	// https://api.github.com (https://HOST/api/v3 for GitHub Enterprise),
	// https://HOST/api/v1 (Gitea, Forgejo), https://HOST/api/v4 (GitLab).
	API string
	// Path is owner/name; on GitLab the project's path (group/project) or
	// its numeric id.
	Path string
}

// CheckAPI refuses an API base URL that is not absolute, that would send a
// token in clear (http:// is accepted on loopback only), or that carries
// anything but scheme, host and path (a token belongs in its file).
func CheckAPI(api string) error {
	u, err := url.Parse(api)
	switch {
	case err != nil || u.Host == "":
		return fmt.Errorf("%q is not an absolute URL", api)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%q: only scheme, host and path (the token goes in its file)", api)
	case u.Scheme == "https":
	case u.Scheme == "http" && loopback(u.Hostname()):
	case u.Scheme == "http":
		return fmt.Errorf("%q would send the token in clear: use https://", api)
	default:
		return fmt.Errorf("%q: want an https:// URL", api)
	}
	return nil
}

// CheckPath refuses a repository path the forge's API cannot name:
// owner/name, or on GitLab a project path or id.
func CheckPath(kind Kind, path string) error {
	if path == "" {
		return errors.New("required: owner/name")
	}
	if strings.ContainsAny(path, "?#\\ \t\r\n") {
		return fmt.Errorf("%q: want owner/name", path)
	}
	if kind == GitLab {
		for _, seg := range strings.Split(path, "/") {
			if seg == "" || seg == "." || seg == ".." {
				return fmt.Errorf("%q: want the project's path (group/project) or id", path)
			}
		}
		return nil
	}
	owner, name, ok := strings.Cut(path, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") || owner == ".." || name == ".." {
		return fmt.Errorf("%q: want owner/name", path)
	}
	return nil
}

// DefaultAPI is the API base a forge serves on host (host or host:port):
// GitHub's public API for github.com, else the forge's path on host.
func DefaultAPI(kind Kind, host string) string {
	if host == "" {
		return ""
	}
	switch kind {
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

// MaxDescription is what GitHub keeps of a status's description.
const MaxDescription = 140

// SetRequest is the forge's documented call that sets s on commit:
//
//	GitHub          POST {api}/repos/{owner}/{repo}/statuses/{sha}  Authorization: Bearer TOKEN
//	                {"state", "target_url", "description", "context"}; states pending, success, failure, error
//	Gitea, Forgejo  POST {api}/repos/{owner}/{repo}/statuses/{sha}  Authorization: token TOKEN
//	                {"state", "target_url", "description", "context"}; states pending, success, failure, error, warning
//	GitLab          POST {api}/projects/{url-encoded path}/statuses/{sha}  PRIVATE-TOKEN: TOKEN
//	                {"state", "name", "target_url", "description"}; states pending, running, success, failed, canceled
//
// s.State is pending, success or failure; the description is clipped to
// what forges show, on one line.
func (r Repo) SetRequest(commit string, s Status, token []byte) (string, http.Header, []byte) {
	h := r.header(token)
	h.Set("Content-Type", "application/json")
	state := string(s.State)
	body := map[string]string{"description": ClipDescription(s.Description)}
	var u string
	switch r.Kind {
	case GitLab:
		u = fmt.Sprintf("%s/projects/%s/statuses/%s", r.API, url.PathEscape(r.Path), commit)
		if s.State == Failure {
			state = "failed"
		}
		body["name"] = s.Context
	default:
		owner, name, _ := strings.Cut(r.Path, "/")
		u = fmt.Sprintf("%s/repos/%s/%s/statuses/%s", r.API, url.PathEscape(owner), url.PathEscape(name), commit)
		body["context"] = s.Context
	}
	body["state"] = state
	if s.TargetURL != "" {
		body["target_url"] = s.TargetURL
	}
	b, _ := json.Marshal(body)
	return u, h, b
}

// header is the forge's authentication and media type for an API call.
func (r Repo) header(token []byte) http.Header {
	h := http.Header{}
	h.Set("Accept", "application/json")
	switch r.Kind {
	case GitHub:
		h.Set("Authorization", "Bearer "+string(token))
		h.Set("Accept", "application/vnd.github+json")
		h.Set("X-GitHub-Api-Version", "2022-11-28")
	case Gitea, Forgejo:
		h.Set("Authorization", "token "+string(token))
	case GitLab:
		h.Set("PRIVATE-TOKEN", string(token))
	}
	return h
}

// ClipDescription keeps a description to what forges show, on one line.
func ClipDescription(s string) string { return Clip(s, MaxDescription) }

// Clip puts s on one line of at most max bytes, cut on a character with
// "…" when it is longer: a part of a description that must leave room for
// the rest.
func Clip(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	n := max - len("…")
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
