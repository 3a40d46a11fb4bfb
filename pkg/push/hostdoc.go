package push

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/syslet/syslet/pkg/verdict"
)

// hostDocument is what push reads of the JSON document a host's syslet
// reports at the end of its run (pkg/app/view's Outcome, which push, a
// ground package, does not import): the verdict, and what the result
// table shows of the run. Push reads it from the record at the end of
// the host's stderr (verdict.WriteRecord); the text around it is shown as
// it came and never read.
type hostDocument struct {
	verdict.Report
	// Run is the run the host's syslet made of the change.
	Run string `json:"run"`
	// Counts is the plan's tally; nil when the run made no plan.
	Counts *verdict.PlanCounts `json:"planCounts"`
	// Result is what became of the plan's actions; nil when none began.
	Result *struct {
		Applied    []json.RawMessage `json:"applied"`
		Failed     []json.RawMessage `json:"failed"`
		NotReached []json.RawMessage `json:"notReached"`
	} `json:"result"`
	// Stale is what changed since the saved plan the host refused was
	// made.
	Stale []string `json:"stale"`
	// Rollback is the rollback after a failed health gate: its run, and
	// the sentence its last word said.
	Rollback *struct {
		Run     string `json:"run"`
		Message string `json:"message"`
	} `json:"rollback"`
}

// ending is how the host's run ended, by its own verdict: a refused
// saved plan that no longer held is push's Stale.
func (d *hostDocument) ending() Ending {
	e := Ending{Verdict: d.Verdict, Nothing: d.Counts != nil && d.Counts.Actions == 0}
	if d.Verdict == verdict.Refused && len(d.Stale) > 0 {
		e.Own = Stale
	}
	return e
}

// plan is the result table's PLAN: the plan's tally without its zeros,
// its actions, and what became of them ("1 to create, 3 unchanged; 4
// actions; 4 applied, 0 failed, 0 not reached"); "no changes" for a plan
// with no action; "" when the run made none, or the plan it made was not
// the one it was given (a stale saved plan).
func (d *hostDocument) plan() string {
	if d == nil || d.Counts == nil || len(d.Stale) > 0 {
		return ""
	}
	c := d.Counts
	if c.Actions == 0 {
		return "no changes"
	}
	var parts []string
	for _, n := range []struct {
		n    int
		what string
	}{{c.Create, "to create"}, {c.Change, "to change"}, {c.Reload, "to reload"}, {c.Metadata, "metadata-only"},
		{c.Remove, "to remove"}, {c.Start, "to start"}, {c.Stop, "to stop"}, {c.Unchanged, "unchanged"}} {
		if n.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n.n, n.what))
		}
	}
	s := fmt.Sprintf("%d actions", c.Actions)
	if len(parts) > 0 {
		s = strings.Join(parts, ", ") + "; " + s
	}
	if r := d.Result; r != nil {
		s += fmt.Sprintf("; %d applied, %d failed, %d not reached", len(r.Applied), len(r.Failed), len(r.NotReached))
	}
	return s
}

// recorder keeps the record a host's syslet writes on stderr.
type recorder struct {
	mu  sync.Mutex
	doc *hostDocument
}

// keep reads a line of stderr and returns what of it is shown: a record
// is kept (the last one, should there be more), not shown; the text
// before it on its line (a last line of text without its line feed) is
// shown, as is any line that holds no record. Text that begins like a
// record but does not read as one is shown, as it came.
func (rc *recorder) keep(line string) (string, bool) {
	i := strings.IndexByte(line, verdict.RecordSeparator)
	if i < 0 {
		return line, true
	}
	var d hostDocument
	if err := verdict.ReadRecord([]byte(line[i:]), &d); err != nil || d.Verdict == 0 {
		return line, true
	}
	rc.mu.Lock()
	rc.doc = &d
	rc.mu.Unlock()
	return line[:i], i > 0
}

func (rc *recorder) document() *hostDocument {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.doc
}
