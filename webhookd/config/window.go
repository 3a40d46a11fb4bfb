package config

import (
	"fmt"
	"time"

	"github.com/syslet/syslet/pkg/calendar"
)

// validateWindows reads the maintenance windows: each a calendar spec
// systemd would read the same way, open for a positive duration.
func (r *Repo) validateWindows(f func(string) string, add func(field, format string, args ...any)) {
	for i, w := range r.Windows {
		key := func(k string) string { return f(fmt.Sprintf("windows[%d].%s", i, k)) }
		spec, specErr := calendar.Parse(w.Calendar)
		switch {
		case w.Calendar == "":
			add(key("calendar"), "required: when the window opens, e.g. \"Mon..Thu 02:00 UTC\"")
		case specErr != nil:
			add(key("calendar"), "%q: %v", w.Calendar, specErr)
		}
		d, err := time.ParseDuration(w.Duration)
		switch {
		case w.Duration == "":
			add(key("duration"), "required: how long the window stays open, e.g. 3h")
		case err != nil:
			add(key("duration"), "%q is not a duration like 30m or 3h", w.Duration)
		case d <= 0:
			add(key("duration"), "must be positive, got %s", d)
		}
		if w.Calendar != "" && specErr == nil && err == nil && d > 0 {
			r.MaintenanceWindows = append(r.MaintenanceWindows, calendar.Window{Spec: spec, Duration: d})
		}
	}
}
