package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const (
	sha   = "0123456789abcdef0123456789abcdef01234567"
	token = "tok-0123456789"
)

// fakeForge answers the statuses read of one forge dialect from a list of
// (context, word) pairs, newest first, the way the forge documents it:
// its path, its auth header, its page size and its field names.
type fakeForge struct {
	t        *testing.T
	kind     Kind
	mu       sync.Mutex
	statuses [][2]string // context, word; the latest of each context
	pages    []string    // the page parameters asked for
	code     int         // answer this instead, when set
	body     string
}

func (f *fakeForge) set(ctx, word string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, s := range f.statuses {
		if s[0] == ctx {
			f.statuses = append(f.statuses[:i], f.statuses[i+1:]...)
			break
		}
	}
	f.statuses = append([][2]string{{ctx, word}}, f.statuses...)
}

func (f *fakeForge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.code != 0 {
		w.WriteHeader(f.code)
		fmt.Fprint(w, f.body)
		return
	}
	var path, sizeParam, auth, authWant string
	var max int
	switch f.kind {
	case GitHub:
		path, sizeParam, max = "/repos/ops/infra/commits/"+sha+"/status", "per_page", 100
		auth, authWant = r.Header.Get("Authorization"), "Bearer "+token
		if r.Header.Get("Accept") != "application/vnd.github+json" || r.Header.Get("X-GitHub-Api-Version") == "" {
			http.Error(w, "media type", http.StatusUnsupportedMediaType)
			return
		}
	case Gitea, Forgejo:
		path, sizeParam, max = "/repos/ops/infra/commits/"+sha+"/status", "limit", 50
		auth, authWant = r.Header.Get("Authorization"), "token "+token
	case GitLab:
		path, sizeParam, max = "/projects/ops%2Finfra/repository/commits/"+sha+"/statuses", "per_page", 100
		auth, authWant = r.Header.Get("PRIVATE-TOKEN"), token
	}
	if r.Method != http.MethodGet || r.URL.EscapedPath() != path {
		http.Error(w, "no route "+r.Method+" "+r.URL.EscapedPath(), http.StatusNotFound)
		return
	}
	if auth != authWant {
		http.Error(w, `{"message":"Bad credentials `+auth+`"}`, http.StatusUnauthorized)
		return
	}
	size, _ := strconv.Atoi(r.URL.Query().Get(sizeParam))
	if size <= 0 || size > max {
		size = max // forges clamp the page size
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page < 1 {
		page = 1
	}
	f.pages = append(f.pages, r.URL.Query().Get("page"))
	lo, hi := min((page-1)*size, len(f.statuses)), min(page*size, len(f.statuses))
	var items []map[string]string
	for _, s := range f.statuses[lo:hi] {
		switch f.kind {
		case GitHub:
			items = append(items, map[string]string{"context": s[0], "state": s[1], "description": "on " + s[0]})
		case Gitea, Forgejo:
			items = append(items, map[string]string{"context": s[0], "status": s[1], "description": "on " + s[0]})
		case GitLab:
			items = append(items, map[string]string{"name": s[0], "status": s[1], "description": "on " + s[0]})
		}
	}
	if f.kind == GitLab {
		json.NewEncoder(w).Encode(items)
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"state": "pending", "sha": sha, "total_count": len(items), "statuses": items})
}

func serve(t *testing.T, kind Kind) (*fakeForge, *Client) {
	t.Helper()
	f := &fakeForge{t: t, kind: kind}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, &Client{Repo: Repo{Kind: kind, API: srv.URL, Path: "ops/infra"}, Token: []byte(token)}
}

// Each forge's statuses are read in its own format, every page of them.
func TestStatusesEveryForgeEveryPage(t *testing.T) {
	for _, kind := range Kinds {
		t.Run(string(kind), func(t *testing.T) {
			f, c := serve(t, kind)
			n := 130 // more than one page everywhere
			for i := range n {
				word := "success"
				if i == 7 {
					word = map[Kind]string{GitHub: "error", Gitea: "warning", Forgejo: "failure", GitLab: "failed"}[kind]
				}
				f.set(fmt.Sprintf("syslet/web%03d", i), word)
			}
			f.set("syslet/web200", map[Kind]string{GitHub: "pending", Gitea: "pending", Forgejo: "pending", GitLab: "running"}[kind])
			got, err := c.Statuses(context.Background(), sha)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != n+1 {
				t.Fatalf("%d statuses, want %d (pages asked: %v)", len(got), n+1, f.pages)
			}
			if s := got["syslet/web007"]; s.State != Failure || s.Word == "" || s.Description != "on syslet/web007" {
				t.Errorf("web007: %+v", s)
			}
			if s := got["syslet/web200"]; s.State != Pending {
				t.Errorf("web200: %+v", s)
			}
			if s := got["syslet/web000"]; s.State != Success || s.Context != "syslet/web000" {
				t.Errorf("web000: %+v", s)
			}
		})
	}
}

// A refusal names the forge's host and status and never the token, even
// when the forge's answer repeats it.
func TestStatusesErrorsHideTheToken(t *testing.T) {
	_, c := serve(t, GitHub)
	c.Token = []byte("wrong-" + token)
	_, err := c.Statuses(context.Background(), sha)
	if err == nil || Temporary(err) {
		t.Fatalf("want a permanent error, got %v", err)
	}
	if strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "(secret)") {
		t.Errorf("error: %v", err)
	}
	if strings.Contains(err.Error(), "/repos/") {
		t.Errorf("error names the path: %v", err)
	}
}

func TestStatusesRefusesRedirectsAndRetriesFailures(t *testing.T) {
	f, c := serve(t, Gitea)
	f.code = 302
	if _, err := c.Statuses(context.Background(), sha); err == nil || Temporary(err) || !strings.Contains(err.Error(), "redirects are not followed") {
		t.Errorf("redirect: %v", err)
	}
	f.code, f.body = 503, "down for maintenance"
	if _, err := c.Statuses(context.Background(), sha); !Temporary(err) {
		t.Errorf("503 is worth another try: %v", err)
	}
	f.code, f.body = 200, "<html>"
	if _, err := c.Statuses(context.Background(), sha); err == nil || !strings.Contains(err.Error(), "unreadable answer") {
		t.Errorf("html: %v", err)
	}
	c.Repo.API = "http://127.0.0.1:1"
	if _, err := c.Statuses(context.Background(), sha); !Temporary(err) {
		t.Errorf("no answer is worth another try: %v", err)
	}
}

// What SetRequest sends is what each forge documents (the receiver of
// the integration tests judges the same).
func TestSetRequest(t *testing.T) {
	long := strings.Repeat("é", 100)
	for _, tc := range []struct {
		kind              Kind
		url, auth, header string
		want              map[string]string
	}{
		{GitHub, "https://api.example/repos/ops/infra/statuses/" + sha, "Bearer " + token, "Authorization",
			map[string]string{"state": "failure", "context": "syslet/web1"}},
		{Gitea, "https://api.example/repos/ops/infra/statuses/" + sha, "token " + token, "Authorization",
			map[string]string{"state": "failure", "context": "syslet/web1"}},
		{GitLab, "https://api.example/projects/ops%2Finfra/statuses/" + sha, token, "PRIVATE-TOKEN",
			map[string]string{"state": "failed", "name": "syslet/web1"}},
	} {
		r := Repo{Kind: tc.kind, API: "https://api.example", Path: "ops/infra"}
		u, h, b := r.SetRequest(sha, Status{Context: "syslet/web1", State: Failure, Description: long, TargetURL: "https://x.example/" + sha}, []byte(token))
		if u != tc.url || h.Get(tc.header) != tc.auth || h.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %s %v", tc.kind, u, h)
		}
		var body map[string]string
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatal(err)
		}
		for k, v := range tc.want {
			if body[k] != v {
				t.Errorf("%s: %s = %q, want %q", tc.kind, k, body[k], v)
			}
		}
		if len(body["description"]) > MaxDescription || !strings.HasSuffix(body["description"], "…") || body["target_url"] == "" {
			t.Errorf("%s: %q", tc.kind, body["description"])
		}
	}
}

func TestChecks(t *testing.T) {
	for _, api := range []string{"https://git.example/api/v1", "http://127.0.0.1:8090/gitea", "http://localhost/api/v4"} {
		if err := CheckAPI(api); err != nil {
			t.Errorf("%s: %v", api, err)
		}
	}
	for _, api := range []string{"http://git.example/api/v1", "https://user:pw@git.example", "https://git.example/?token=x", "git.example", "ftp://git.example"} {
		if err := CheckAPI(api); err == nil {
			t.Errorf("%s accepted", api)
		}
	}
	for _, p := range []string{"ops", "ops/", "/infra", "ops/infra/x", "ops/infra?x", ""} {
		if err := CheckPath(GitHub, p); err == nil {
			t.Errorf("github %q accepted", p)
		}
	}
	for _, p := range []string{"ops/infra", "group/sub/infra", "42"} {
		if err := CheckPath(GitLab, p); err != nil {
			t.Errorf("gitlab %q: %v", p, err)
		}
	}
	if err := CheckPath(GitLab, "group//infra"); err == nil {
		t.Error("gitlab group//infra accepted")
	}
	if _, err := ParseKind("bitbucket"); err == nil {
		t.Error("bitbucket accepted")
	}
}

func TestStateWords(t *testing.T) {
	for word, want := range map[string]State{
		"success": Success, "pending": Pending, "running": Pending, "created": Pending,
		"failure": Failure, "error": Failure, "failed": Failure, "canceled": Failure, "warning": Failure, "skipped": Failure, "": Failure,
	} {
		if got := stateOf(word); got != want {
			t.Errorf("%q: %s, want %s", word, got, want)
		}
	}
}

// Temporary reports whether err is a read worth trying again, as package
// fleet asks it.
func Temporary(err error) bool {
	var e interface{ Temporary() bool }
	return errors.As(err, &e) && e.Temporary()
}
