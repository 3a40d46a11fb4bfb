package webhookd

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/calendar"
	"github.com/syslet/syslet/webhookd/queue"
)

// TestWindowOnThePageAndStatus: a push outside the repository's window is
// accepted and queued; GET /status and the page say it waits for the next
// opening, in the zone of the window's spec, and nothing is deployed.
func TestWindowOnThePageAndStatus(t *testing.T) {
	f, _ := newPageFixture(t, "127.0.0.1:9090", "")
	spec, err := calendar.Parse("2199-01-01 00:00 UTC") // not open before then
	must(t, err)
	f.d.cfg.Repos[0].MaintenanceWindows = []calendar.Window{{Spec: spec, Duration: time.Hour}}
	f.start()
	c := f.remote.commit(`{"n":1}`)
	f.push(GitHub, "refs/heads/main", c)
	f.wait("the push queued", func(st queue.RepoStatus) bool { return st.Queued == c })

	var doc struct {
		Repos []queue.RepoStatus `json:"repos"`
	}
	must(t, json.Unmarshal(f.get("/status").Body.Bytes(), &doc))
	st := doc.Repos[0]
	const waiting = "waiting for window Tue 2199-01-01 00:00 UTC"
	if w := st.Window; w == nil || w.Open || w.Waiting != waiting || st.LastApplied != "" || st.Last != nil {
		t.Fatalf("/status: window %+v, applied %q, last %+v", st.Window, st.LastApplied, st.Last)
	}
	page := f.get("/").Body.String()
	for _, want := range []string{`<dt>Window</dt><dd id="window-infra"><span class="warn">` + waiting + `</span>`, "2199-01-01 00:00 UTC for 1h"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
}
