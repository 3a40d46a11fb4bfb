package webhookd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/webhookd/queue"
)

// invalidDeployer finds the specs invalid with n errors, each naming its
// file by the repository path webhookd gave it, the first one long.
type invalidDeployer struct{ n int }

func (d invalidDeployer) Check(context.Context, queue.DeployRequest) (queue.CheckReport, error) {
	return queue.CheckReport{}, nil
}

func (d invalidDeployer) Deploy(_ context.Context, req queue.DeployRequest) (queue.DeployReport, error) {
	var fs []report.Finding
	fs = append(fs, report.Finding{Source: path.Join(req.SpecPath, "web.json"), Path: "[0].unit.Container.Image", Rule: "required",
		Message: "is required: " + strings.Repeat("a container needs an image to run ", 6), Severity: report.Error})
	fs = append(fs, report.Finding{Source: path.Join(req.SpecPath, "web.json"), Path: "[0].x", Rule: "lint", Message: "a warning, not why", Severity: report.Warning})
	for i := 1; i < d.n; i++ {
		fs = append(fs, report.Finding{Source: path.Join(req.SpecPath, fmt.Sprintf("app%d.json", i)), Path: "[0].name", Rule: "name", Message: fmt.Sprintf("error %d", i), Severity: report.Error})
	}
	head, count := report.Head(fs, notify.MaxFindings)
	err := errors.New("the specs are invalid")
	return queue.DeployReport{Verdict: verdict.Invalid, Findings: fs,
		Event: &notify.Event{Event: notify.Failed, Error: err.Error(), Findings: head, FindingCount: count}}, err
}

// TestInvalidSpecsAreNamed: a commit whose specs are invalid names its
// errors where the pusher looks: /status (file, JSON path, rule, message;
// the first ones and the count), the page, the forge's description (the
// first error and the count, within the forge's limit) and the
// notification.
func TestInvalidSpecsAreNamed(t *testing.T) {
	const n = 12
	forgeRcv, hook := newReceiver(t), newReceiver(t)
	f := newFixture(t, invalidDeployer{n: n}, fmt.Sprintf("    status: {forge: github, api: %s, repo: ops/infra, tokenFile: %s}\nnotify: [{type: webhook, url: %s}]\n",
		forgeRcv.srv.URL, tokenFile(t), hook.srv.URL))
	f.start()
	commit := f.remote.commit(`{"v":1}`)
	f.push(GitHub, "refs/heads/main", commit)
	f.wait("invalid", func(s queue.RepoStatus) bool { return s.Last != nil && s.Last.Commit == commit && s.State == "idle" })
	file := "hosts/" + f.d.cfg.Hostname + "/web.json"

	rec := httptest.NewRecorder()
	f.d.router.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/status", nil))
	var doc struct {
		Repos []struct {
			Last struct {
				Verdict      string
				Findings     []struct{ Source, Path, Rule, Message, Severity string }
				FindingCount int
			}
		}
	}
	must(t, json.Unmarshal(rec.Body.Bytes(), &doc))
	last := doc.Repos[0].Last
	if last.Verdict != "invalid" || len(last.Findings) != notify.MaxFindings || last.FindingCount != n {
		t.Fatalf("/status: verdict %q, %d findings of %d; want invalid, %d of %d", last.Verdict, len(last.Findings), last.FindingCount, notify.MaxFindings, n)
	}
	if first := last.Findings[0]; first.Source != file || first.Path != "[0].unit.Container.Image" || first.Rule != "required" || !strings.HasPrefix(first.Message, "is required") {
		t.Errorf("/status: first finding %+v", first)
	}
	for _, fd := range last.Findings {
		if fd.Severity != "error" {
			t.Errorf("/status: %+v is not an error", fd)
		}
	}

	page := html.UnescapeString(f.get("/").Body.String())
	for _, want := range []string{file + ": [0].unit.Container.Image: is required", "app9.json: [0].name: error 9", fmt.Sprintf("… and %d more", n-notify.MaxFindings)} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not say %q", want)
		}
	}

	reqs := forgeRcv.waitN(t, 2)
	var st map[string]string
	must(t, json.Unmarshal(reqs[1].body, &st))
	d := st["description"]
	if st["state"] != "failure" || !strings.HasPrefix(d, "invalid specs on "+f.d.cfg.Hostname+": "+file+": [0].unit.Container.Image: is required") ||
		!strings.HasSuffix(d, fmt.Sprintf("… (+%d more)", n-1)) || len(d) > 140 {
		t.Errorf("the forge was told %q (%d bytes)", d, len(d))
	}

	_, evs := events(t, hook.waitN(t, 1))
	if ev := evs[0]; len(ev.Findings) != notify.MaxFindings || ev.FindingCount != n || ev.Findings[0].Source != file {
		t.Errorf("notified %+v", ev)
	}
}
