package calendar

import (
	"fmt"
	"strings"
	"time"
)

// Window is a maintenance window: it opens each time its spec elapses and
// stays open for its duration.
type Window struct {
	Spec     Spec
	Duration time.Duration
}

// String is the window as an operator wrote it: "Mon..Thu 02:00 UTC for 3h".
func (w Window) String() string { return fmt.Sprintf("%s for %s", w.Spec, shortDuration(w.Duration)) }

// shortDuration is d without the zero minutes and seconds Go's String
// gives (3h, 1h30m, 30m rather than 3h0m0s, 1h30m0s, 30m0s).
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// openAt reports whether the window is open at t, and when the opening t
// falls in closes (the latest one, when openings overlap).
func (w Window) openAt(t time.Time) (open bool, closes time.Time) {
	// The openings that still hold at t are those in (t-Duration, t].
	from := t.Add(-w.Duration)
	for i := 0; i < maxOverlap; i++ {
		at, ok := w.Spec.Next(from)
		if !ok || at.After(t) {
			break
		}
		open, closes, from = true, at.Add(w.Duration), at
	}
	return open, closes
}

// maxOverlap bounds the openings of one window that openAt looks at: a
// spec elapsing every minute with a day's duration is open all the same.
const maxOverlap = 1000

// State is where a set of windows stands at a moment.
type State struct {
	// Open: some window is open now; Closes is when the last of those
	// open closes.
	Open   bool
	Closes time.Time
	// Next is the next opening after now, in its spec's time zone (zero
	// when no spec elapses again).
	Next time.Time
}

// At is the state of the windows at t. No window at all is always open.
func At(ws []Window, t time.Time) State {
	if len(ws) == 0 {
		return State{Open: true}
	}
	var st State
	for _, w := range ws {
		if open, closes := w.openAt(t); open {
			st.Open = true
			if closes.After(st.Closes) {
				st.Closes = closes
			}
		}
		if next, ok := w.Spec.Next(t); ok && (st.Next.IsZero() || next.Before(st.Next)) {
			st.Next = next
		}
	}
	return st
}
