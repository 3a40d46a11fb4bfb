package calendar

import (
	"testing"
	"time"
)

func mustWindow(t *testing.T, spec string, d time.Duration) Window {
	t.Helper()
	s, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return Window{Spec: s, Duration: d}
}

// TestAt: a window is open from each elapse for its duration (the end
// excluded), several windows are open when any is, and the next opening
// is given in the spec's zone.
func TestAt(t *testing.T) {
	nights := mustWindow(t, "Mon..Thu 02:00 Europe/Berlin", 3*time.Hour)
	sunday := mustWindow(t, "Sun 10:00 UTC", time.Hour)
	utc := func(s string) time.Time {
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	for i, c := range []struct {
		at           string
		open         bool
		closes, next string
	}{
		{"2026-12-07T00:59:59Z", false, "", "2026-12-07T01:00:00Z"}, // Monday 01:59:59 in Berlin
		{"2026-12-07T01:00:00Z", true, "2026-12-07T04:00:00Z", "2026-12-08T01:00:00Z"},
		{"2026-12-07T03:59:59Z", true, "2026-12-07T04:00:00Z", "2026-12-08T01:00:00Z"},
		{"2026-12-07T04:00:00Z", false, "", "2026-12-08T01:00:00Z"},
		{"2026-12-11T01:30:00Z", false, "", "2026-12-13T10:00:00Z"}, // Friday: frozen
		{"2026-12-13T10:30:00Z", true, "2026-12-13T11:00:00Z", "2026-12-14T01:00:00Z"},
	} {
		st := At([]Window{nights, sunday}, utc(c.at))
		if st.Open != c.open || c.open && !st.Closes.Equal(utc(c.closes)) || !st.Next.Equal(utc(c.next)) {
			t.Errorf("#%d at %s: %+v, want open %v closes %s next %s", i, c.at, st, c.open, c.closes, c.next)
		}
	}
	if got := nights.String(); got != "Mon..Thu 02:00 Europe/Berlin for 3h" {
		t.Errorf("String() = %q", got)
	}
	if st := At([]Window{nights}, utc("2026-12-07T00:00:00Z")); st.Next.Location().String() != "Europe/Berlin" {
		t.Errorf("next opening in %s, want the spec's Europe/Berlin", st.Next.Location())
	}
	if st := At(nil, time.Now()); !st.Open {
		t.Error("no window is not always open")
	}
	// Openings that overlap: open until the last one closes.
	every := mustWindow(t, "*:00,30 UTC", time.Hour)
	if st := At([]Window{every}, utc("2026-12-07T10:45:00Z")); !st.Open || !st.Closes.Equal(utc("2026-12-07T11:30:00Z")) {
		t.Errorf("overlapping openings: %+v", st)
	}
}
