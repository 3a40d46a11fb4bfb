package verdict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Report is a verdict as every JSON document of a run carries it, at the
// top of the document: its machine name, and the exit code syslet exits
// with for it.
//
//	"verdict": "rolled-back",
//	"exit": 4,
//
// The document of an apply, an update, a rollback and a --diff
// (pkg/app/view's Outcome) embeds it; so does any other document that
// tells how a run ended, so that a reader (syslet push, a CI job) finds
// the ending in one place whatever the command.
type Report struct {
	Verdict Verdict `json:"verdict"`
	Exit    int     `json:"exit"`
}

// Report is the verdict as a document carries it; the zero Verdict (a
// run that has not ended) gives the zero Report.
func (v Verdict) Report() Report {
	if v == 0 {
		return Report{}
	}
	return Report{Verdict: v, Exit: v.Exit()}
}

// PlanCounts is the plan's tally in a run's document ("planCounts"):
// its units by what the plan does to them, and its actions; what the
// plan's summary line says in words. pkg/app/view writes it, syslet push
// reads it.
type PlanCounts struct {
	Create    int `json:"create"`
	Change    int `json:"change"`
	Reload    int `json:"reload"`
	Metadata  int `json:"metadata"`
	Remove    int `json:"remove"`
	Start     int `json:"start"`
	Stop      int `json:"stop"`
	Unchanged int `json:"unchanged"`
	Drift     int `json:"drift"`
	Actions   int `json:"actions"`
}

// A run's document can travel beside the text a person reads, in the same
// stream, as one record of a JSON text sequence (RFC 7464): the record
// separator RS (0x1E), the document on one line, a line feed. No line of
// syslet's text begins with RS (every outside string is escaped on its
// way to a terminal, control characters included), so a reader tells the
// record from the text by its first byte alone, never by any wording.
const RecordSeparator = 0x1e

// WriteRecord writes doc as one record: RS, its JSON on one line, LF.
func WriteRecord(w io.Writer, doc any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	rec := make([]byte, 0, len(b)+2)
	rec = append(rec, RecordSeparator)
	rec = append(rec, b...)
	_, err = w.Write(append(rec, '\n'))
	return err
}

// ReadRecord decodes a record (from its RS to its line feed, which may
// be left off) into doc.
func ReadRecord(line []byte, doc any) error {
	if len(line) == 0 || line[0] != RecordSeparator {
		return fmt.Errorf("verdict: not a record: it does not begin with RS (0x1E)")
	}
	return json.Unmarshal(bytes.TrimSpace(line[1:]), doc)
}
