package notify

import (
	"bufio"
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/settings"
)

const (
	testSecret = "0123456789abcdef-hmac-secret"
	testToken  = "tk_ntfy_token_4711"
)

// secretFile writes content to a 0600 file and returns its path.
func secretFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cred")
	if err := os.WriteFile(p, []byte(content+"\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadNamesEveryField(t *testing.T) {
	secret := secretFile(t, testSecret, 0o600)
	open := secretFile(t, testSecret, 0o644)
	short := secretFile(t, "short", 0o600)
	slackURL := secretFile(t, "https://hooks.slack.example/services/T000/B000/XXXXSECRET", 0o600)
	for _, tc := range []struct {
		name string
		in   []settings.NotifyTarget
		errs []string // each must appear; none: valid
	}{
		{"webhook", []settings.NotifyTarget{{Type: "webhook", URL: "https://h.example/hook", SecretFile: secret}}, nil},
		{"slack from a url file", []settings.NotifyTarget{{Type: "slack", URLFile: slackURL}}, nil},
		{"ntfy with token over loopback http", []settings.NotifyTarget{{Type: "ntfy", URL: "http://127.0.0.1:8080/alerts", TokenFile: secretFile(t, testToken, 0o600)}}, nil},
		{"smtp", []settings.NotifyTarget{{Type: "smtp", URL: "smtp://mail.example:587", From: "syslet@example.org", To: []string{"ops@example.org"}}}, nil},
		{"no type, no url", []settings.NotifyTarget{{}}, []string{"notify[0].type: required", "notify[0].url: required"}},
		{"unknown type", []settings.NotifyTarget{{Type: "pager", URL: "https://x.example"}}, []string{`notify[0].type: "pager" is not a target type`}},
		{"bad scheme", []settings.NotifyTarget{{Type: "webhook", URL: "ftp://x.example/"}}, []string{"notify[0].url: want an https://"}},
		{"url and urlFile", []settings.NotifyTarget{{Type: "slack", URL: "https://a.example", URLFile: slackURL}}, []string{"notify[0].url: give url or urlFile, not both"}},
		{"secret readable by others", []settings.NotifyTarget{{Type: "webhook", URL: "https://h.example", SecretFile: open}}, []string{"notify[0].secretFile: ", "readable by group or others (mode 0644)"}},
		{"short secret", []settings.NotifyTarget{{Type: "webhook", URL: "https://h.example", SecretFile: short}}, []string{"notify[0].secretFile: ", "holds 5 bytes"}},
		{"secret on a slack target", []settings.NotifyTarget{{Type: "slack", URL: "https://h.example", SecretFile: secret}}, []string{"notify[0].secretFile: only applies to webhook targets"}},
		{"token over http", []settings.NotifyTarget{{Type: "ntfy", URL: "http://ntfy.example/t", TokenFile: secretFile(t, testToken, 0o600)}}, []string{"notify[0].tokenFile: the token would cross the network in clear"}},
		{"unknown event", []settings.NotifyTarget{{Type: "webhook", URL: "https://h.example", Events: []string{"failed", "exploded"}}}, []string{`notify[0].events[1]: "exploded" is not an event`}},
		{"timeout and attempts", []settings.NotifyTarget{{Type: "webhook", URL: "https://h.example", Timeout: settings.Duration(time.Hour), Attempts: 99}}, []string{"notify[0].timeout: 1h0m0s is not between", "notify[0].attempts: 99 is not between 1 and 10"}},
		{"smtp without from and to", []settings.NotifyTarget{{Type: "smtp", URL: "smtp://mail.example"}}, []string{"notify[0].url: give the port", "notify[0].from: required", "notify[0].to: at least one"}},
		{"smtp user in the url", []settings.NotifyTarget{{Type: "smtp", URL: "smtp://me:pw@mail.example:25", From: "a@b.example", To: []string{"c@d.example"}}}, []string{"the user goes in username"}},
		{"smtp user without password", []settings.NotifyTarget{{Type: "smtp", URL: "smtps://mail.example:465", From: "a@b.example", To: []string{"nope"}, Username: "u"}}, []string{"notify[0].passwordFile: required with username", `notify[0].to[0]: "nope" is not a mail address`}},
		{"mail fields elsewhere", []settings.NotifyTarget{{Type: "webhook", URL: "https://h.example", From: "a@b.example"}}, []string{"notify[0].from: only applies to smtp targets"}},
		{"duplicate names", []settings.NotifyTarget{{Name: "ops", Type: "webhook", URL: "https://a.example"}, {Name: "ops", Type: "ntfy", URL: "https://b.example/t"}}, []string{`notify[1].name: "ops" is already the name of notify[0]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := Load(tc.in, "notify")
			if len(tc.errs) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if len(ts) != len(tc.in) {
					t.Fatalf("%d targets", len(ts))
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tc.errs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			for _, leak := range []string{testSecret, testToken, "XXXXSECRET", "pw@"} {
				if strings.Contains(err.Error(), leak) {
					t.Errorf("error shows a credential (%s): %v", leak, err)
				}
			}
		})
	}
}

// recorder is an HTTP receiver that records requests and answers with
// the codes it is given, one per request (then 200).
type recorder struct {
	mu    sync.Mutex
	reqs  []recorded
	codes []int
	hang  chan struct{} // when set, requests wait on it
	srv   *httptest.Server
}

type recorded struct {
	path   string
	header http.Header
	body   []byte
}

func newRecorder(t *testing.T, codes ...int) *recorder {
	r := &recorder{codes: codes}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, recorded{path: req.URL.Path, header: req.Header.Clone(), body: body})
		code := 200
		if len(r.codes) > 0 {
			code, r.codes = r.codes[0], r.codes[1:]
		}
		hang := r.hang
		r.mu.Unlock()
		if hang != nil {
			select {
			case <-hang:
			case <-req.Context().Done():
			}
			return
		}
		w.WriteHeader(code)
		// An answer that echoes the request's credentials must not
		// bring them into an error message.
		io.WriteString(w, "refused: "+req.Header.Get("Authorization")+" "+req.Header.Get(HeaderSignature))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) requests() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

// results collects a notifier's results.
type results struct {
	mu  sync.Mutex
	got []Result
	ch  chan Result
}

func newResults() *results { return &results{ch: make(chan Result, 100)} }

func (rs *results) done(r Result) {
	rs.mu.Lock()
	rs.got = append(rs.got, r)
	rs.mu.Unlock()
	rs.ch <- r
}

func (rs *results) next(t *testing.T) Result {
	t.Helper()
	select {
	case r := <-rs.ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no result within 10s")
	}
	return Result{}
}

func testEvent() Event {
	return Event{Event: Failed, Host: "web1", Run: "20261201T101500Z-2b", Summary: "1 to change; 3 actions; 2 applied, 1 failed",
		Source:          Source{Kind: "git", Text: "git infra@1f2e3d", Repo: "infra", Commit: "1f2e3d", Trigger: "github push abc"},
		DurationSeconds: 4.25, Error: "the health gate failed",
		Failing: []Unit{{Unit: "web.service", Reason: "restarted 3 time(s)", Log: []string{"web: cannot start", "```fence```"}}}}
}

func webhookTarget(t *testing.T, url string, attempts int) *Target {
	t.Helper()
	ts, err := Load([]settings.NotifyTarget{{Name: "hook", Type: "webhook", URL: url, SecretFile: secretFile(t, testSecret, 0o600),
		Attempts: attempts, Timeout: settings.Duration(300 * time.Millisecond)}}, "notify")
	if err != nil {
		t.Fatal(err)
	}
	ts[0].retry.Backoff = 10 * time.Millisecond
	return ts[0]
}

// TestWebhookIsSignedAndRetried: the body is the event document, its
// HMAC verifies with the secret, the delivery id stays the same across
// retries, a 5xx is retried and a 4xx is not.
func TestWebhookIsSignedAndRetried(t *testing.T) {
	rec := newRecorder(t, 503, 200, 400)
	rs := newResults()
	n := New([]*Target{webhookTarget(t, rec.srv.URL+"/hook", 3)}, rs.done)
	n.Send(testEvent())
	if r := rs.next(t); r.Outcome != OutcomeSent || r.Attempts != 2 {
		t.Fatalf("first event: %+v", r)
	}
	reqs := rec.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, q := range reqs {
		if q.header.Get(HeaderDelivery) != reqs[0].header.Get(HeaderDelivery) || q.header.Get(HeaderEvent) != "failed" {
			t.Errorf("headers %v", q.header)
		}
		want := Sign([]byte(testSecret), q.body)
		if !hmac.Equal([]byte(q.header.Get(HeaderSignature)), []byte(want)) {
			t.Errorf("signature %q, want %q", q.header.Get(HeaderSignature), want)
		}
		var ev Event
		if err := json.Unmarshal(q.body, &ev); err != nil || ev.Version != 1 || ev.ID != q.header.Get(HeaderDelivery) || ev.Host != "web1" ||
			ev.Source.Commit != "1f2e3d" || len(ev.Failing) != 1 || ev.Failing[0].Log[0] != "web: cannot start" {
			t.Errorf("body %s (%v)", q.body, err)
		}
	}
	n.Send(testEvent())
	r := rs.next(t)
	if r.Outcome != OutcomeFailed || r.Attempts != 1 || !IsPermanent(r.Err) || !strings.Contains(r.Err.Error(), "HTTP 400") {
		t.Fatalf("4xx: %+v", r)
	}
	if strings.Contains(r.Err.Error(), "/hook") {
		t.Errorf("error shows the URL's path: %v", r.Err)
	}
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestReceiverDownOrHangingNeverBlocks: Send returns at once whatever the
// receiver does; a hanging one costs each attempt its timeout, a down one
// fails fast; the failures are reported, and Close gives up at its
// deadline, dropping what is left.
func TestReceiverDownOrHangingNeverBlocks(t *testing.T) {
	hanging := newRecorder(t)
	hanging.hang = make(chan struct{})
	defer close(hanging.hang)
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()

	for _, tc := range []struct {
		name string
		url  string
		want string
	}{
		{"hanging", hanging.srv.URL, "no answer within 300ms"},
		{"down", downURL, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := newResults()
			n := New([]*Target{webhookTarget(t, tc.url, 2)}, rs.done)
			// Send only queues. One that delivered would report the first
			// event's failure, after both its attempts, before the second
			// Send returned: at the hanging receiver no result can come
			// before all three have returned.
			for range 3 {
				n.Send(testEvent())
			}
			if tc.name == "hanging" && len(rs.ch) != 0 {
				t.Errorf("a result came before the three Sends returned: %+v", <-rs.ch)
			}
			r := rs.next(t)
			if r.Outcome != OutcomeFailed || r.Attempts != 2 || !strings.Contains(r.Err.Error(), tc.want) {
				t.Fatalf("%+v", r)
			}
			if strings.Contains(r.Err.Error(), "127.0.0.1") && !strings.Contains(r.Err.Error(), "http://127.0.0.1:") {
				t.Errorf("error: %v", r.Err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			// What is left at the hanging receiver needs seconds more; a
			// Close that gave up at its deadline says so.
			err := n.Close(ctx)
			if tc.name == "hanging" && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Close: %v", err)
			}
			rs.mu.Lock()
			defer rs.mu.Unlock()
			if len(rs.got) != 3 {
				t.Errorf("%d results for 3 events: %+v", len(rs.got), rs.got)
			}
		})
	}
}

// TestQueueFullDrops: a target that does not keep up loses new events,
// each one reported, instead of holding on to them without bound.
func TestQueueFullDrops(t *testing.T) {
	block := make(chan struct{})
	var dropped int
	var mu sync.Mutex
	q := NewQueue("slow", Retry{Attempts: 1, Timeout: time.Minute}, func(r Result) {
		if r.Outcome == OutcomeDropped {
			mu.Lock()
			dropped++
			mu.Unlock()
		}
	})
	for range QueueSize + 5 {
		q.Post(Job{Event: "x", Do: func(ctx context.Context) error { <-block; return nil }})
	}
	mu.Lock()
	got := dropped
	mu.Unlock()
	// One job is in progress, QueueSize wait: 4 or 5 are dropped.
	if got < 4 || got > 5 {
		t.Errorf("%d dropped", got)
	}
	close(block)
	if err := q.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	q.Post(Job{Event: "late", Do: func(context.Context) error { return nil }})
	if dropped != got+1 {
		t.Errorf("a job posted after Close was not dropped")
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		typ   string
		check func(t *testing.T, q recorded)
	}{
		{"slack", func(t *testing.T, q recorded) {
			var m map[string]string
			if err := json.Unmarshal(q.body, &m); err != nil || len(m) != 1 {
				t.Fatalf("%s %v", q.body, err)
			}
			text := m["text"]
			for _, want := range []string{"*syslet web1: deploy FAILED*", "source: git infra@1f2e3d (github push abc)", "run: 20261201T101500Z-2b", "took: 4.3s",
				"  web.service: restarted 3 time(s)", "```\nweb: cannot start\n'''fence'''\n```"} {
				if !strings.Contains(text, want) {
					t.Errorf("text lacks %q:\n%s", want, text)
				}
			}
		}},
		{"mattermost", func(t *testing.T, q recorded) {
			var m map[string]string
			json.Unmarshal(q.body, &m)
			if !strings.HasPrefix(m["text"], "**syslet web1: deploy FAILED**\n") {
				t.Errorf("text %q", m["text"])
			}
		}},
		{"ntfy", func(t *testing.T, q recorded) {
			if q.path != "/alerts" || q.header.Get("Title") != "web1: deploy FAILED" || q.header.Get("Priority") != "high" ||
				q.header.Get("Tags") != "rotating_light,syslet" || q.header.Get("Authorization") != "Bearer "+testToken {
				t.Errorf("headers %v", q.header)
			}
			if !strings.Contains(string(q.body), "error: the health gate failed\n") || !strings.Contains(string(q.body), "    | web: cannot start") {
				t.Errorf("body %q", q.body)
			}
		}},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			rec := newRecorder(t)
			st := settings.NotifyTarget{Type: tc.typ, URL: rec.srv.URL + "/alerts"}
			if tc.typ == "ntfy" {
				st.TokenFile = secretFile(t, testToken, 0o600)
			}
			ts, err := Load([]settings.NotifyTarget{st}, "notify")
			if err != nil {
				t.Fatal(err)
			}
			rs := newResults()
			n := New(ts, rs.done)
			n.Send(testEvent())
			if r := rs.next(t); r.Outcome != OutcomeSent {
				t.Fatalf("%+v", r)
			}
			n.Close(context.Background())
			tc.check(t, rec.requests()[0])
		})
	}
}

// TestEventsFilter: a target gets only the events it lists; a test event
// goes to every target.
func TestEventsFilter(t *testing.T) {
	rec := newRecorder(t)
	ts, err := Load([]settings.NotifyTarget{{Type: "webhook", URL: rec.srv.URL, Events: []string{"drift"}}}, "notify")
	if err != nil {
		t.Fatal(err)
	}
	rs := newResults()
	n := New(ts, rs.done)
	for _, k := range []Kind{Started, Failed, Drift, Test} {
		ev := testEvent()
		ev.Event = k
		n.Send(ev)
	}
	n.Close(context.Background())
	var got []string
	for _, q := range rec.requests() {
		got = append(got, q.header.Get(HeaderEvent))
	}
	if strings.Join(got, ",") != "drift,test" {
		t.Errorf("sent %v", got)
	}
}

// TestBounds: an event with many failing units and long logs is cut to
// what every target accepts.
func TestBounds(t *testing.T) {
	ev := testEvent()
	ev.Failing = nil
	for range 30 {
		ev.Failing = append(ev.Failing, Unit{Unit: "u.service", Log: make([]string, 40)})
	}
	ev.Failing[0].Log[39] = strings.Repeat("é", 1000)
	ev.normalize()
	if len(ev.Failing) != maxUnits || len(ev.Failing[0].Log) != maxLogLines || len(ev.Failing[0].Log[maxLogLines-1]) > maxLine+3 {
		t.Errorf("not bounded: %d units, %d lines, %d bytes", len(ev.Failing), len(ev.Failing[0].Log), len(ev.Failing[0].Log[maxLogLines-1]))
	}
	if !strings.HasSuffix(ev.Failing[0].Log[maxLogLines-1], "é…") || ev.ID == "" || ev.Time.IsZero() || ev.Version != 1 {
		t.Errorf("%+v", ev)
	}
}

// TestMail: a mail through SMTP carries the title as subject, the facts
// and the event as JSON; a 5xx is permanent.
func TestMail(t *testing.T) {
	srv := newSMTP(t)
	ts, err := Load([]settings.NotifyTarget{{Type: "smtp", URL: "smtp://" + srv.addr, From: "syslet@web1.example", To: []string{"ops@example.org", "Oncall <oncall@example.org>"}}}, "notify")
	if err != nil {
		t.Fatal(err)
	}
	rs := newResults()
	n := New(ts, rs.done)
	n.Send(testEvent())
	if r := rs.next(t); r.Outcome != OutcomeSent {
		t.Fatalf("%+v", r)
	}
	srv.mu.Lock()
	srv.refuse = true
	srv.mu.Unlock()
	n.Send(testEvent())
	if r := rs.next(t); r.Outcome != OutcomeFailed || r.Attempts != 1 || !IsPermanent(r.Err) {
		t.Fatalf("refused: %+v", r)
	}
	n.Close(context.Background())
	m := srv.mails()[0]
	for _, want := range []string{"MAIL FROM:<syslet@web1.example>", "RCPT TO:<ops@example.org>", "RCPT TO:<oncall@example.org>",
		"Subject: [syslet] web1: deploy FAILED", "X-Syslet-Event: failed", "error: the health gate failed", `"event": "failed"`} {
		if !strings.Contains(m, want) {
			t.Errorf("mail lacks %q:\n%s", want, m)
		}
	}
}

// fakeSMTP is the smallest SMTP server net/smtp talks to: no TLS, no AUTH.
type fakeSMTP struct {
	addr   string
	mu     sync.Mutex
	got    []string
	refuse bool
}

func newSMTP(t *testing.T) *fakeSMTP {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &fakeSMTP{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *fakeSMTP) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	say := func(l string) { io.WriteString(c, l+"\r\n") }
	var mail strings.Builder
	say("220 fake ESMTP")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			say("250 fake")
		case strings.HasPrefix(cmd, "MAIL"):
			s.mu.Lock()
			refuse := s.refuse
			s.mu.Unlock()
			if refuse {
				say("550 no thanks")
				continue
			}
			mail.WriteString(strings.TrimSpace(line) + "\n")
			say("250 ok")
		case strings.HasPrefix(cmd, "RCPT"):
			mail.WriteString(strings.TrimSpace(line) + "\n")
			say("250 ok")
		case cmd == "DATA":
			say("354 go on")
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				mail.WriteString(l)
			}
			s.mu.Lock()
			s.got = append(s.got, mail.String())
			s.mu.Unlock()
			mail.Reset()
			say("250 queued")
		case cmd == "QUIT":
			say("221 bye")
			return
		default:
			say("250 ok")
		}
	}
}

func (s *fakeSMTP) mails() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// TestRefusalHidesCredentials: an answer that echoes the token does not
// bring it into the error that is logged.
func TestRefusalHidesCredentials(t *testing.T) {
	rec := newRecorder(t, 401)
	ts, err := Load([]settings.NotifyTarget{{Type: "ntfy", URL: rec.srv.URL + "/secret-topic", TokenFile: secretFile(t, testToken, 0o600)}}, "notify")
	if err != nil {
		t.Fatal(err)
	}
	rs := newResults()
	n := New(ts, rs.done)
	n.Send(testEvent())
	r := rs.next(t)
	n.Close(context.Background())
	if r.Outcome != OutcomeFailed || !strings.Contains(r.Err.Error(), "HTTP 401: refused: Bearer (secret)") ||
		strings.Contains(r.Err.Error(), testToken) || strings.Contains(r.Err.Error(), "secret-topic") {
		t.Fatalf("%+v", r)
	}
}

// TestFailingWithoutAUnit: a failure that names no unit (the health gate
// could not read the units' state) is told as it is, not as ": reason".
func TestFailingWithoutAUnit(t *testing.T) {
	ev := testEvent()
	ev.Failing = []Unit{{Reason: "the gated units' state could not be read: the read did not finish within 4s"}}
	got := strings.Join(lines(&ev), "\n")
	if !strings.Contains(got, "failing:\n  the gated units' state could not be read: the read did not finish within 4s") || strings.Contains(got, "  : ") {
		t.Errorf("lines:\n%s", got)
	}
}

// TestFindingsAreListed: the text targets list why the specs are invalid,
// each error by its file, JSON path, message and rule, and say how many
// more there are than the event carries.
func TestFindingsAreListed(t *testing.T) {
	ev := testEvent()
	ev.Findings = []report.Finding{{Source: "hosts/web1/web.json", Path: "[0].unit.Container", Rule: "image-required", Message: "[Container] Image is required", Severity: report.Error}}
	ev.FindingCount = 3
	got := strings.Join(lines(&ev), "\n")
	if !strings.Contains(got, "invalid specs (3 error(s)):\n  hosts/web1/web.json: [0].unit.Container: [Container] Image is required (image-required)\n  … and 2 more") {
		t.Errorf("lines:\n%s", got)
	}
}
