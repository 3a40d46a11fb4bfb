package webhookd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/webhookd/queue"
)

const testToken = "forge-token-0123456789"

// receiver records the requests of notification targets and forges.
type receiver struct {
	mu   sync.Mutex
	reqs []recorded
	code int           // answer (default 201)
	hang chan struct{} // when set, requests wait for it
	srv  *httptest.Server
}

type recorded struct {
	method, path string
	header       http.Header
	body         []byte
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{code: 201}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, recorded{method: req.Method, path: req.URL.EscapedPath(), header: req.Header.Clone(), body: b})
		code, hang := r.code, r.hang
		r.mu.Unlock()
		if hang != nil {
			select {
			case <-hang:
			case <-req.Context().Done():
			}
			return
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(func() {
		r.mu.Lock()
		if r.hang != nil {
			close(r.hang)
			r.hang = nil
		}
		r.mu.Unlock()
		r.srv.Close()
	})
	return r
}

func (r *receiver) requests() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

// waitN waits until the receiver holds n requests.
func (r *receiver) waitN(t *testing.T, n int) []recorded {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got := r.requests(); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d requests; have %d", n, len(r.requests()))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func tokenFile(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "token")
	must(t, os.WriteFile(p, []byte(testToken+"\n"), 0o600))
	return p
}

// events are the event kinds a webhook receiver got, with their bodies.
func events(t *testing.T, reqs []recorded) ([]string, []notify.Event) {
	t.Helper()
	var kinds []string
	var evs []notify.Event
	for _, q := range reqs {
		var ev notify.Event
		if err := json.Unmarshal(q.body, &ev); err != nil {
			t.Fatalf("%s: %v", q.body, err)
		}
		kinds = append(kinds, string(ev.Event))
		evs = append(evs, ev)
	}
	return kinds, evs
}

// TestForgeStatusAndNotifications: a good and a failing deploy of each
// forge set pending, then success or failure, through that forge's
// statuses API (path, auth header, JSON fields), and notify started,
// then succeeded, failed or rolled-back.
func TestForgeStatusAndNotifications(t *testing.T) {
	for _, tc := range []struct {
		forge              Forge
		path, auth, failed string
		nameField          string
	}{
		{GitHub, "/repos/ops/infra/statuses/", "Bearer " + testToken, "failure", "context"},
		{Gitea, "/repos/ops/infra/statuses/", "token " + testToken, "failure", "context"},
		{Forgejo, "/repos/ops/infra/statuses/", "token " + testToken, "failure", "context"},
		{GitLab, "/projects/ops%2Finfra/statuses/", testToken, "failed", "name"},
	} {
		t.Run(string(tc.forge), func(t *testing.T) {
			forge, hook := newReceiver(t), newReceiver(t)
			dep := &fakeDeployer{rollBack: "bad"}
			f := newFixture(t, dep, fmt.Sprintf(`    status:
      forge: %s
      api: %s/api
      repo: ops/infra
      tokenFile: %s
      targetURL: https://dash.example/{hostname}/{commit}
notify:
  - type: webhook
    url: %s/hook
`, tc.forge, forge.srv.URL, tokenFile(t), hook.srv.URL))
			f.start()
			good := f.remote.commit(`{"v":"good"}`)
			f.push(GitHub, "refs/heads/main", good)
			f.wait("good applied", func(s queue.RepoStatus) bool { return s.LastApplied == good })
			bad := f.remote.commit(`{"v":"bad"}`)
			f.push(GitHub, "refs/heads/main", bad)
			f.wait("bad rolled back", func(s queue.RepoStatus) bool { return s.Last != nil && s.Last.Commit == bad && s.State == "idle" })

			reqs := forge.waitN(t, 4)
			var states []string
			for i, q := range reqs {
				commit := good
				if i >= 2 {
					commit = bad
				}
				if q.method != "POST" || q.path != "/api"+tc.path+commit {
					t.Errorf("request %d: %s %s", i, q.method, q.path)
				}
				auth := q.header.Get("Authorization")
				if tc.forge == GitLab {
					auth = q.header.Get("PRIVATE-TOKEN")
				}
				if auth != tc.auth || q.header.Get("Content-Type") != "application/json" {
					t.Errorf("request %d: headers %v", i, q.header)
				}
				if tc.forge == GitHub && (q.header.Get("Accept") != "application/vnd.github+json" || q.header.Get("X-GitHub-Api-Version") != "2022-11-28") {
					t.Errorf("GitHub headers %v", q.header)
				}
				var body map[string]string
				if err := json.Unmarshal(q.body, &body); err != nil {
					t.Fatal(err)
				}
				if body[tc.nameField] != "syslet/web1" && !strings.HasPrefix(body[tc.nameField], "syslet/") {
					t.Errorf("request %d: %s %q", i, tc.nameField, body[tc.nameField])
				}
				if body["target_url"] != "https://dash.example/"+f.d.cfg.Hostname+"/"+commit || body["description"] == "" || len(body["description"]) > 140 {
					t.Errorf("request %d: body %v", i, body)
				}
				for k := range body {
					if k != "state" && k != tc.nameField && k != "target_url" && k != "description" {
						t.Errorf("request %d: undocumented field %q", i, k)
					}
				}
				states = append(states, body["state"])
				if strings.Contains(string(q.body), testToken) {
					t.Errorf("token in the body")
				}
			}
			if want := "pending success pending " + tc.failed; strings.Join(states, " ") != want {
				t.Errorf("states %v, want %s", states, want)
			}
			var last map[string]string
			json.Unmarshal(reqs[3].body, &last)
			if !strings.HasPrefix(last["description"], "rolled back on ") {
				t.Errorf("rolled-back description %q", last["description"])
			}

			kinds, evs := events(t, hook.waitN(t, 4))
			if strings.Join(kinds, " ") != "started succeeded started rolled-back" {
				t.Errorf("events %v", kinds)
			}
			for _, ev := range evs {
				if ev.Source.Kind != "git" || ev.Source.Repo != "infra" || ev.Source.Commit == "" || !strings.HasPrefix(ev.Source.Trigger, "github push") || ev.Host == "" {
					t.Errorf("event source %+v", ev)
				}
			}
			if rb := evs[3]; rb.Source.Commit != bad || rb.Stage != queue.StageGate || len(rb.Failing) != 1 || rb.DurationSeconds <= 0 {
				t.Errorf("rolled-back event %+v", rb)
			}
			// A delivery is counted once its answer is read, a moment after
			// the receiver has recorded it: wait for the counts.
			for _, want := range []string{
				`webhookd_commit_statuses_total{repo="infra",result="sent"} 4`,
				`webhookd_notifications_total{result="sent",target="webhook-1"} 4`,
			} {
				deadline := time.Now().Add(10 * time.Second)
				for m := f.metrics(); !strings.Contains(m, want); m = f.metrics() {
					if time.Now().After(deadline) {
						t.Errorf("metrics lack %q:\n%s", want, grep(m, "notifications_total", "commit_statuses_total"))
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}

// TestFailuresBeforeTheApply: a commit without the host's directory
// fails at checkout: failed (no started), and its status goes pending →
// failure; a failed apply notifies failed.
func TestFailuresBeforeTheApply(t *testing.T) {
	forge, hook := newReceiver(t), newReceiver(t)
	dep := &fakeDeployer{}
	f := newFixture(t, dep, fmt.Sprintf("    status: {forge: github, api: %s, repo: ops/infra, tokenFile: %s}\nnotify: [{type: webhook, url: %s}]\n", forge.srv.URL, tokenFile(t), hook.srv.URL))
	f.start()
	wt, _ := f.remote.repo.Worktree()
	os.WriteFile(filepath.Join(f.remote.dir, "README"), []byte("x"), 0o644)
	wt.Add("README")
	c, err := wt.Commit("no host dir", testCommitOpts())
	must(t, err)
	f.push(GitHub, "refs/heads/main", c.String())
	f.wait("checkout failure", func(s queue.RepoStatus) bool { return s.Last != nil && s.Last.Result() == queue.ResultFailed })
	kinds, evs := events(t, hook.waitN(t, 1))
	if strings.Join(kinds, " ") != "failed" || evs[0].Stage != queue.StageCheckout || !strings.Contains(evs[0].Error, "has no directory") {
		t.Fatalf("events %v %+v", kinds, evs)
	}
	var states []string
	for _, q := range forge.waitN(t, 2) {
		var b map[string]string
		json.Unmarshal(q.body, &b)
		states = append(states, b["state"]+": "+b["description"])
	}
	if len(states) != 2 || states[0] != "pending: deploying to "+f.d.cfg.Hostname || !strings.HasPrefix(states[1], "failure: failed on ") {
		t.Fatalf("states %q", states)
	}

	dep.err = errors.New("apply failed: web.service did not start")
	a := f.remote.commit(`{"v":"a"}`)
	f.push(GitHub, "refs/heads/main", a)
	f.wait("apply failure", func(s queue.RepoStatus) bool { return s.Last != nil && s.Last.Commit == a && s.State == "idle" })
	kinds, _ = events(t, hook.waitN(t, 3))
	if strings.Join(kinds, " ") != "failed started failed" {
		t.Fatalf("events %v", kinds)
	}
}

// TestReceiverDownOrHanging: deploys succeed while a notification target
// and a forge hang or are down, and each failed delivery is counted (that
// a hanging one costs the deploy nothing is TestHangingReceiverHoldsNoDeploy).
func TestReceiverDownOrHanging(t *testing.T) {
	hang := newReceiver(t)
	hang.hang = make(chan struct{})
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()

	dep := &fakeDeployer{}
	f := newFixture(t, dep, fmt.Sprintf(`    status: {forge: github, api: %s, repo: ops/infra, tokenFile: %s, timeout: 200ms, attempts: 2}
notify:
  - {name: hanging, type: webhook, url: %s, timeout: 200ms, attempts: 2}
  - {name: down, type: webhook, url: %s, timeout: 200ms, attempts: 2}
`, hang.srv.URL, tokenFile(t), hang.srv.URL, downURL))
	f.start()
	for i := range 3 {
		c := f.remote.commit(fmt.Sprintf(`{"v":%d}`, i))
		f.push(GitHub, "refs/heads/main", c)
		st := f.wait("applied", func(s queue.RepoStatus) bool { return s.LastApplied == c })
		if st.Last.Result() != queue.ResultSuccess {
			t.Fatalf("deploy %d: %s", i, st.Last.Result())
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		m := f.metrics()
		if strings.Contains(m, `webhookd_notifications_total{result="failed",target="down"} 6`) &&
			strings.Contains(m, `webhookd_notifications_total{result="failed",target="hanging"} 6`) &&
			strings.Contains(m, `webhookd_commit_statuses_total{repo="infra",result="failed"} 6`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("failures not counted:\n%s", grep(m, "notifications_total", "commit_statuses_total"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHangingReceiverHoldsNoDeploy: with a forge and a notification target
// that answer nothing for the longest timeout allowed (a minute), three pushes still deploy one after the
// other while their deliveries are still waiting, none of them counted yet:
// a deploy never waits for what it tells. (A deploy that waited would not
// be seen applied within the fixture's 20-second wait.)
func TestHangingReceiverHoldsNoDeploy(t *testing.T) {
	hang := newReceiver(t)
	hang.hang = make(chan struct{})
	f := newFixture(t, &fakeDeployer{}, fmt.Sprintf(`    status: {forge: github, api: %s, repo: ops/infra, tokenFile: %s, timeout: 1m, attempts: 1}
notify:
  - {name: hanging, type: webhook, url: %s, timeout: 1m, attempts: 1}
`, hang.srv.URL, tokenFile(t), hang.srv.URL))
	// Cleanups run last-registered first: the deliveries are let go before
	// the fixture stops webhookd, which waits for them.
	t.Cleanup(func() {
		hang.mu.Lock()
		close(hang.hang)
		hang.hang = nil
		hang.mu.Unlock()
	})
	f.start()
	for i := range 3 {
		c := f.remote.commit(fmt.Sprintf(`{"v":%d}`, i))
		f.push(GitHub, "refs/heads/main", c)
		st := f.wait("applied", func(s queue.RepoStatus) bool { return s.LastApplied == c && s.State == "idle" })
		if st.Last.Result() != queue.ResultSuccess {
			t.Fatalf("deploy %d: %s", i, st.Last.Result())
		}
	}
	if len(hang.requests()) == 0 {
		t.Fatal("no delivery reached the hanging receiver")
	}
	counted := grep(f.metrics(), "notifications_total", "commit_statuses_total")
	for _, l := range strings.Split(counted, "\n") {
		if l != "" && !strings.HasSuffix(l, " 0") {
			t.Fatalf("a delivery to the hanging receiver ended:\n%s", counted)
		}
	}
}

func grep(s string, words ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) && !strings.HasPrefix(l, "#") {
				out = append(out, l)
			}
		}
	}
	return strings.Join(out, "\n")
}

func testCommitOpts() *git.CommitOptions {
	return &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example", When: time.Unix(1800000000, 0)}}
}
