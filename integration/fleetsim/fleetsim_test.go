package fleetsim

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/webhookd/clone"
)

// TestLoadOf: rate over the window, the busiest second, nearest-rank
// percentiles of the fetches that went through, errors counted apart
// with the earliest one's text.
func TestLoadOf(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var fs []Fetch
	for i := range 100 {
		fs = append(fs, Fetch{At: t0.Add(time.Duration(i) * 100 * time.Millisecond), Took: time.Duration(i+1) * time.Millisecond})
	}
	fs = append(fs, Fetch{At: t0.Add(5 * time.Second), Err: "later"}, Fetch{At: t0.Add(2 * time.Second), Err: "first"})
	l := LoadOf(fs, 10*time.Second)
	if l.Fetches != 102 || l.Errors != 2 || l.FirstError != "first" {
		t.Fatalf("%+v", l)
	}
	// Ten a second, and one error in each of seconds 2 and 5.
	if l.PerSecond != 10.2 || l.Busiest != 11 {
		t.Errorf("rate %.1f/s, busiest second %d; want 10.2, 11", l.PerSecond, l.Busiest)
	}
	if l.P50 != 50*time.Millisecond || l.P99 != 99*time.Millisecond || l.Slowest != 100*time.Millisecond {
		t.Errorf("p50 %s p99 %s slowest %s", l.P50, l.P99, l.Slowest)
	}
	if s := l.String(); !strings.Contains(s, "102 fetches in 10s: 10.2/s") || !strings.Contains(s, "2 errors (1.96 %, first: first)") {
		t.Errorf("%s", s)
	}
	if z := LoadOf(nil, time.Second); z.Fetches != 0 || z.P99 != 0 {
		t.Errorf("no fetches: %+v", z)
	}
}

func TestPercentile(t *testing.T) {
	s := []time.Duration{1, 2, 3, 4}
	for p, want := range map[float64]time.Duration{0: 1, 25: 1, 50: 2, 51: 3, 99: 4, 100: 4} {
		if got := Percentile(s, p); got != want {
			t.Errorf("p%.0f of %v: %d, want %d", p, s, got, want)
		}
	}
}

// TestLayout: the fleet is the same every run: one in twenty hosts a
// canary, three regions, about one in a hundred of each ring down.
func TestLayout(t *testing.T) {
	hosts := Layout(10000)
	rings, regions, down := map[string]int{}, map[string]int{}, map[string]int{}
	for _, h := range hosts {
		rings[h.Labels["ring"]]++
		regions[h.Labels["region"]]++
		if h.Down {
			down[h.Labels["ring"]]++
		}
	}
	if rings["canary"] != 500 || rings["main"] != 9500 || len(regions) != 3 {
		t.Fatalf("rings %v regions %v", rings, regions)
	}
	if down["canary"] < 1 || down["canary"] > 15 || down["main"] < 50 || down["main"] > 150 {
		t.Errorf("down hosts per ring: %v, want about 1 %%", down)
	}
	again := Layout(10000)
	for i := range hosts {
		if hosts[i].Down != again[i].Down {
			t.Fatalf("the layout differs between two calls at %s", hosts[i].Name)
		}
	}
	if h := hosts[0]; h.Name != "h00001" || h.Branch() != "canary" || string(h.LabelsFile()) != "region=eu\nring=canary\nsite=eu1\n" {
		t.Errorf("%s follows %s with labels %q", h.Name, h.Branch(), h.LabelsFile())
	}
}

// TestApplyDelay: the drawn applies have about the median and 95th
// percentile asked for (bounds wide enough for a random draw).
func TestApplyDelay(t *testing.T) {
	draw := ApplyDelay(7240*time.Millisecond, 11660*time.Millisecond)
	d := make([]time.Duration, 20000)
	for i := range d {
		d[i] = draw()
	}
	slices.Sort(d)
	if m := Percentile(d, 50); m < 7*time.Second || m > 7500*time.Millisecond {
		t.Errorf("median %s, want about 7.24s", m)
	}
	if p := Percentile(d, 95); p < 11*time.Second || p > 12300*time.Millisecond {
		t.Errorf("p95 %s, want about 11.66s", p)
	}
}

// TestSeedClone: packs are linked, every other file is a copy of its own.
func TestSeedClone(t *testing.T) {
	tmpl, dst := t.TempDir(), filepath.Join(t.TempDir(), "clone")
	for _, f := range []string{"HEAD", "refs/remotes/origin/main", "objects/pack/pack-1.pack"} {
		p := filepath.Join(tmpl, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := SeedClone(tmpl, dst); err != nil {
		t.Fatal(err)
	}
	same := func(f string) bool {
		a, _ := os.Stat(filepath.Join(tmpl, f))
		b, err := os.Stat(filepath.Join(dst, f))
		return err == nil && os.SameFile(a, b)
	}
	if !same("objects/pack/pack-1.pack") || same("HEAD") || same("refs/remotes/origin/main") {
		t.Errorf("want the pack linked and the rest copied")
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "refs/remotes/origin/main")); string(b) != "refs/remotes/origin/main" {
		t.Errorf("copied ref: %q", b)
	}
}

// TestHandler: one path a host; a host down or not started answers 503,
// an unknown path 404; FileSD names each host's path and instance.
func TestHandler(t *testing.T) {
	hosts := Layout(3)
	hosts[1].Down = true
	h, err := Handler(hosts)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]int{"/h00002/metrics": 503, "/h00001/metrics": 503, "/h00009/metrics": 404, "/metrics": 404} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != want {
			t.Errorf("%s: %d, want %d", path, rec.Code, want)
		}
	}
	sd := FileSD(hosts, "127.0.0.1:9")
	if l := sd[2]["labels"].(map[string]string); l["instance"] != "h00003" || l["__metrics_path__"] != "/h00003/metrics" {
		t.Errorf("%v", sd[2])
	}
}

// TestFleetFollowsItsBranches: three hosts (a canary, a main host, one
// down) pull a local repository through webhookd's worker; a commit on
// canary reaches the canary alone, its metrics say it applied it, and the
// host that is down exports nothing.
func TestFleetFollowsItsBranches(t *testing.T) {
	bare, work := filepath.Join(t.TempDir(), "fleet.git"), t.TempDir()
	git := func(dir string, args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.org"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	hosts := Layout(3)
	hosts[2].Down = true
	for _, h := range hosts {
		write(t, filepath.Join(work, "hosts", h.Name, "labels"), string(h.LabelsFile()))
	}
	git(work, "init", "-q", "-b", "main")
	git(work, "add", "-A")
	git(work, "commit", "-q", "-m", "c0")
	git(work, "clone", "-q", "--bare", work, bare)
	git(bare, "branch", "canary", "main")
	c0 := git(work, "rev-parse", "HEAD")

	rec := &Recorder{}
	o := Options{Dir: t.TempDir(), URL: bare, Poll: 5 * time.Second, Spread: 0, Apply: func() time.Duration { return time.Millisecond }, Fetches: rec}
	for _, h := range hosts[:2] {
		tmpl := filepath.Join(t.TempDir(), "tmpl")
		cfg, err := o.Config(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := clone.New(cfg, tmpl).Fetch(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := o.Prepare(h, tmpl, c0, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	run, err := Start(hosts, o)
	if err != nil {
		t.Fatal(err)
	}
	defer run.StopWithin(time.Minute)
	handler, err := Handler(hosts)
	if err != nil {
		t.Fatal(err)
	}
	scrape := func(h *Host) string {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/"+h.Name+"/metrics", nil))
		return rec.Body.String()
	}
	if m := scrape(hosts[0]); !strings.Contains(m, `webhookd_applied_commit_info{commit="`+c0+`",repo="fleet"} 1`) ||
		!strings.Contains(m, `webhookd_host_info{host="h00001",region="eu",repo="fleet",ring="canary",site="eu1"} 1`) || !strings.Contains(m, "go_goroutines") {
		t.Fatalf("h00001 at its start:\n%s", m)
	}

	write(t, filepath.Join(work, "hosts", "h00001", "web.json"), "{}")
	git(work, "add", "-A")
	git(work, "commit", "-q", "-m", "c1")
	git(work, "push", "-q", bare, "HEAD:canary")
	c1 := git(work, "rev-parse", "HEAD")
	applied := `webhookd_applied_commit_info{commit="` + c1 + `",repo="fleet"} 1`
	for deadline := time.Now().Add(time.Minute); !strings.Contains(scrape(hosts[0]), applied); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("h00001 did not apply %s:\n%s", c1, scrape(hosts[0]))
		}
	}
	if m := scrape(hosts[1]); strings.Contains(m, c1) {
		t.Errorf("h00002 follows main, but exports the canary commit:\n%s", m)
	}
	if m := scrape(hosts[2]); !strings.Contains(m, "h00003 is down") {
		t.Errorf("h00003 is down, but exports:\n%s", m)
	}
	if n := len(rec.Between(time.Time{}, time.Now())); n < 3 {
		t.Errorf("%d fetches recorded", n)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
