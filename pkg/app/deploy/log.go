package deploy

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
	"github.com/rs/zerolog"
	"github.com/syslet/syslet/pkg/app/view"
)

// messageID marks syslet's per-action journal entries, so that
// `journalctl MESSAGE_ID=…` finds every action of every run.
const messageID = "5b0c3f1e9a7d4c2e8f6a1b3d5c7e9f10"

// newLogger returns the logger for per-action lines (w: the view's
// Actions). Every run on a host with a journal sends each action to it
// as a structured entry, so `journalctl SYSLET_RUN=…` finds a run however
// it was started: when w is stderr and stderr is the journal (syslet
// running as a unit, or inside webhookd) that entry is the line; when w
// is stderr and something else (a terminal, a pipe, an SSH session), w
// gets console lines as well. Any other w (a test's buffer) gets the
// console lines alone.
func newLogger(w io.Writer, runID string) zerolog.Logger {
	zerolog.TimeFieldFormat = time.RFC3339Nano
	// The run's id heads the actions ("Applying (run …)") and ends their
	// summary: on each console line it is clutter. The journal's entries
	// keep it as SYSLET_RUN.
	var out io.Writer = zerolog.ConsoleWriter{Out: w, NoColor: !view.IsTerminal(w), TimeFormat: "15:04:05.000", FieldsExclude: []string{"run"}}
	if f, ok := w.(*os.File); ok && f == os.Stderr {
		switch {
		case stderrIsJournal():
			out = journalWriter{}
		case journal.Enabled():
			out = zerolog.MultiLevelWriter(out, bestEffort{journalWriter{}})
		}
	}
	return zerolog.New(out).With().Timestamp().Str("run", runID).Logger()
}

func stderrIsJournal() bool {
	ok, err := journal.StderrIsJournalStream()
	return err == nil && ok
}

// journalWriter turns zerolog's JSON events into journal entries whose
// fields (SYSLET_RUN, SYSLET_STEP, SYSLET_OP, SYSLET_TARGET,
// SYSLET_RESULT, SYSLET_TOOK) can be matched with journalctl.
type journalWriter struct{}

func (journalWriter) Write(p []byte) (int, error) {
	msg, pri, vars := journalEntry(p)
	return len(p), journal.Send(msg, pri, vars)
}

// journalEntry is the journal entry of one zerolog event: its MESSAGE is
// the event's JSON object itself, on one line, like every other line of
// webhookd's journal (which runs syslet in its own process), and its
// fields are the event's, by the names journalctl matches.
func journalEntry(p []byte) (msg string, pri journal.Priority, vars map[string]string) {
	msg = string(bytes.TrimSpace(p))
	var ev map[string]any
	if err := json.Unmarshal(p, &ev); err != nil {
		return msg, journal.PriInfo, nil
	}
	vars = map[string]string{"MESSAGE_ID": messageID, "SYSLET_RESULT": str(ev["message"])}
	for k, field := range map[string]string{"run": "SYSLET_RUN", "step": "SYSLET_STEP", "op": "SYSLET_OP", "target": "SYSLET_TARGET", "took": "SYSLET_TOOK", "error": "SYSLET_ERROR"} {
		if v, ok := ev[k]; ok {
			vars[field] = str(v)
		}
	}
	pri = journal.PriInfo
	if ev["level"] == "error" {
		pri = journal.PriErr
	}
	return msg, pri, vars
}

// bestEffort drops the errors of a copy of the lines: a journal that
// refuses an entry must not get in the way of the lines on the console.
type bestEffort struct{ w io.Writer }

func (b bestEffort) Write(p []byte) (int, error) {
	b.w.Write(p)
	return len(p), nil
}

func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
