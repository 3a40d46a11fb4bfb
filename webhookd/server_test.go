package webhookd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/syslet/syslet/pkg/verdict"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/webhookd/clone"
	"github.com/syslet/syslet/webhookd/config"
	"github.com/syslet/syslet/webhookd/queue"
)

const testSecret = "0123456789abcdef0123456789abcdef"

// remote is a git repository on disk standing in for the forge.
type remote struct {
	t    *testing.T
	dir  string
	repo *git.Repository
	n    int
}

func newRemote(t *testing.T) *remote {
	t.Helper()
	dir := t.TempDir()
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
	must(t, err)
	return &remote{t: t, dir: dir, repo: r}
}

// commit writes hosts/web1/app.json = content on the current branch and
// commits it, returning the commit id.
func (r *remote) commit(content string) string {
	r.t.Helper()
	wt, err := r.repo.Worktree()
	must(r.t, err)
	p := filepath.Join(r.dir, "hosts", "web1", "app.json")
	must(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(r.t, os.WriteFile(p, []byte(content), 0o644))
	_, err = wt.Add("hosts/web1/app.json")
	must(r.t, err)
	r.n++
	h, err := wt.Commit(fmt.Sprintf("change %d", r.n), &git.CommitOptions{Author: &object.Signature{Name: "t", Email: "t@example", When: time.Unix(int64(1700000000+r.n), 0)}})
	must(r.t, err)
	return h.String()
}

// branch switches the work tree to branch (created from HEAD if new).
func (r *remote) branch(name string, create bool) {
	r.t.Helper()
	wt, err := r.repo.Worktree()
	must(r.t, err)
	must(r.t, wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName(name), Create: create}))
}

// fakeDeployer records deploys; with a gate it blocks each deploy until
// the test sends on it.
type fakeDeployer struct {
	mu      sync.Mutex
	got     []queue.DeployRequest
	content []string
	gate    chan struct{}
	started chan string
	err     error
	// rollBack makes a deploy of a commit whose app.json holds this text
	// fail its health gate and roll back.
	rollBack string
	// drift is what Check finds; checks are the checks asked for.
	drift  []notify.DriftUnit
	checks []queue.DeployRequest
	busy   string
}

// Check reports the fake's drift.
func (f *fakeDeployer) Check(ctx context.Context, req queue.DeployRequest) (queue.CheckReport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checks = append(f.checks, req)
	ev := notify.Event{Event: notify.Drift, Host: "web1", Summary: fmt.Sprintf("%d unit(s) differ", len(f.drift)), Drift: f.drift}
	return queue.CheckReport{Units: append([]notify.DriftUnit(nil), f.drift...), Busy: f.busy, Event: &ev}, nil
}

func (f *fakeDeployer) Deploy(ctx context.Context, req queue.DeployRequest) (queue.DeployReport, error) {
	b, _ := os.ReadFile(filepath.Join(req.Dir, "app.json"))
	if f.started != nil {
		f.started <- req.Commit
	}
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, req)
	f.content = append(f.content, string(b))
	run := fmt.Sprintf("run-%d", len(f.got))
	if req.Started != nil {
		req.Started(notify.Event{Event: notify.Started, Run: run, Summary: "1 to change"})
	}
	if f.rollBack != "" && strings.Contains(string(b), f.rollBack) {
		err := errors.New("rolled back to run run-1")
		return queue.DeployReport{RunID: run, Summary: "rolled back to run run-1: web.service restarted 5 time(s)",
			Verdict: verdict.RolledBack, RolledBackTo: "run-1", Failing: []string{"web.service: restarted 5 time(s) by Restart="},
			Event: &notify.Event{Event: notify.RolledBack, Run: run, Error: err.Error(),
				Failing: []notify.Unit{{Unit: "web.service", Reason: "restarted 5 time(s) by Restart=", Log: []string{"web: cannot start"}}}}}, err
	}
	ev, v := &notify.Event{Event: notify.Succeeded, Run: run, Summary: "1 to change"}, verdict.Applied
	if f.err != nil {
		ev, v = &notify.Event{Event: notify.Failed, Run: run, Summary: "1 to change", Error: f.err.Error()}, verdict.Failed
	}
	return queue.DeployReport{RunID: run, Summary: "1 to change", Event: ev, Verdict: v}, f.err
}

func (f *fakeDeployer) deploys() ([]queue.DeployRequest, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]queue.DeployRequest(nil), f.got...), append([]string(nil), f.content...)
}

// countingCheckout counts fetches, to prove a refused delivery causes no git traffic.
type countingCheckout struct {
	inner   clone.Checkout
	fetches *atomic.Int32
}

func (c countingCheckout) Fetch(ctx context.Context) (string, error) {
	c.fetches.Add(1)
	return c.inner.Fetch(ctx)
}
func (c countingCheckout) Contains(from, commit string) (bool, error) {
	return c.inner.Contains(from, commit)
}
func (c countingCheckout) Checkout(commit string) (string, error) { return c.inner.Checkout(commit) }
func (c countingCheckout) Repack(ctx context.Context) (clone.Repacked, error) {
	return c.inner.Repack(ctx)
}
func (c countingCheckout) RawCommit(commit string) ([]byte, error) {
	return c.inner.RawCommit(commit)
}

type fixture struct {
	t       *testing.T
	remote  *remote
	d       *Daemon
	fetches atomic.Int32
	state   string
	n       int
}

func newFixture(t *testing.T, dep queue.Deployer, extra string) *fixture {
	t.Helper()
	f := &fixture{t: t, remote: newRemote(t), state: t.TempDir()}
	secret := filepath.Join(t.TempDir(), "secret")
	must(t, os.WriteFile(secret, []byte(testSecret+"\n"), 0o600))
	cfg, err := config.Parse("test.yaml", []byte(fmt.Sprintf(`
stateDir: %s
repos:
  - name: infra
    url: %s
    branch: main
    path: hosts/{hostname}
    secretFile: %s
%s`, f.state, f.remote.dir, secret, extra)), "web1")
	must(t, err)
	f.d, err = New(cfg, Options{
		Deployer: dep,
		Log:      zerolog.New(zerolog.NewTestWriter(t)),
		NewCheckout: func(r *config.Repo, dir string) clone.Checkout {
			return countingCheckout{inner: clone.New(r, dir), fetches: &f.fetches}
		},
	})
	must(t, err)
	return f
}

func (f *fixture) start() {
	f.d.Start()
	f.t.Cleanup(f.d.Stop)
}

// post sends a delivery to the handler and returns the code and reply.
func (f *fixture) post(path string, headers map[string]string, body []byte) (int, reply) {
	f.t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	f.d.router.ServeHTTP(rec, req)
	var rep reply
	json.Unmarshal(rec.Body.Bytes(), &rep)
	return rec.Code, rep
}

// withNonce adds a field to a JSON object body that makes it one of its own.
func withNonce(body []byte, nonce string) []byte {
	return append(bytes.TrimSuffix(body, []byte("}")), fmt.Sprintf(`,"nonce":%q}`, nonce)...)
}

func pushBody(ref, after string) []byte {
	return []byte(fmt.Sprintf(`{"ref":%q,"before":"","after":%q,"repository":{"full_name":"ops/infra"}}`, ref, after))
}

// push posts a correctly signed push event in forge's format, with a fresh
// delivery id and a body of its own (as two real pushes have: a forge's
// payload tells them apart).
func (f *fixture) push(forge Forge, ref, after string) (int, reply) {
	f.t.Helper()
	f.n++
	id := fmt.Sprintf("delivery-%d", f.n)
	body := withNonce(pushBody(ref, after), id)
	sig := sign([]byte(testSecret), body)
	var h map[string]string
	switch forge {
	case GitHub:
		h = map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": id, "X-Hub-Signature-256": "sha256=" + sig}
	case Gitea:
		h = map[string]string{"X-Gitea-Event": "push", "X-Gitea-Delivery": id, "X-Gitea-Signature": sig}
	case Forgejo:
		h = map[string]string{"X-Forgejo-Event": "push", "X-Forgejo-Delivery": id, "X-Forgejo-Signature": sig}
	case GitLab:
		body = withNonce([]byte(fmt.Sprintf(`{"object_kind":"push","ref":%q,"after":%q,"checkout_sha":%q}`, ref, after, after)), id)
		h = map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Event-UUID": id, "X-Gitlab-Token": testSecret}
	}
	return f.post("/hooks/infra", h, body)
}

// wait polls the repository's status until ok holds.
func (f *fixture) wait(what string, ok func(queue.RepoStatus) bool) queue.RepoStatus {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := f.d.Status()[0]
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out waiting for %s; status %+v last %+v", what, st, st.Last)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (f *fixture) metrics() string {
	rec := httptest.NewRecorder()
	f.d.router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

func TestPushDeploysExactlyThatCommit(t *testing.T) {
	dep := &fakeDeployer{}
	f := newFixture(t, dep, "")
	a := f.remote.commit(`{"v":"a"}`)
	b := f.remote.commit(`{"v":"b"}`)
	f.start()

	// A push of a is deployed as a, although the branch is already at b.
	code, rep := f.push(GitHub, "refs/heads/main", a)
	if code != http.StatusAccepted || rep.Status != "queued" || rep.Commit != a {
		t.Fatalf("push: %d %+v", code, rep)
	}
	st := f.wait("a applied", func(s queue.RepoStatus) bool { return s.LastApplied == a })
	if st.Last.Result() != queue.ResultSuccess || st.Last.Summary != "1 to change" || st.Last.RunID != "run-1" || st.State != "idle" {
		t.Fatalf("status after a: %+v %+v", st, st.Last)
	}
	got, content := dep.deploys()
	if len(got) != 1 || got[0].Commit != a || got[0].Source != "git infra@"+a || content[0] != `{"v":"a"}` ||
		got[0].Dir != filepath.Join(f.state, "infra", "hosts", "web1") {
		t.Fatalf("deploys: %+v %q", got, content)
	}

	// Every forge's format deploys.
	for i, forge := range []Forge{Gitea, Forgejo, GitLab} {
		c := f.remote.commit(fmt.Sprintf(`{"v":"%s"}`, forge))
		if code, rep := f.push(forge, "refs/heads/main", c); code != http.StatusAccepted || rep.Status != "queued" {
			t.Fatalf("%s push: %d %+v", forge, code, rep)
		}
		f.wait(string(forge)+" applied", func(s queue.RepoStatus) bool { return s.LastApplied == c })
		if _, content := dep.deploys(); content[i+1] != fmt.Sprintf(`{"v":"%s"}`, forge) {
			t.Fatalf("%s deployed %q", forge, content[i+1])
		}
	}
	_ = b

	// The status survives a restart of the daemon.
	dep2 := &fakeDeployer{}
	cfg := *f.d.cfg
	d2, err := New(&cfg, Options{Deployer: dep2, Log: zerolog.Nop()})
	must(t, err)
	if st := d2.Status()[0]; st.LastApplied != f.d.Status()[0].LastApplied || st.Last == nil || st.Last.Result() != queue.ResultSuccess {
		t.Fatalf("status not restored: %+v", st)
	}
	m := f.metrics()
	for _, want := range []string{
		`webhookd_deliveries_total{outcome="accepted",repo="infra"} 4`,
		`webhookd_deploys_total{repo="infra",result="success"} 4`,
		`webhookd_deploys_total{repo="infra",result="failed"} 0`,
		`webhookd_deploy_duration_seconds_count{repo="infra",result="success"} 4`,
		`webhookd_last_success_timestamp_seconds{repo="infra"} 1.`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestRefusedDeliveriesCauseNoGitTraffic(t *testing.T) {
	dep := &fakeDeployer{}
	f := newFixture(t, dep, "")
	a := f.remote.commit(`{"v":"a"}`)
	f.start()
	body := pushBody("refs/heads/main", a)
	forged := sign([]byte("not-the-secret-at-all"), body)
	big := bytes.Repeat([]byte("x"), MaxBody+1)

	for _, tc := range []struct {
		name    string
		path    string
		headers map[string]string
		body    []byte
		code    int
		status  string
	}{
		{"forged github", "/hooks/infra", map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "f1", "X-Hub-Signature-256": "sha256=" + forged}, body, 401, "refused"},
		{"forged gitea", "/hooks/infra", map[string]string{"X-Gitea-Event": "push", "X-Gitea-Delivery": "f2", "X-Gitea-Signature": forged}, body, 401, "refused"},
		{"wrong gitlab token", "/hooks/infra", map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": "guess"}, body, 401, "refused"},
		{"unsigned", "/hooks/infra", map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "f3"}, body, 401, "refused"},
		{"body signed, then altered", "/hooks/infra", map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "f4", "X-Hub-Signature-256": "sha256=" + sign([]byte(testSecret), body)}, append(body, ' '), 401, "refused"},
		{"oversized", "/hooks/infra", map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + sign([]byte(testSecret), big)}, big, 413, "refused"},
		{"unknown repository", "/hooks/nope", map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + sign([]byte(testSecret), body)}, body, 404, "refused"},
		{"signed garbage", "/hooks/infra", map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "g1", "X-Hub-Signature-256": "sha256=" + sign([]byte(testSecret), []byte("{"))}, []byte("{"), 400, "refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, rep := f.post(tc.path, tc.headers, tc.body)
			if code != tc.code || rep.Status != tc.status {
				t.Fatalf("got %d %+v, want %d %s", code, rep, tc.code, tc.status)
			}
		})
	}
	// A chunked body has no Content-Length: the cap still holds while reading.
	req := httptest.NewRequest(http.MethodPost, "/hooks/infra", io.MultiReader(bytes.NewReader(big)))
	req.ContentLength = -1
	rec := httptest.NewRecorder()
	f.d.router.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked oversized body: %d", rec.Code)
	}

	// Verified, but nothing to deploy.
	sig := func(b []byte) string { return "sha256=" + sign([]byte(testSecret), b) }
	if code, rep := f.post("/hooks/infra", map[string]string{"X-GitHub-Event": "ping", "X-GitHub-Delivery": "p1", "X-Hub-Signature-256": sig([]byte(`{"zen":"z"}`))}, []byte(`{"zen":"z"}`)); code != 200 || rep.Status != "pong" {
		t.Fatalf("ping: %d %+v", code, rep)
	}
	other := pushBody("refs/heads/dev", a)
	if code, rep := f.post("/hooks/infra", map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "o1", "X-Hub-Signature-256": sig(other)}, other); code != 202 || rep.Status != "ignored" || !strings.Contains(rep.Reason, "refs/heads/dev") {
		t.Fatalf("other branch: %d %+v", code, rep)
	}
	tag := pushBody("refs/tags/v1", a)
	if code, rep := f.post("/hooks/infra", map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "o2", "X-Hub-Signature-256": sig(tag)}, tag); code != 202 || rep.Status != "ignored" {
		t.Fatalf("tag: %d %+v", code, rep)
	}
	del := pushBody("refs/heads/main", "0000000000000000000000000000000000000000")
	if code, rep := f.post("/hooks/infra", map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "o3", "X-Hub-Signature-256": sig(del)}, del); code != 202 || rep.Status != "ignored" || !strings.Contains(rep.Reason, "deleted") {
		t.Fatalf("deletion: %d %+v", code, rep)
	}
	if code, rep := f.post("/hooks/infra", map[string]string{"X-GitHub-Event": "issues", "X-GitHub-Delivery": "o4", "X-Hub-Signature-256": sig([]byte(`{}`))}, []byte(`{}`)); code != 202 || rep.Status != "ignored" {
		t.Fatalf("issues event: %d %+v", code, rep)
	}
	if n := f.fetches.Load(); n != 0 {
		t.Fatalf("%d fetches for deliveries that deploy nothing", n)
	}
	if _, err := os.Stat(filepath.Join(f.state, "infra")); !os.IsNotExist(err) {
		t.Fatalf("a checkout exists after refused deliveries: %v", err)
	}

	// A real push, then its replay.
	h := map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "r1", "X-Hub-Signature-256": sig(body)}
	if code, _ := f.post("/hooks/infra", h, body); code != 202 {
		t.Fatalf("push: %d", code)
	}
	if code, rep := f.post("/hooks/infra", h, body); code != http.StatusConflict || !strings.Contains(rep.Reason, "replay") {
		t.Fatalf("replay: %d %+v", code, rep)
	}
	// The same signed body under a fresh delivery id (which no forge
	// signs) is a replay too.
	h2 := map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "r2-fresh", "X-Hub-Signature-256": sig(body)}
	if code, rep := f.post("/hooks/infra", h2, body); code != http.StatusConflict || !strings.Contains(rep.Reason, "replay") {
		t.Fatalf("replay under a new delivery id: %d %+v", code, rep)
	}
	f.wait("a applied", func(s queue.RepoStatus) bool { return s.LastApplied == a })
	if got, _ := dep.deploys(); len(got) != 1 {
		t.Fatalf("%d deploys, want 1", len(got))
	}
	m := f.metrics()
	for _, want := range []string{
		`webhookd_deliveries_total{outcome="unauthorized",repo="infra"} 5`,
		`webhookd_deliveries_total{outcome="too_large",repo="infra"} 2`,
		`webhookd_deliveries_total{outcome="unknown_repo",repo=""} 1`,
		`webhookd_deliveries_total{outcome="bad_request",repo="infra"} 1`,
		`webhookd_deliveries_total{outcome="ping",repo="infra"} 1`,
		`webhookd_deliveries_total{outcome="ignored",repo="infra"} 4`,
		`webhookd_deliveries_total{outcome="replayed",repo="infra"} 2`,
		`webhookd_deliveries_total{outcome="accepted",repo="infra"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestBurstCoalescesIntoOneFollowUp(t *testing.T) {
	dep := &fakeDeployer{gate: make(chan struct{}), started: make(chan string, 10)}
	f := newFixture(t, dep, "")
	var commits []string
	for i := range 10 {
		commits = append(commits, f.remote.commit(fmt.Sprintf(`{"v":%d}`, i)))
	}
	f.start()
	f.push(GitHub, "refs/heads/main", commits[0])
	<-dep.started // the first deploy runs and holds
	for _, c := range commits[1:] {
		if code, rep := f.push(GitHub, "refs/heads/main", c); code != 202 || !rep.Busy {
			t.Fatalf("push during deploy: %d %+v", code, rep)
		}
	}
	if st := f.d.Status()[0]; st.Queued != commits[9] || st.QueuedPushes != 9 || st.Deploying != commits[0] {
		t.Fatalf("status during deploy: %+v", st)
	}
	dep.gate <- struct{}{}
	<-dep.started
	dep.gate <- struct{}{}
	st := f.wait("last commit applied", func(s queue.RepoStatus) bool { return s.LastApplied == commits[9] && s.State == "idle" })
	got, _ := dep.deploys()
	if len(got) != 2 || got[1].Commit != commits[9] || st.Last.Pushes != 9 {
		t.Fatalf("deploys %+v, last %+v; want 2, the second of %s covering 9 pushes", got, st.Last, commits[9])
	}
}

func TestOutOfOrderPushesDeployTheNewest(t *testing.T) {
	dep := &fakeDeployer{gate: make(chan struct{}), started: make(chan string, 10)}
	f := newFixture(t, dep, "")
	a := f.remote.commit(`{"v":"a"}`)
	b := f.remote.commit(`{"v":"b"}`)
	c := f.remote.commit(`{"v":"c"}`)
	f.start()
	f.push(GitHub, "refs/heads/main", a)
	<-dep.started
	f.push(GitHub, "refs/heads/main", c) // delivered before b
	f.push(GitHub, "refs/heads/main", b)
	dep.gate <- struct{}{}
	if got := <-dep.started; got != c {
		t.Fatalf("follow-up deploys %s, want the newest %s", got, c)
	}
	dep.gate <- struct{}{}
	f.wait("c applied", func(s queue.RepoStatus) bool { return s.LastApplied == c && s.State == "idle" })

	// b arrives again later (a redelivery): older than what is applied, skipped.
	f.push(GitHub, "refs/heads/main", b)
	st := f.wait("b skipped", func(s queue.RepoStatus) bool { return s.Last.Commit == b })
	if st.Last.Result() != queue.ResultSkipped || st.LastApplied != c {
		t.Fatalf("late push: %+v", st.Last)
	}
	if got, _ := dep.deploys(); len(got) != 2 {
		t.Fatalf("%d deploys, want 2", len(got))
	}
}

func TestCommitNotOnBranchFails(t *testing.T) {
	dep := &fakeDeployer{}
	f := newFixture(t, dep, "")
	f.remote.commit(`{"v":"a"}`)
	f.remote.branch("side", true)
	side := f.remote.commit(`{"v":"side"}`)
	f.start()
	if code, _ := f.push(GitHub, "refs/heads/main", side); code != 202 {
		t.Fatalf("push: %d", code)
	}
	st := f.wait("failure", func(s queue.RepoStatus) bool { return s.Last != nil })
	if st.Last.Result() != queue.ResultFailed || st.Last.Stage() != queue.StageFetch || !strings.Contains(st.LastError, "is not reachable from main") || st.LastApplied != "" {
		t.Fatalf("status: %+v %+v", st, st.Last)
	}
	if got, _ := dep.deploys(); len(got) != 0 {
		t.Fatalf("deployed %+v", got)
	}
	if m := f.metrics(); !strings.Contains(m, `webhookd_deploys_total{repo="infra",result="failed"} 1`) {
		t.Fatal("failure not in metrics")
	}
}

func TestUnreachableRemoteFails(t *testing.T) {
	dep := &fakeDeployer{}
	f := newFixture(t, dep, "")
	a := f.remote.commit(`{"v":"a"}`)
	must(t, os.RemoveAll(f.remote.dir))
	f.start()
	f.push(GitHub, "refs/heads/main", a)
	st := f.wait("failure", func(s queue.RepoStatus) bool { return s.Last != nil })
	if st.Last.Result() != queue.ResultFailed || st.Last.Stage() != queue.StageFetch || !strings.Contains(st.LastError, "fetching main from") {
		t.Fatalf("status: %+v", st.Last)
	}
	if m := f.metrics(); !strings.Contains(m, `webhookd_git_fetches_total{repo="infra",result="error"} 1`) {
		t.Fatal("fetch error not in metrics")
	}
}

func TestDeployFailureIsReported(t *testing.T) {
	dep := &fakeDeployer{err: fmt.Errorf("the specs are invalid: 2 error(s)")}
	f := newFixture(t, dep, "")
	a := f.remote.commit(`{"v":"a"}`)
	f.start()
	f.push(GitHub, "refs/heads/main", a)
	st := f.wait("failure", func(s queue.RepoStatus) bool { return s.Last != nil })
	if st.Last.Result() != queue.ResultFailed || st.Last.Stage() != queue.StageApply || st.LastError != "the specs are invalid: 2 error(s)" || st.LastFailure == nil {
		t.Fatalf("status: %+v", st.Last)
	}
}

func TestPollDeploysTheTipOnce(t *testing.T) {
	dep := &fakeDeployer{}
	f := newFixture(t, dep, "    poll: 5s\n")
	f.d.cfg.Repos[0].PollInterval, f.d.cfg.Repos[0].PollDelay = 20*time.Millisecond, 0
	a := f.remote.commit(`{"v":"a"}`)
	f.start()
	f.wait("a applied by poll", func(s queue.RepoStatus) bool { return s.LastApplied == a })
	b := f.remote.commit(`{"v":"b"}`)
	st := f.wait("b applied by poll", func(s queue.RepoStatus) bool { return s.LastApplied == b })
	if st.Last.Trigger != "poll" || st.LastPoll == nil {
		t.Fatalf("status: %+v", st)
	}
	n := f.fetches.Load()
	for f.fetches.Load() < n+5 {
		time.Sleep(10 * time.Millisecond)
	}
	if got, _ := dep.deploys(); len(got) != 2 {
		t.Fatalf("%d deploys, want 2 (polls of an applied tip deploy nothing)", len(got))
	}
}

func TestStopWaitsForTheRunningDeploy(t *testing.T) {
	dep := &fakeDeployer{gate: make(chan struct{}), started: make(chan string, 1)}
	f := newFixture(t, dep, "")
	a := f.remote.commit(`{"v":"a"}`)
	f.d.Start()
	f.push(GitHub, "refs/heads/main", a)
	<-dep.started
	stopped := make(chan struct{})
	go func() { f.d.Stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("Stop returned while a deploy ran")
	case <-time.After(200 * time.Millisecond):
	}
	dep.gate <- struct{}{}
	<-stopped
	if st := f.d.Status()[0]; st.LastApplied != a {
		t.Fatalf("deploy did not finish: %+v", st)
	}
}

func TestStatusAndHealthz(t *testing.T) {
	f := newFixture(t, &fakeDeployer{}, "")
	rec := httptest.NewRecorder()
	f.d.router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/status", nil))
	var doc struct{ Repos []queue.RepoStatus }
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || len(doc.Repos) != 1 || doc.Repos[0].Name != "infra" || doc.Repos[0].Path != "hosts/web1" || doc.Repos[0].State != "idle" {
		t.Fatalf("status: %s %v", rec.Body, err)
	}
	if strings.Contains(rec.Body.String(), testSecret) {
		t.Fatal("status shows the secret")
	}
	rec = httptest.NewRecorder()
	f.d.router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != 200 {
		t.Fatalf("healthz: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	f.d.router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/hooks/infra", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET /hooks: %d", rec.Code)
	}
	// Uptime monitors ask with HEAD: each page that answers GET answers it.
	for _, path := range []string{"/", "/healthz", "/status", "/metrics"} {
		rec = httptest.NewRecorder()
		f.d.router.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, path, nil))
		if rec.Code != http.StatusOK {
			t.Errorf("HEAD %s: %d, want 200", path, rec.Code)
		}
	}
}

// More deliveries at once than are handled at once all get through: the
// extra ones wait for a slot instead of being turned away.
func TestConcurrentDeliveriesWaitForASlot(t *testing.T) {
	dep := &fakeDeployer{}
	f := newFixture(t, dep, "")
	a := f.remote.commit(`{"v":"a"}`)
	f.start()
	n := maxInFlight + 8
	release := make(chan struct{})
	codes := make(chan int, n)
	for i := range n {
		body := withNonce(pushBody("refs/heads/main", a), fmt.Sprint(i))
		pr, pw := io.Pipe()
		req := httptest.NewRequest(http.MethodPost, "/hooks/infra", pr)
		req.Header.Set("X-GitHub-Event", "push")
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("c%d", i))
		req.Header.Set("X-Hub-Signature-256", "sha256="+sign([]byte(testSecret), body))
		go func() {
			<-release // every request is in flight (or waiting) before any body arrives
			pw.Write(body)
			pw.Close()
		}()
		go func() {
			rec := httptest.NewRecorder()
			f.d.router.ServeHTTP(rec, req)
			codes <- rec.Code
		}()
	}
	time.Sleep(100 * time.Millisecond)
	close(release)
	for range n {
		if c := <-codes; c != http.StatusAccepted {
			t.Fatalf("a concurrent delivery got %d", c)
		}
	}
}

// TestRolledBackIsNotRetried: a commit whose deploy failed its health gate
// and was rolled back shows as rolled-back with the failing unit, keeps the
// earlier commit as applied, is not retried by the poll until the branch
// moves, and a later good commit deploys normally.
func TestRolledBackIsNotRetried(t *testing.T) {
	dep := &fakeDeployer{rollBack: "broken"}
	f := newFixture(t, dep, "    poll: 5s\n")
	f.d.cfg.Repos[0].PollInterval, f.d.cfg.Repos[0].PollDelay = 20*time.Millisecond, 0
	a := f.remote.commit(`{"v":"a"}`)
	f.start()
	f.wait("a applied", func(s queue.RepoStatus) bool { return s.LastApplied == a })
	b := f.remote.commit(`{"v":"broken"}`)
	st := f.wait("b rolled back", func(s queue.RepoStatus) bool { return s.Last != nil && s.Last.Commit == b })
	if st.Last.Result() != queue.ResultRolledBack || st.Last.Stage() != queue.StageGate || st.LastApplied != a ||
		st.Last.RolledBackTo != "run-1" || len(st.Last.FailingUnits) != 1 || !strings.Contains(st.Last.FailingUnits[0], "web.service") {
		t.Fatalf("status after the rollback: %+v %+v", st, st.Last)
	}
	n := f.fetches.Load()
	for f.fetches.Load() < n+5 {
		time.Sleep(10 * time.Millisecond)
	}
	if got, _ := dep.deploys(); len(got) != 2 {
		t.Fatalf("%d deploys, want 2: a rolled-back commit is not retried until the branch moves", len(got))
	}
	c := f.remote.commit(`{"v":"c"}`)
	st = f.wait("c applied", func(s queue.RepoStatus) bool { return s.LastApplied == c })
	if st.Last.Result() != queue.ResultSuccess || st.LastFailure == nil || st.LastFailure.Result() != queue.ResultRolledBack {
		t.Fatalf("after a good commit: %+v", st)
	}
	rec := httptest.NewRecorder()
	f.d.router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `result="rolled-back"`) {
		t.Errorf("metrics lack the rolled-back deploy:\n%s", rec.Body.String())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
