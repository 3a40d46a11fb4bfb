package queue

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/calendar"
	"github.com/syslet/syslet/webhookd/metrics"
)

// Maintenance windows: a repository with repos[].windows applies a new
// commit only while one is open. Outside them its pushes stay queued
// (coalesced to the newest, as always) and the run loop wakes at the next
// opening; a deploy taken inside a window runs to its end whatever the
// clock says meanwhile. An operator opens the windows for an emergency
// with `webhookd --open-window`, which writes an Override file the worker
// reads each time it decides.

// Override opens a repository's windows until a time, whoever asked and
// why: the record of an emergency deploy outside its windows.
type Override struct {
	Until  time.Time `json:"until"`
	By     string    `json:"by"` // the operator (sudo's user, else the login)
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

// OverrideFile is where the override of repo is kept: beside its status,
// in the state directory only root may write.
func OverrideFile(stateDir, repo string) string {
	return filepath.Join(stateDir, ".status", repo+".window.json")
}

// overrideKind is an override file as webhookd reads it: small, regular.
var overrideKind = bounded.Kind{What: "webhookd's window override", Max: 64 << 10}

// WriteOverride saves o as the override in file, or removes the file when
// o.Until is not after o.At (the windows rule again).
func WriteOverride(file string, o Override) error {
	if !o.Until.After(o.At) {
		if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	raw, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	return bounded.WriteState(file, append(raw, '\n'), 0o600)
}

// readOverride is the override in file in force at now (nil when there is
// none, or it has run out).
func readOverride(file string, now time.Time) (*Override, error) {
	if file == "" {
		return nil, nil
	}
	raw, err := bounded.ReadFile(file, overrideKind)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var o Override
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if !o.Until.After(now) {
		return nil, nil
	}
	return &o, nil
}

// WindowStatus is where a repository's windows stand, in GET /status.
type WindowStatus struct {
	// Open: a new commit is applied now (a window is open, or an
	// override holds it open).
	Open    bool     `json:"open"`
	Windows []string `json:"windows"` // as configured: "Mon..Thu 02:00 Europe/Berlin for 3h"
	// ClosesAt is when the open window closes; NextOpen is the next
	// opening, in the time zone of the spec it comes from.
	ClosesAt *time.Time `json:"closesAt,omitempty"`
	NextOpen *time.Time `json:"nextOpen,omitempty"`
	// Override is the emergency opening in force, if any.
	Override *Override `json:"override,omitempty"`
	// Waiting is set while a queued commit waits for the next opening:
	// "waiting for window Tue 2026-12-08 02:00 CET".
	Waiting string `json:"waiting,omitempty"`
	// OverrideError says why the override file could not be read (the
	// windows then rule alone).
	OverrideError string `json:"overrideError,omitempty"`
	// byOverride: only the override holds it open.
	byOverride bool
}

// windowRecheck bounds how long a worker with a held push sleeps before it
// looks again: an override written meanwhile is seen within it.
const windowRecheck = 5 * time.Second

// window is where the repository's windows stand at now, queued saying
// whether a commit waits (nil: the repository has no windows).
func (w *Worker) window(now time.Time, queued bool) *WindowStatus {
	if len(w.cfg.MaintenanceWindows) == 0 {
		return nil
	}
	cs := calendar.At(w.cfg.MaintenanceWindows, now)
	ws := &WindowStatus{Open: cs.Open}
	for _, win := range w.cfg.MaintenanceWindows {
		ws.Windows = append(ws.Windows, win.String())
	}
	if cs.Open {
		ws.ClosesAt = &cs.Closes
	}
	if !cs.Next.IsZero() {
		ws.NextOpen = &cs.Next
	}
	o, err := readOverride(w.overrideFile, now)
	if err != nil {
		ws.OverrideError = err.Error()
	}
	if o != nil {
		ws.Open, ws.Override, ws.byOverride = true, o, !cs.Open
	}
	if queued && !ws.Open {
		ws.Waiting = "waiting for window " + opening(ws.NextOpen)
	}
	return ws
}

// opening says when a window next opens.
func opening(next *time.Time) string {
	if next == nil {
		return "(none: no window opens again)"
	}
	return WindowTime(*next)
}

// WindowTime is how a window's opening or closing is shown: in the time
// zone of the spec it comes from, which is where the operator reads it.
func WindowTime(t time.Time) string { return t.Format("Mon 2006-01-02 15:04 MST") }

// held is what the run loop waits on while pushes wait for a window: a
// timer for the next opening, or windowRecheck if sooner (nil when nothing
// waits). It logs a newly held commit once: logged is the last one
// logged, and the returned string the one now.
func (w *Worker) held(logged string) (<-chan time.Time, string) {
	newest, n := w.queue.waiting()
	now := w.now()
	ws := w.window(now, n > 0)
	if n == 0 || ws == nil || ws.Open {
		return nil, ""
	}
	if newest != logged {
		w.log.Info().Str("commit", newest).Int("pushes", n).Str("nextOpen", opening(ws.NextOpen)).
			Msg("outside the maintenance windows: the commit is queued until the next opening")
		if ws.OverrideError != "" {
			w.log.Warn().Str("error", ws.OverrideError).Msg("the window override is unreadable: the windows rule alone")
		}
	}
	wait := windowRecheck
	if ws.NextOpen != nil && ws.NextOpen.Sub(now) < wait {
		wait = max(ws.NextOpen.Sub(now), 0)
	}
	return time.After(wait), newest
}

// gate says whether the queued pushes may be deployed now, and the note
// their attempt's trigger carries when only an override lets them.
func (w *Worker) gate(now time.Time) (open bool, note string) {
	ws := w.window(now, false)
	switch {
	case ws == nil:
		return true, ""
	case ws.byOverride:
		o := ws.Override
		return true, fmt.Sprintf("outside the windows: opened by %s until %s: %s", o.By, o.Until.UTC().Format(time.RFC3339), o.Reason)
	default:
		return ws.Open, ""
	}
}

// annotate adds note to the trigger of every push of batch (none: as is).
func annotate(batch []push, note string) []push {
	if note == "" {
		return batch
	}
	for i := range batch {
		batch[i].trigger += " (" + note + ")"
	}
	return batch
}

// WindowState is where the windows stand now, for the metrics.
func (w *Worker) WindowState() metrics.WindowState {
	_, n := w.queue.waiting()
	ws := w.window(w.now(), n > 0)
	if ws == nil {
		return metrics.WindowState{Open: true}
	}
	st := metrics.WindowState{Open: ws.Open, Waiting: ws.Waiting != ""}
	if ws.NextOpen != nil {
		st.Next = *ws.NextOpen
	}
	return st
}
