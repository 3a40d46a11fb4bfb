package deploy

import (
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
	"github.com/rs/zerolog"
	"github.com/syslet/syslet/pkg/app/view"
)

// messageID marks syslet's per-action journal entries, so that
// `journalctl MESSAGE_ID=…` finds every action of every run.
const messageID = "5b0c3f1e9a7d4c2e8f6a1b3d5c7e9f10"

// newLogger returns the logger for per-action lines (w: the view's
// Actions): structured entries sent to the systemd journal when w is
// stderr and stderr is the journal (syslet running as a unit, e.g. under
// webhookd), console lines on w otherwise.
func newLogger(w io.Writer, runID string) zerolog.Logger {
	zerolog.TimeFieldFormat = time.RFC3339Nano
	var out io.Writer
	if f, ok := w.(*os.File); ok && f == os.Stderr && stderrIsJournal() {
		out = journalWriter{}
	} else {
		// The run's id heads the actions ("Applying (run …)") and ends
		// their summary: on each console line it is clutter. The
		// journal's entries keep it as SYSLET_RUN.
		out = zerolog.ConsoleWriter{Out: w, NoColor: !view.IsTerminal(w), TimeFormat: "15:04:05.000", FieldsExclude: []string{"run"}}
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
	var ev map[string]any
	if err := json.Unmarshal(p, &ev); err != nil {
		return len(p), journal.Send(strings.TrimSpace(string(p)), journal.PriInfo, nil)
	}
	vars := map[string]string{"MESSAGE_ID": messageID, "SYSLET_RESULT": str(ev["message"])}
	for k, field := range map[string]string{"run": "SYSLET_RUN", "step": "SYSLET_STEP", "op": "SYSLET_OP", "target": "SYSLET_TARGET", "took": "SYSLET_TOOK", "error": "SYSLET_ERROR"} {
		if v, ok := ev[k]; ok {
			vars[field] = str(v)
		}
	}
	pri := journal.PriInfo
	if ev["level"] == "error" {
		pri = journal.PriErr
	}
	msg := strings.TrimSpace(str(ev["message"]) + " " + str(ev["op"]) + " " + str(ev["target"]))
	if e := str(ev["error"]); e != "" {
		msg += ": " + e
	}
	return len(p), journal.Send(msg, pri, vars)
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
