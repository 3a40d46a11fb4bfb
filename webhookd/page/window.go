package page

import (
	"time"

	"github.com/syslet/syslet/pkg/redact"
	"github.com/syslet/syslet/webhookd/queue"
)

// windowView is a repository's maintenance windows on the page: its
// times in the zone of the spec they come from, as the operator wrote it.
type windowView struct {
	Open         bool
	Waiting      string // "waiting for window Tue 2026-12-08 02:00 CET"
	Closes, Next string
	Windows      []string
	Override     string // who opened it, until when and why
}

// windowPage is ws as the page shows it (nil: no windows).
func windowPage(ws *queue.WindowStatus) *windowView {
	if ws == nil {
		return nil
	}
	v := &windowView{Open: ws.Open, Waiting: ws.Waiting, Closes: inZone(ws.ClosesAt), Next: inZone(ws.NextOpen), Windows: ws.Windows}
	if o := ws.Override; o != nil {
		v.Override = redact.Escape("opened by " + o.By + " until " + o.Until.UTC().Format(stamp) + ": " + o.Reason)
	}
	return v
}

// inZone is t in its own time zone ("" for none).
func inZone(t *time.Time) string {
	if t == nil {
		return ""
	}
	return queue.WindowTime(*t)
}
