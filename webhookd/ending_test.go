package webhookd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/webhookd/queue"
)

// wordingDeployer ends each deploy with the next verdict of its list, and
// words it as some other ending would be worded: the summary, the event's
// text, the plan and the error say the opposite of how the run ended, as a
// syslet whose human wording changed might.
type wordingDeployer struct {
	mu       sync.Mutex
	verdicts []verdict.Verdict
	n        int
}

func (d *wordingDeployer) Check(context.Context, queue.DeployRequest) (queue.CheckReport, error) {
	return queue.CheckReport{}, nil
}

func (d *wordingDeployer) Deploy(_ context.Context, req queue.DeployRequest) (queue.DeployReport, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := d.verdicts[d.n]
	d.n++
	run := fmt.Sprintf("20260101T0000%02dZ-00000%d", d.n, d.n%10)
	words := "ROLLED BACK: rollback failed; Saved plan is stale; refused"
	var err error
	if v.Failed() {
		words = "no changes: applied, passed the health gate"
		err = errors.New("applied: " + words)
	}
	rep := queue.DeployReport{RunID: run, Summary: words, Verdict: v, Plan: "Plan: " + words + "\n"}
	if v == verdict.RolledBack {
		rep.RolledBackTo, rep.Failing = "gen-1", []string{"web.service: " + words}
	}
	if kind := v.Notify(); kind != "" {
		rep.Event = &notify.Event{Event: kind, Run: run, Summary: words, Error: words}
	}
	return rep, err
}

// TestEndingsAreToldFromTheVerdict: however a run words its ending, /status,
// the status page, the notification and the forge's commit status tell
// each ending by its verdict, in webhookd's own words.
func TestEndingsAreToldFromTheVerdict(t *testing.T) {
	cases := []struct {
		v              verdict.Verdict
		result, stage  string
		outcome, class string
		forge          string // the commit's final state on the forge
		event          string // the notification's kind ("" none)
	}{
		{verdict.Applied, queue.ResultSuccess, "", "applied", "ok", "success", "succeeded"},
		{verdict.NoChanges, queue.ResultSuccess, "", "no changes", "ok", "success", ""},
		{verdict.Judged, queue.ResultSuccess, "", "applied", "ok", "success", ""},
		{verdict.Invalid, queue.ResultFailed, queue.StageApply, "failed at apply", "bad", "failure", "failed"},
		{verdict.Refused, queue.ResultFailed, queue.StageApply, "refused", "bad", "failure", "failed"},
		{verdict.Failed, queue.ResultFailed, queue.StageApply, "failed at apply", "bad", "failure", "failed"},
		{verdict.Interrupted, queue.ResultFailed, queue.StageApply, "failed at apply", "bad", "failure", "failed"},
		{verdict.GateFailed, queue.ResultFailed, queue.StageGate, "failed at health-gate", "bad", "failure", "failed"},
		{verdict.RolledBack, queue.ResultRolledBack, queue.StageGate, "rolled back", "bad", "failure", "rolled-back"},
		{verdict.RollbackFailed, queue.ResultFailed, queue.StageGate, "failed at health-gate", "bad", "failure", "failed"},
	}
	dep := &wordingDeployer{}
	for _, c := range cases {
		dep.verdicts = append(dep.verdicts, c.v)
	}
	forgeRcv, hook := newReceiver(t), newReceiver(t)
	f := newFixture(t, dep, fmt.Sprintf("    status: {forge: github, api: %s, repo: ops/infra, tokenFile: %s}\nnotify: [{type: webhook, url: %s}]\n",
		forgeRcv.srv.URL, tokenFile(t), hook.srv.URL))
	f.start()

	told := 0
	for i, c := range cases {
		commit := f.remote.commit(fmt.Sprintf(`{"v":%d}`, i))
		f.push(GitHub, "refs/heads/main", commit)
		f.wait(c.v.ID(), func(s queue.RepoStatus) bool { return s.Last != nil && s.Last.Commit == commit && s.State == "idle" })

		// /status, as a client reads it.
		rec := httptest.NewRecorder()
		f.d.router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/status", nil))
		var doc struct {
			Repos []struct {
				LastApplied string `json:"lastApplied"`
				Last        struct{ Result, Stage, Verdict string }
			}
		}
		must(t, json.Unmarshal(rec.Body.Bytes(), &doc))
		last := doc.Repos[0].Last
		if last.Result != c.result || last.Stage != c.stage || last.Verdict != c.v.ID() {
			t.Errorf("%s: /status says result %q, stage %q, verdict %q; want %q, %q, %q", c.v.ID(), last.Result, last.Stage, last.Verdict, c.result, c.stage, c.v.ID())
		}
		if applied := doc.Repos[0].LastApplied == commit; applied != (c.result == queue.ResultSuccess) {
			t.Errorf("%s: /status says applied %s", c.v.ID(), doc.Repos[0].LastApplied)
		}

		// The page's row of the attempt.
		row := regexp.MustCompile(`<td><code title="` + commit + `">` + commit[:12] + `</code></td>\s*<td><span class="outcome ([a-z]+)">([^<]+)</span>`)
		m := row.FindStringSubmatch(f.get("/").Body.String())
		if m == nil || m[1] != c.class || m[2] != c.outcome {
			t.Errorf("%s: the page shows %q; want %q (%s)", c.v.ID(), m, c.outcome, c.class)
		}

		// The forge: pending, then the final state.
		reqs := forgeRcv.waitN(t, 2*(i+1))
		var st map[string]string
		must(t, json.Unmarshal(reqs[2*i+1].body, &st))
		if st["state"] != c.forge {
			t.Errorf("%s: the forge was told %q (%s); want %q", c.v.ID(), st["state"], st["description"], c.forge)
		}

		// The notifications: started is the Deployer's to send (this one
		// sends none), the ending's is the run's event with the stage the
		// verdict comes to.
		if c.event != "" {
			told++
			kinds, evs := events(t, hook.waitN(t, told))
			if ev := evs[told-1]; kinds[told-1] != c.event || ev.Stage != c.stage || ev.Source.Commit != commit {
				t.Errorf("%s: notified %q with stage %q for %s; want %q, stage %q", c.v.ID(), kinds[told-1], ev.Stage, ev.Source.Commit, c.event, c.stage)
			}
		}
	}
	if kinds, _ := events(t, hook.requests()); len(kinds) != told {
		t.Errorf("notifications %v; want %d", kinds, told)
	}
	if m := f.metrics(); !strings.Contains(m, `webhookd_deploys_total{repo="infra",result="failed"} 6`) ||
		!strings.Contains(m, `webhookd_deploys_total{repo="infra",result="success"} 3`) ||
		!strings.Contains(m, `webhookd_deploys_total{repo="infra",result="rolled-back"} 1`) {
		t.Errorf("metrics:\n%s", grep(m, "webhookd_deploys_total"))
	}
}
