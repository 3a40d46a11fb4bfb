package view

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The saved-plan texts, whole: what --diff --out, --plan and show print.
func TestSavedTexts(t *testing.T) {
	s := Saved{File: "web1.plan", Made: time.Date(2026, 12, 1, 10, 15, 3, 0, time.UTC), Host: "web1", Root: "/", Syslet: "v1.2.0",
		Source: "/srv/specs", Specs: 3, Sources: 2, InputDigest: "79d5fe501fed0123", Podman: "5.4", PlanDigest: "5e7b12ab34cd5678",
		Actions: 7, Force: true, Files: 9, Units: 3, Secrets: 1, Images: 2, LastRun: "20261201T101003Z-1e331c (ok)"}
	for _, c := range []struct {
		name string
		draw func(w *bytes.Buffer)
		want string
	}{
		{"written", func(w *bytes.Buffer) { SavedWritten(w, s) },
			"\nSaved the plan to web1.plan (0600): 7 action(s), digest 5e7b12ab34cd, with the host state it was made from. `syslet --plan FILE` and the same input apply exactly it, or refuse if the host or the input changed.\n"},
		{"written to stdout", func(w *bytes.Buffer) { s := s; s.File = "-"; SavedWritten(w, s) }, "\nSaved the plan to stdout: 7 action(s)"},
		{"holds", func(w *bytes.Buffer) { SavedHolds(w, s, false) },
			"Saved plan web1.plan (made 2026-12-01T10:15:03Z on web1, digest 5e7b12ab34cd) still holds: the host and the input are as they were; applying exactly its 7 action(s).\n\n"},
		{"holds, --diff", func(w *bytes.Buffer) { SavedHolds(w, s, true) }, "; `syslet --plan` would apply exactly its 7 action(s).\n\n"},
		{"stale", func(w *bytes.Buffer) {
			SavedStale(w, s, []string{"unit api.service: active/running → failed/failed", "file /etc/x\x1b[31m: removed"})
		}, "Saved plan is stale: web1.plan (made 2026-12-01T10:15:03Z on web1, digest 5e7b12ab34cd) no longer holds; nothing was changed. Since it was made:\n" +
			"  - unit api.service: active/running → failed/failed\n  - file /etc/x\\x1b[31m: removed\n" +
			"Make a new plan (syslet --diff --out FILE), review it, and apply that one.\n"},
		{"stale from stdin", func(w *bytes.Buffer) { s := s; s.File = "-"; SavedStale(w, s, nil) }, "Saved plan is stale: the plan from stdin (made "},
		{"header", func(w *bytes.Buffer) { SavedHeader(w, s) },
			"Saved plan web1.plan: made 2026-12-01T10:15:03Z on web1 by syslet v1.2.0\n" +
				"  input:      /srv/specs (digest 79d5fe501fed)\n" +
				"  checked:    against podman 5.4; options: --force\n" +
				"  host state: 9 file(s), 3 unit(s), 1 podman secret(s), 2 image(s); the journal's last run: 20261201T101003Z-1e331c (ok)\n" +
				"  apply it:   syslet --plan FILE with the same input (it is refused if any of that changed)\n\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			c.draw(&b)
			if !strings.Contains(b.String(), c.want) {
				t.Errorf("got\n%q\nwant\n%q", b.String(), c.want)
			}
		})
	}
}
