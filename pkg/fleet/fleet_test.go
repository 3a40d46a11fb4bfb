package fleet

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/push"
)

func TestNeed(t *testing.T) {
	for _, tc := range []struct {
		min     string
		n, want int
		err     string
	}{
		{"60%", 3, 2, ""}, // 1.8 rounds up
		{"60%", 5, 3, ""},
		{"95%", 200, 190, ""},
		{"95%", 1000, 950, ""},
		{"95%", 10, 10, ""}, // 9.5 rounds up: a small ring needs all
		{"100%", 7, 7, ""},
		{"1%", 3, 1, ""},
		{"2", 3, 2, ""},
		{"3", 3, 3, ""},
		{"4", 3, 0, "4 host(s) must succeed, but only 3 are selected"},
	} {
		s, err := push.ParseSize(tc.min, 1)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Need(s, tc.n)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
			t.Errorf("Need(%s, %d) = %d, %v; want %d, %q", tc.min, tc.n, got, err, tc.want, tc.err)
		}
	}
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		need, n, ok, failed int
		want                Verdict
	}{
		{2, 3, 2, 0, Met},         // the third host may be down: promoted
		{2, 3, 1, 0, Undecided},   // two may still come
		{2, 3, 1, 1, Undecided},   // the last one decides
		{2, 3, 0, 2, Unreachable}, // two rolled back: at most one can succeed
		{2, 3, 1, 2, Unreachable},
		{3, 3, 2, 1, Unreachable}, // every host needed: the first failure ends it
		{3, 3, 0, 0, Undecided},
		{950, 1000, 900, 50, Undecided},
		{950, 1000, 900, 51, Unreachable},
		{950, 1000, 950, 50, Met},
	} {
		if got := Decide(tc.need, tc.n, tc.ok, tc.failed); got != tc.want {
			t.Errorf("Decide(need %d of %d, %d ok, %d failed) = %d; want %d", tc.need, tc.n, tc.ok, tc.failed, got, tc.want)
		}
	}
}

func TestParseSelector(t *testing.T) {
	for _, tc := range []struct {
		in, want, promql, err string
	}{
		{"role=web,site=fra", "role=web,site=fra", `role="web",site="fra"`, ""},
		{" ring = canary ", "ring=canary", `ring="canary"`, ""},
		{"site!=fra", "site!=fra", `site!="",site!="fra"`, ""},
		{"", "", "", "empty selector"},
		{"role", "", "", `"role": want key=value or key!=value`},
		{"=web", "", "", `"=web": want key=value`},
		{"role=web,role=db", "", "", "label role is already required"},
		{"Role=web", "", "", `label key "Role"`},
		{"role=we b", "", "", `label role="we b"`},
		{`role=a"b`, "", "", `label role="a\"b"`},
		{"host=web1", "", "", `label key "host" is reserved`},
		{"role=", "", "", `label role=""`},
	} {
		sel, err := ParseSelector(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseSelector(%q): %v; want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || sel.String() != tc.want || sel.PromQL() != tc.promql {
			t.Errorf("ParseSelector(%q) = %s / %s, %v", tc.in, sel, sel.PromQL(), err)
		}
	}
	sel, _ := ParseSelector("role=web,site!=ams")
	for _, tc := range []struct {
		ls   Labels
		want bool
	}{
		{Labels{"role": "web", "site": "fra"}, true},
		{Labels{"role": "web", "site": "ams"}, false},
		{Labels{"role": "web"}, false}, // says no site: not picked by "outside ams"
		{Labels{"role": "db", "site": "fra"}, false},
		{Labels{}, false},
	} {
		if got := sel.Matches(tc.ls); got != tc.want {
			t.Errorf("%s matches %v = %v", sel, tc.ls, got)
		}
	}
}

func TestLabelsFile(t *testing.T) {
	ls, err := ParseLabels("hosts/web1/labels", []byte("# web1\nring=canary\n\n role = web \nsite=fra\n"))
	if err != nil || ls.String() != "ring=canary,role=web,site=fra" {
		t.Fatalf("%v %v", ls, err)
	}
	for in, want := range map[string]string{
		"ring canary\n":      `hosts/web1/labels:1: "ring canary": want key=value`,
		"a=1\nrepo=infra\n":  `hosts/web1/labels:2: label key "repo" is reserved`,
		"a=1\na=2\n":         "hosts/web1/labels:2: label a given twice (1, 2)",
		"site=fra/1\n":       `hosts/web1/labels:1: label site="fra/1"`,
		"__name__=x\n":       `hosts/web1/labels:1: label key "__name__"`,
		"ring=\n":            `hosts/web1/labels:1: label ring=""`,
		"ring=can\x00ary\n":  `hosts/web1/labels:1: label ring=`,
		"ring=canary=ok\n\n": `hosts/web1/labels:1: label ring="canary=ok"`,
	} {
		if _, err := ParseLabels("hosts/web1/labels", []byte(in)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v; want %q", in, err, want)
		}
	}
	dir := t.TempDir()
	if ls, err := ReadLabels(dir); err != nil || len(ls) != 0 {
		t.Fatalf("no labels file: %v %v", ls, err)
	}
	if err := os.WriteFile(filepath.Join(dir, LabelsFile), []byte("role=db\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ls, err := ReadLabels(dir); err != nil || ls["role"] != "db" {
		t.Fatalf("%v %v", ls, err)
	}
}

// steps is a Reader whose answers change read after read.
type steps struct {
	reads   int
	answers []map[string]Report
}

func (s *steps) Read(context.Context, string) (map[string]Report, error) {
	a := s.answers[min(s.reads, len(s.answers)-1)]
	s.reads++
	return a, nil
}

func TestWait(t *testing.T) {
	ok, bad, pend := Report{State: Success, Word: "success"}, Report{State: Failure, Word: "rolled-back"}, Report{Word: "pending"}
	hosts := []string{"c1", "c2", "c3"}
	ctx := context.Background()
	t.Run("MetWithOneHostMissing", func(t *testing.T) {
		r := &steps{answers: []map[string]Report{{"c1": pend}, {"c1": ok}, {"c1": ok, "c2": ok}}}
		res, err := Wait(ctx, r, "c", hosts, 2, Watch{Every: time.Millisecond})
		if err != nil || res.Verdict != Met || r.reads != 3 || strings.Join(res.Waiting, ",") != "c3" {
			t.Fatalf("%+v %v after %d reads", res, err, r.reads)
		}
	})
	t.Run("FailsFastOnceUnreachable", func(t *testing.T) {
		r := &steps{answers: []map[string]Report{{"c1": bad}, {"c1": bad, "c2": bad}}}
		res, err := Wait(ctx, r, "c", hosts, 2, Watch{Every: time.Millisecond})
		if err != nil || res.Verdict != Unreachable || r.reads != 2 || strings.Join(res.Failed, ",") != "c1,c2" {
			t.Fatalf("%+v %v after %d reads", res, err, r.reads)
		}
	})
	t.Run("RunsOut", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		r := &steps{answers: []map[string]Report{{"c1": ok, "c9": ok}}}
		res, err := Wait(ctx, r, "c", hosts, 2, Watch{Every: time.Millisecond})
		if err != nil || res.Verdict != Undecided || strings.Join(res.Waiting, ",") != "c2,c3" {
			t.Fatalf("%+v %v", res, err)
		}
	})
}

// TestPrometheusReader answers the reader's one query as Prometheus's
// HTTP API does, and checks how each host's series read.
func TestPrometheusReader(t *testing.T) {
	const c, old = "89abcdef0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef01234567"
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query" || r.ParseForm() != nil {
			http.NotFound(w, r)
			return
		}
		queries = append(queries, r.PostForm.Get("query"))
		series := func(host, result, attempted, applied string) map[string]any {
			return map[string]any{"metric": map[string]string{"host": host, "result": result, "attempted": attempted, "applied": applied}, "value": []any{1.5, "1"}}
		}
		json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": []any{
			series("c1", "success", c, c),
			series("c2", "rolled-back", c, old),
			series("c3", "rolled-back", old, old), // an older commit's rollback says nothing of c
			series("c4", "success", old, old),
		}}})
	}))
	defer srv.Close()
	sel, _ := ParseSelector("ring=canary")
	p := PrometheusReader{URL: srv.URL + "/", Selector: sel}
	got, err := p.Read(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) != 1 || !strings.Contains(queries[0], `webhookd_host_info{ring="canary"}`) {
		t.Fatalf("queries: %q", queries)
	}
	want := map[string]State{"c1": Success, "c2": Failure, "c3": Pending, "c4": Pending}
	for h, s := range want {
		if got[h].State != s {
			t.Errorf("%s: %+v; want state %d", h, got[h], s)
		}
	}
	if got["c4"].Word != "at 0123456789ab" {
		t.Errorf("c4: %+v", got["c4"])
	}

	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"parse error"}`))
	}))
	defer bad.Close()
	_, err = PrometheusReader{URL: bad.URL, Selector: sel}.Read(context.Background(), c)
	if err == nil || err.Error() != "prometheus: HTTP 400: bad_data: parse error" || temporary(err) {
		t.Fatalf("%v", err)
	}
}
