package view

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
)

// Outcome is everything one run produced: the document `syslet
// --output json` prints, what webhookd reports and what the run's
// notification says. pkg/app/deploy makes it; it is never changed after
// the run returns it.
//
// Its document opens with the verdict (verdict.Report: "verdict", its
// machine name, and "exit", its exit code; MarshalJSON), then the run:
// its plan, and in "result" each action by what became of it (applied,
// failed with its error, not reached), the gate, and the rollback with
// its own result; it ends with the plan's tally ("planCounts").
type Outcome struct {
	RunID    string           `json:"run,omitempty"`
	Source   string           `json:"source"`
	Specs    int              `json:"specs"`
	Sources  int              `json:"sources"`
	Findings []report.Finding `json:"findings,omitempty"`
	Plan     *plan.Plan       `json:"plan,omitempty"`
	Digest   string           `json:"planDigest,omitempty"`
	Result   *executor.Result `json:"result,omitempty"`
	// Gate is the health gate's verdict on the containers the run started.
	Gate *gate.Report `json:"gate,omitempty"`
	// Rollback is what the rollback after a failed gate did.
	Rollback *RollbackReport `json:"rollback,omitempty"`
	Summary  string          `json:"summary"`
	Error    string          `json:"error,omitempty"`
	// StageDir is the staging directory kept for inspection (a failed
	// staging, or --keep-stage).
	StageDir string `json:"stageDir,omitempty"`
	// SavedPlan is the digest of the saved plan the run wrote, or applied
	// (or found still holding); Stale lists what changed since a saved
	// plan was made, when it was refused.
	SavedPlan string   `json:"savedPlan,omitempty"`
	Stale     []string `json:"stale,omitempty"`
	// Busy names the apply that held the lock while a --diff planned (its
	// plan may show what that apply has not done yet).
	Busy string `json:"applyInProgress,omitempty"`
	// Probes are the installed readiness probes a drift check asked once,
	// each with its answer (deploy.Request.AskProbes).
	Probes []host.Probed `json:"probes,omitempty"`

	// SavedDocument is the saved plan a `--diff --out -` made, for the
	// caller to print on stdout.
	SavedDocument []byte `json:"-"`

	// Verdict is how the run ended: the exit code, the notification and
	// webhookd's result follow from it (pkg/verdict). The document
	// carries it first, with its exit code (MarshalJSON).
	Verdict verdict.Verdict `json:"-"`
	// Took is how long the run took.
	Took time.Duration `json:"-"`
	// SourceKind is where the specs came from, for its events (Source*).
	SourceKind string `json:"-"`
}

// Source kinds of a run, as its events name them.
const (
	SourceStdin    = "stdin"
	SourcePath     = "path"
	SourceStored   = "stored" // /etc/syslet/config.json, a plain `syslet`
	SourceRollback = "rollback"
)

// outcomeFields are the Outcome's own fields, without its methods.
type outcomeFields Outcome

// outcomeDocument is the Outcome as its document reads: the verdict
// first, then the run, then the plan's tally.
type outcomeDocument struct {
	verdict.Report
	*outcomeFields
	Counts *verdict.PlanCounts `json:"planCounts,omitempty"`
}

// MarshalJSON writes the document: the verdict's report (its machine
// name and exit code), the run, and the plan's tally; what is derived is
// derived here, never kept twice.
func (o Outcome) MarshalJSON() ([]byte, error) {
	d := outcomeDocument{Report: o.Verdict.Report(), outcomeFields: (*outcomeFields)(&o)}
	if p := o.Plan; p != nil {
		c := p.Count()
		d.Counts = &verdict.PlanCounts{Create: c.Create, Change: c.Change, Reload: c.Reload, Metadata: c.Metadata, Remove: c.Remove,
			Start: c.Start, Stop: c.Stop, Unchanged: c.Unchanged, Drift: c.Drift, Actions: len(p.Actions)}
	}
	return json.Marshal(d)
}

// UnmarshalJSON reads a document back, its verdict included.
func (o *Outcome) UnmarshalJSON(b []byte) error {
	d := outcomeDocument{outcomeFields: (*outcomeFields)(o)}
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	o.Verdict = d.Report.Verdict
	return nil
}

// Pending reports whether the plan has changes (for --detailed-exitcode).
func (o *Outcome) Pending() bool { return o.Plan != nil && (!o.Plan.Empty() || o.Plan.Drifted()) }

// RollbackReport is what the rollback after a failed health gate did.
type RollbackReport struct {
	// Run is the rollback's own run; Generation the run whose generation
	// it applied again; Of the run whose failed gate started it.
	Run        string `json:"run"`
	Generation string `json:"generation"`
	Of         string `json:"of,omitempty"`
	// Why is what failed the gate, one failure after another.
	Why string `json:"why,omitempty"`
	// Plan is the rollback plan's summary line; Result what became of
	// each of its actions, as the run's own result says of the run's.
	Plan   string           `json:"plan,omitempty"`
	Result *executor.Result `json:"result,omitempty"`
	// Passed says whether the restored host passed the health gate.
	Passed bool         `json:"passed"`
	Gate   *gate.Report `json:"gate,omitempty"`
	// Restored names the volumes the rollback filled again from the
	// backups the failed run took of them.
	Restored []string `json:"restored,omitempty"`
	// NotRestored names what the rollback could not put back.
	NotRestored []string `json:"notRestored,omitempty"`
	Error       string   `json:"error,omitempty"`
}

// Untouched reports whether the rollback ended before its first action
// (the host could not be read, staging or a refusal stopped it, or it
// never ran): the host is then as the failed run left it.
func (r *RollbackReport) Untouched() bool {
	return r.Result == nil || len(r.Result.Applied)+len(r.Result.Failed) == 0
}

// told is what the rollback's last word to a person says (Rollback).
func (r *RollbackReport) told() Rollback {
	t := Rollback{Failed: r.Of, Run: r.Run, Generation: r.Generation, Why: r.Why,
		Restored: r.Restored, NotRestored: r.NotRestored, Untouched: r.Untouched()}
	if r.Error != "" {
		t.Err = errors.New(r.Error)
	}
	return t
}

// rollbackFields are the RollbackReport's own fields, without its methods.
type rollbackFields RollbackReport

// MarshalJSON writes the report with "message": the sentence the run's
// last word said of the rollback (RollbackSummary's, without its
// capitals), derived from the report, for a reader that shows it to a
// person (syslet push's table).
func (r RollbackReport) MarshalJSON() ([]byte, error) {
	_, msg := r.told().words(func(s string) string { return s })
	return json.Marshal(struct {
		*rollbackFields
		Message string `json:"message"`
	}{(*rollbackFields)(&r), msg})
}
