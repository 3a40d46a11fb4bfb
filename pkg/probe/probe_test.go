package probe

import (
	"strings"
	"testing"
	"time"
)

// The words the gate, status and the plan use for what a try got.
func TestAnswerWords(t *testing.T) {
	h := &HTTP{Port: 8080, Path: "/up", Status: DefaultStatus, Body: "ready"}
	p := &Probe{HTTP: h, Interval: Duration(time.Second), Timeout: Duration(2 * time.Second)}
	for _, tc := range []struct {
		a    Answer
		ok   bool
		want string
	}{
		{h.JudgeHTTP(503, []byte("db unreachable\n")), false, `answered 503 "db unreachable"`},
		{h.JudgeHTTP(200, []byte("starting")), false, `answered 200 "starting" without "ready"`},
		{h.JudgeHTTP(204, []byte("all ready")), true, `answered 204 "all ready"`},
		{h.JudgeHTTP(301, nil), false, `answered 301 without "ready"`},
		{JudgeExec(1, []byte("no\n")), false, `exited 1 "no"`},
		{JudgeExec(0, nil), true, `exited 0`},
		{Answer{Kind: KindTCP, OK: true}, true, "connected"},
		{p.Failed(p.TimedOut()), false, "timed out after 2s"},
		{p.Failed("connection refused"), false, "connection refused"},
	} {
		if tc.a.OK != tc.ok || tc.a.String() != tc.want {
			t.Errorf("got %v %q, want %v %q", tc.a.OK, tc.a.String(), tc.ok, tc.want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes
	got := Excerpt([]byte("  " + long + "\n"))
	if !strings.HasSuffix(got, "…") || len(got) > ExcerptBytes+len("…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("Excerpt cut %q", got)
	}
	if got := Excerpt([]byte(" ok \n")); got != "ok" {
		t.Errorf("Excerpt(ok) = %q", got)
	}
}

func TestParseRange(t *testing.T) {
	for s, want := range map[string]Range{"200-399": {200, 399}, "204": {204, 204}} {
		if r, ok := ParseRange(s); !ok || r != want || r.String() != s {
			t.Errorf("ParseRange(%q) = %v %v", s, r, ok)
		}
	}
	for _, s := range []string{"", "2xx", "399-200", "200-", "+200", "200 - 300"} {
		if _, ok := ParseRange(s); ok {
			t.Errorf("ParseRange(%q) accepted", s)
		}
	}
}

// A marker that is not one syslet writes is refused, not half read.
func TestParseRefuses(t *testing.T) {
	for _, s := range []string{``, `{}`, `{"tcp":{"port":1}}`, `{"tcp":{"port":1},"http":{"port":1},"interval":"1s","timeout":"1s","successes":1,"failures":1,"deadline":"1s"}`,
		`{"tcp":{"port":1},"interval":"1s","timeout":"1s","successes":1,"failures":1,"deadline":"1s","x":1}`} {
		if p, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %+v", s, p)
		}
	}
}
