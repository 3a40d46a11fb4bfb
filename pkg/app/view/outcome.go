package view

import (
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
)

// Outcome is everything one run produced: the document `syslet
// --output json` prints, what webhookd reports and what the run's
// notification says. pkg/app/deploy makes it; it is never changed after
// the run returns it.
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

	// SavedDocument is the saved plan a `--diff --out -` made, for the
	// caller to print on stdout.
	SavedDocument []byte `json:"-"`

	// Verdict is how the run ended: the exit code, the notification and
	// webhookd's result follow from it (pkg/verdict).
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

// Pending reports whether the plan has changes (for --detailed-exitcode).
func (o *Outcome) Pending() bool { return o.Plan != nil && (!o.Plan.Empty() || o.Plan.Drifted()) }

// RollbackReport is what the rollback after a failed health gate did.
type RollbackReport struct {
	// Run is the rollback's own run; Generation the run whose generation
	// it applied again; Of the run whose failed gate started it.
	Run        string `json:"run"`
	Generation string `json:"generation"`
	Of         string `json:"of,omitempty"`
	// Plan is the rollback plan's summary line.
	Plan string `json:"plan,omitempty"`
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
