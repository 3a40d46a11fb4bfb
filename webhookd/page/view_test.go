package page

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/webhookd/config"
	"github.com/syslet/syslet/webhookd/queue"
)

const (
	goodCommit = "1111111111111111111111111111111111111111"
	badCommit  = "2222222222222222222222222222222222222222"
	sameCommit = "3333333333333333333333333333333333333333"
)

var t0 = time.Date(2026, 12, 7, 15, 0, 0, 0, time.UTC)

func testRepo(t *testing.T) *config.Repo {
	t.Helper()
	cfg, err := config.Parse("test.yaml", []byte("repos:\n  - name: infra\n    url: /srv/git/infra\n    poll: 1m\n"), "web1")
	if err != nil {
		t.Fatal(err)
	}
	return &cfg.Repos[0]
}

func attempt(commit string, v verdict.Verdict, run string, minute int) *queue.Attempt {
	return &queue.Attempt{Commit: commit, Trigger: "poll", Verdict: v, RunID: run, Started: t0.Add(time.Duration(minute) * time.Minute), Duration: 3}
}

// rendered is the text a reader sees in the element of the overview
// whose id is id: its markup stripped, its spaces folded.
func rendered(t *testing.T, v overview, id string) string {
	t.Helper()
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, "index.html", struct {
		Head head
		overview
	}{head{Title: "test"}, v}); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)id="` + regexp.QuoteMeta(id) + `">(.*?)</(dd|p)>`).FindStringSubmatch(b.String())
	if m == nil {
		t.Fatalf("no element %s in the page:\n%s", id, b.String())
	}
	// A list item or break is a space to a reader; other markup is not.
	text := regexp.MustCompile(`<(li|br)>`).ReplaceAllString(m[1], " ")
	text = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(text, "")
	return strings.Join(strings.Fields(text), " ")
}

func gateText(t *testing.T, st queue.RepoStatus) string {
	t.Helper()
	cfg := testRepo(t)
	st.Name = cfg.Name
	return rendered(t, overview{Repos: []repoView{repoPage(cfg, st, nil)}}, "gate-infra")
}

// TestGateAfterNoChanges: a deploy that changed nothing started nothing
// for the gate to judge; the row says so, and keeps the last real
// verdict with its own commit.
func TestGateAfterNoChanges(t *testing.T) {
	var st queue.RepoStatus
	st.Recent = []*queue.Attempt{
		attempt(goodCommit, verdict.Applied, "20261207T150000Z-aaaaaa", 0),
		attempt(sameCommit, verdict.NoChanges, "20261207T151000Z-bbbbbb", 10),
	}
	got := gateText(t, st)
	t.Logf("the gate row: %s", got)
	want := "no changes in 333333333333 at 2026-12-07 15:10:00 UTC: nothing started, nothing to gate · last verdict: passed for 111111111111 at 2026-12-07 15:00:00 UTC"
	if got != want {
		t.Errorf("the gate row says\n  %s\nwant\n  %s", got, want)
	}

	st.Recent = st.Recent[1:] // no gate verdict before it
	if got, want := gateText(t, st), "no changes in 333333333333 at 2026-12-07 15:10:00 UTC: nothing started, nothing to gate · no gate verdict yet"; got != want {
		t.Errorf("without an earlier verdict the gate row says\n  %s\nwant\n  %s", got, want)
	}
}

// TestGateAfterRollback: a deploy that failed the gate and was rolled
// back leaves a healthy host running the commit applied before; the row
// says what happened to which commit and what the host runs, not a bare
// red "failed".
func TestGateAfterRollback(t *testing.T) {
	rb := attempt(badCommit, verdict.RolledBack, "20261207T151000Z-bbbbbb", 10)
	rb.FailingUnits, rb.RolledBackTo = []string{"web.service: exited 3, restarted 5 time(s) by Restart="}, "20261207T150000Z-aaaaaa"
	var st queue.RepoStatus
	st.Recent = []*queue.Attempt{attempt(goodCommit, verdict.Applied, "20261207T150000Z-aaaaaa", 0), rb}
	st.LastApplied = goodCommit
	got := gateText(t, st)
	t.Logf("the gate row: %s", got)
	want := "rolled back: the deploy of 222222222222 failed the gate at 2026-12-07 15:10:00 UTC and was rolled back; the host runs 111111111111 again, healthy (it passed the gate) web.service: exited 3, restarted 5 time(s) by Restart="
	if got != want {
		t.Errorf("the gate row says\n  %s\nwant\n  %s", got, want)
	}
	if strings.Contains(gateHTML(t, st), `class="bad"`) {
		t.Errorf("a rollback that passed its gate is shown in red: the host is healthy")
	}

	// A later deploy that changed nothing keeps the rollback as the last
	// verdict, and what the host ran after it.
	st.Recent = append(st.Recent, attempt(sameCommit, verdict.NoChanges, "20261207T152000Z-cccccc", 20))
	st.LastApplied = sameCommit
	got = gateText(t, st)
	if want := "no changes in 333333333333 at 2026-12-07 15:20:00 UTC: nothing started, nothing to gate · last verdict: rolled back: the deploy of 222222222222 failed the gate at 2026-12-07 15:10:00 UTC and was rolled back; the host runs 111111111111 again"; !strings.HasPrefix(got, want) {
		t.Errorf("after a deploy that changed nothing the gate row says\n  %s\nwant\n  %s…", got, want)
	}
	st.Recent, st.LastApplied = st.Recent[:2], goodCommit

	// A rollback that failed too: the host needs a person, in red.
	rb.Verdict = verdict.RollbackFailed
	got = gateText(t, st)
	if !strings.HasPrefix(got, "failed: the deploy of 222222222222 failed the gate at 2026-12-07 15:10:00 UTC, and so did the rollback: the host needs a person") {
		t.Errorf("a failed rollback's gate row says %q", got)
	}
	if !strings.Contains(gateHTML(t, st), `<span class="bad">failed</span>`) {
		t.Errorf("a failed rollback is not shown in red")
	}
}

func gateHTML(t *testing.T, st queue.RepoStatus) string {
	t.Helper()
	cfg := testRepo(t)
	st.Name = cfg.Name
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, "index.html", struct {
		Head head
		overview
	}{head{}, overview{Repos: []repoView{repoPage(cfg, st, nil)}}}); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)id="gate-infra">(.*?)</dd>`).FindStringSubmatch(b.String())
	return m[1]
}

// TestDriftUnitsShowTheirReasons: every drifting unit is listed with why
// it differs (the plan's reasons, escaped), whatever its kind.
func TestDriftUnitsShowTheirReasons(t *testing.T) {
	cfg := testRepo(t)
	st := queue.RepoStatus{Name: cfg.Name}
	st.Drift = &queue.DriftStatus{CheckedAt: &t0, Drift: 1, Change: 1, Start: 1, Units: []notify.DriftUnit{
		{Unit: "web.container", Kind: notify.DriftEdited, Effect: notify.DriftEdited, Reasons: []string{"[Container] Environment changed"}},
		{Unit: "api.container", Kind: notify.DriftChange, Effect: "restart", Reasons: []string{"config file /etc/containers/config/api/app.conf: <changed>"}},
		{Unit: "db.container", Kind: notify.DriftStart, Effect: "start", Reasons: []string{"not running (failed)"}},
	}}
	got := rendered(t, overview{Repos: []repoView{repoPage(cfg, st, nil)}}, "drift-infra")
	t.Logf("the drift row: %s", got)
	for _, want := range []string{
		"web.container edited by hand: [Container] Environment changed",
		"api.container would change (restart): config file /etc/containers/config/api/app.conf: &lt;changed&gt;",
		"db.container not running: not running (failed)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the drift row lacks %q", want)
		}
	}
}
