package view

import (
	"fmt"
	"io"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
)

// Operation is how one run of syslet (a plan, an apply, a rollback) is
// shown while it goes: pkg/app/deploy calls it at each point a person or a
// machine may want to hear of, and holds no writer of its own. Human draws
// today's text, JSON the same text on stderr and the Outcome as one
// document on stdout, Reported today's text with the Outcome as a record
// at its end (syslet push), Log structured log lines (webhookd). Every
// method is called on the run's own goroutine, in the order the run
// reaches it.
type Operation interface {
	// Findings are the specs' findings: warnings, or the errors that stop
	// the run.
	Findings(report.Report)
	// Warning is something the run goes on past.
	Warning(msg string)
	// Busy: a --diff found an apply holding the lock (holder), whose
	// changes its plan may not show yet. Waiting: an apply waits for it.
	Busy(holder string)
	Waiting(holder string)

	// Plan is the plan, with what it was made against; RollingBack says,
	// before it, that the plan is a rollback's (of: the run whose failed
	// gate it follows, "" for one asked for by hand).
	Plan(Against, *plan.Plan)
	RollingBack(gen, of string)
	// StagingWarning is a warning of the quadlet generator or
	// systemd-analyze; StagingFailed their refusal; StageKept where the
	// staging directory was kept (note: the file in it that explains it).
	StagingWarning(msg string)
	StagingFailed(err error)
	StageKept(dir, note string)
	// SecretValues are the values of the secrets the plan creates, asked
	// for with SYSLET_SHOW_SECRETS=true on a --diff; only a person's view
	// shows them.
	SecretValues(lines []string)
	// Leftovers: temporary files an interrupted run left, which the next
	// apply removes; Swept: how many this apply removed.
	Leftovers(n int)
	Swept(n int)

	// Saved plans: written by --diff --out, still holding, or stale.
	SavedWritten(Saved)
	SavedHolds(s Saved, diff bool)
	SavedStale(s Saved, changes []string)

	// Applying: the run begins changing the host. Progress is where image
	// pulls draw their progress (nil: nowhere); Actions where the
	// per-action log lines go.
	Applying(runID string)
	Progress() io.Writer
	Actions() io.Writer
	// Applied is the executor's result.
	Applied(runID string, res *executor.Result)
	// JudgingEarlier: a run with nothing to change holds an earlier run's
	// containers to the health gate. Gate is the gate's verdict.
	JudgingEarlier()
	Gate(*gate.Report)
	// NoRollback: the gate failed and the host stays as the run left it;
	// RolledBack: what the rollback after a failed gate came to.
	NoRollback(why NoRollbackReason)
	RolledBack(Rollback)

	// Done is the run's outcome, once, at its end.
	Done(*Outcome)
}

// Human draws a run for people: the plan and the run's story on out,
// warnings and notes on errs. With out and errs the same, everything goes
// there.
type Human struct {
	out, errs io.Writer
	// quietSecrets: values are never drawn (a machine reads out).
	quietSecrets bool
}

var _ Operation = (*Human)(nil)

// NewHuman draws on out (stdout) and errs (stderr).
func NewHuman(out, errs io.Writer) *Human { return &Human{out: out, errs: errs} }

func (h *Human) Findings(rep report.Report) { Findings(h.errs, rep) }
func (h *Human) Warning(msg string)         { Printf(h.errs, "syslet: warning: %s\n", msg) }
func (h *Human) Busy(holder string) {
	Printf(h.errs, "syslet: an apply is in progress (%s); this plan does not include what it has not done yet\n", holder)
}
func (h *Human) Waiting(holder string) {
	Printf(h.errs, "syslet: another apply is running: %s; waiting for it to finish\n", holder)
}
func (h *Human) Plan(a Against, p *plan.Plan) { PlanWithHeader(h.out, a, p) }
func (h *Human) RollingBack(gen, of string)   { RollbackHeader(h.out, gen, of) }
func (h *Human) StagingWarning(msg string)    { Printf(h.errs, "syslet: staging warning: %s\n", msg) }

// StagingFailed shows nothing for people: the run's error, printed as its
// last word, carries the tools' messages, and printing them here too told
// them twice.
func (h *Human) StagingFailed(error) {}
func (h *Human) StageKept(dir, note string) {
	Printf(h.errs, "syslet: the staged units are kept in %s (0700; units/: the unit files as staged, generated/: what podman's generator made of them; %s says how to rerun it)\n", dir, note)
}
func (h *Human) SecretValues(lines []string) {
	if h.quietSecrets || len(lines) == 0 {
		return
	}
	fmt.Fprintf(h.out, "\nSecret values (%s=true; shown by --diff only):\n", ShowSecretsEnv)
	for _, l := range lines {
		fmt.Fprintln(h.out, l)
	}
}
func (h *Human) Leftovers(n int) {
	fmt.Fprintf(h.errs, "syslet: %d temporary file(s) an interrupted run left in the managed trees; the next apply removes them\n", n)
}
func (h *Human) Swept(n int) {
	fmt.Fprintf(h.errs, "syslet: removed %d temporary file(s) an interrupted run left in the managed trees\n", n)
}
func (h *Human) SavedWritten(s Saved)                 { SavedWritten(h.out, s) }
func (h *Human) SavedHolds(s Saved, diff bool)        { SavedHolds(h.out, s, diff) }
func (h *Human) SavedStale(s Saved, changes []string) { SavedStale(h.errs, s, changes) }
func (h *Human) Applying(runID string)                { Applying(h.out, runID) }
func (h *Human) Progress() io.Writer {
	if IsTerminal(h.errs) {
		return h.errs
	}
	return nil
}
func (h *Human) Actions() io.Writer { return h.errs }
func (h *Human) Applied(runID string, res *executor.Result) {
	ApplySummary(h.out, runID, res)
}
func (h *Human) JudgingEarlier() {
	fmt.Fprintf(h.out, "The previous run's changes all landed, but its health gate gave no verdict; judging its containers now.\n")
}
func (h *Human) Gate(g *gate.Report) { Gate(h.out, g) }
func (h *Human) NoRollback(why NoRollbackReason) {
	switch why {
	case PolicyNever:
		fmt.Fprintln(h.out, "\nNot rolling back (--rollback=never): the host stays as this run left it.")
	case NoGeneration:
		fmt.Fprintln(h.out, "\nNo earlier generation is kept, so there is nothing to roll back to: the host stays as this run left it.")
	}
}
func (h *Human) RolledBack(r Rollback) { RollbackSummary(h.out, r) }
func (h *Human) Done(*Outcome)         {}

// NoRollbackReason is why a failed gate was not rolled back.
type NoRollbackReason uint8

const (
	PolicyNever  NoRollbackReason = iota + 1 // --rollback=never
	NoGeneration                             // no generation is kept to return to
)

// ShowSecretsEnv reveals decrypted values in the text of --diff, and
// nowhere else (not in an apply's output, not in --output json).
const ShowSecretsEnv = "SYSLET_SHOW_SECRETS"

// JSON is the view of --output json: the run's story for people on
// stderr, and its Outcome as one JSON document on stdout at the end.
type JSON struct {
	*Human
	doc io.Writer
}

// NewJSON writes the document on stdout and the text on stderr.
func NewJSON(stdout, stderr io.Writer) *JSON {
	return &JSON{Human: &Human{out: stderr, errs: stderr, quietSecrets: true}, doc: stdout}
}

// Done writes the document. A write error has nowhere to go but the exit
// code, which the run's verdict already says.
func (j *JSON) Done(o *Outcome) {
	if o != nil {
		_ = WriteJSON(j.doc, o)
	}
}

// Reported is the view of --output text+json: the text of Human, drawn on
// out and errs exactly as for people, then the run's Outcome as one record
// (verdict.WriteRecord: RS, the document on one line, LF) on errs when
// the run ends. syslet push runs each host's syslet so: it shows the text
// as it came and reads the host's ending from the record.
type Reported struct {
	*Human
}

// NewReported draws on out and errs as NewHuman does, and writes the
// record on errs.
func NewReported(out, errs io.Writer) *Reported { return &Reported{Human: NewHuman(out, errs)} }

// RolledBack lists the volumes the rollback restored, and leaves its
// sentence to the record's reader: syslet push says it once for the host,
// beside its table, from the record's rollback message.
func (r *Reported) RolledBack(rb Rollback) { RollbackVolumes(r.out, rb) }

// Done writes the record. A write error has nowhere to go but the exit
// code, which the run's verdict already says.
func (r *Reported) Done(o *Outcome) {
	if o != nil {
		_ = verdict.WriteRecord(r.errs, o)
	}
}
