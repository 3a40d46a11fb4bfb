package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/redact"
)

// Reading a commit's statuses, the latest of each context:
//
//	GitHub          GET {api}/repos/{owner}/{repo}/commits/{sha}/status?per_page=100&page=N
//	                {"state", "total_count", "statuses": [{"context", "state", "description", "target_url"}]}
//	Gitea, Forgejo  GET {api}/repos/{owner}/{repo}/commits/{sha}/status?limit=50&page=N
//	                {"state", "total_count", "statuses": [{"context", "status", "description", "target_url"}]}
//	GitLab          GET {api}/projects/{url-encoded path}/repository/commits/{sha}/statuses?per_page=100&page=N
//	                [{"name", "status", "description", "target_url"}] (without all=true: the latest of each name)
//
// Each page is as large as the forge allows (Gitea's default cap is 50);
// pages are read until one comes back short.

// pageSize is the largest page each forge serves.
func (r Repo) pageSize() int {
	if r.Kind == Gitea || r.Kind == Forgejo {
		return 50
	}
	return 100
}

// maxPages bounds one read: 5,000 contexts on GitHub and GitLab, 2,500
// on Gitea, far past a fleet's ring.
const maxPages = 50

// maxAnswer bounds one page's answer.
const maxAnswer = 4 << 20

// statusesURL is page's URL of commit's statuses.
func (r Repo) statusesURL(commit string, page int) string {
	n := strconv.Itoa(r.pageSize())
	switch r.Kind {
	case GitLab:
		return fmt.Sprintf("%s/projects/%s/repository/commits/%s/statuses?per_page=%s&page=%d", r.API, url.PathEscape(r.Path), commit, n, page)
	case Gitea, Forgejo:
		owner, name, _ := strings.Cut(r.Path, "/")
		return fmt.Sprintf("%s/repos/%s/%s/commits/%s/status?limit=%s&page=%d", r.API, url.PathEscape(owner), url.PathEscape(name), commit, n, page)
	}
	owner, name, _ := strings.Cut(r.Path, "/")
	return fmt.Sprintf("%s/repos/%s/%s/commits/%s/status?per_page=%s&page=%d", r.API, url.PathEscape(owner), url.PathEscape(name), commit, n, page)
}

// entry is one status as any of the forges writes it.
type entry struct {
	Context     string `json:"context"` // GitHub, Gitea
	Name        string `json:"name"`    // GitLab
	State       string `json:"state"`   // GitHub
	Status      string `json:"status"`  // Gitea, GitLab
	Description string `json:"description"`
	TargetURL   string `json:"target_url"`
}

// parsePage reads one page of statuses in the forge's format.
func (r Repo) parsePage(b []byte) ([]Status, error) {
	var es []entry
	if r.Kind == GitLab {
		if err := json.Unmarshal(b, &es); err != nil {
			return nil, err
		}
	} else {
		var doc struct {
			Statuses []entry `json:"statuses"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, err
		}
		es = doc.Statuses
	}
	out := make([]Status, 0, len(es))
	for _, e := range es {
		s := Status{Context: e.Context, Word: e.State, Description: e.Description, TargetURL: e.TargetURL}
		if r.Kind == GitLab {
			s.Context = e.Name
		}
		// Gitea and GitLab call the state "status"; GitHub "state".
		if r.Kind != GitHub && e.Status != "" || s.Word == "" {
			s.Word = e.Status
		}
		if s.Context == "" || s.Word == "" {
			return nil, fmt.Errorf("a status without its context or state: %+v", e)
		}
		s.State = stateOf(s.Word)
		out = append(out, s)
	}
	return out, nil
}

// Client reads a repository's commit statuses from its forge.
type Client struct {
	Repo  Repo
	Token []byte
	// HTTP is the client requests go through; nil: one that follows no
	// redirect (a token must not follow one to another host).
	HTTP *http.Client
}

var defaultHTTP = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConns:          2,
		IdleConnTimeout:       time.Minute,
	},
}

// Statuses returns the latest status of every context on commit, by
// context.
func (c *Client) Statuses(ctx context.Context, commit string) (map[string]Status, error) {
	out := map[string]Status{}
	for page := 1; page <= maxPages; page++ {
		b, err := c.get(ctx, c.Repo.statusesURL(commit, page))
		if err != nil {
			return nil, err
		}
		ss, err := c.Repo.parsePage(b)
		if err != nil {
			return nil, &Error{Method: http.MethodGet, Where: apiBase(c.Repo.API), Msg: "unreadable answer: " + err.Error()}
		}
		for _, s := range ss {
			// A forge lists the newest first; the first seen of a context is its latest.
			if _, dup := out[s.Context]; !dup {
				out[s.Context] = s
			}
		}
		if len(ss) < c.Repo.pageSize() {
			break
		}
	}
	return out, nil
}

// Error is a failed API call. It names the method, the API's scheme and
// host, the HTTP status and the start of the answer, never the token.
type Error struct {
	Method, Where string
	Code          int // 0: no answer
	Msg           string
}

func (e *Error) Error() string {
	if e.Code == 0 {
		return fmt.Sprintf("%s %s: %s", e.Method, e.Where, e.Msg)
	}
	return fmt.Sprintf("%s %s: HTTP %d%s", e.Method, e.Where, e.Code, e.Msg)
}

// Temporary reports whether asking again may help: no answer, a
// timeout, too many requests, or the forge's own failure.
func (e *Error) Temporary() bool {
	return e.Code == 0 || e.Code == http.StatusRequestTimeout || e.Code == http.StatusTooManyRequests || e.Code >= 500
}

func (c *Client) get(ctx context.Context, u string) ([]byte, error) {
	fail := func(code int, msg string) error {
		return &Error{Method: http.MethodGet, Where: apiBase(c.Repo.API), Code: code, Msg: msg}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fail(0, "the URL does not parse")
	}
	req.Header = c.Repo.header(c.Token)
	req.Header.Set("User-Agent", "syslet-forge/1")
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fail(0, err.Error())
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, fail(0, "reading the answer: "+err.Error())
	}
	code := resp.StatusCode
	switch {
	case code >= 300 && code < 400:
		return nil, fail(code, " (redirects are not followed: give the API's final URL)")
	case code < 200 || code >= 300:
		return nil, fail(code, excerpt(b, c.Token))
	case len(b) > maxAnswer:
		return nil, fail(0, fmt.Sprintf("the answer is larger than %d bytes", maxAnswer))
	}
	return b, nil
}

// excerpt is the start of an answer for an error message, after ": ",
// without the token.
func excerpt(b, token []byte) string {
	if s := redact.Answer(b, 160, token); s != "" {
		return ": " + s
	}
	return ""
}

// apiBase is the API's base as errors show it: scheme and host.
func apiBase(api string) string {
	u, err := url.Parse(api)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}
