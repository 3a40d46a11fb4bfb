package deploy

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/plan"
)

// seenView records what a run showed, call by call, so tests assert on
// what deploy told its view (which plan, which gate verdict, which
// warning) rather than on the words a view draws; those are
// pkg/app/view's and the golden files'. It also draws through a Human
// view into buffers, for the failure messages of a test.
type seenView struct {
	human          *view.Human
	stdout, stderr *syncBuffer

	mu    sync.Mutex
	calls []string
	// plans are the plans shown; gates the gate verdicts; outcome is
	// what Done heard.
	plans   []*plan.Plan
	gates   []*gate.Report
	outcome *view.Outcome
}

var _ view.Operation = (*seenView)(nil)

func newSeenView() *seenView {
	v := &seenView{stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	v.human = view.NewHuman(v.stdout, v.stderr)
	return v
}

func (v *seenView) saw(format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.calls = append(v.calls, fmt.Sprintf(format, args...))
}

// Calls are the recorded calls; with prefixes, those starting with one.
func (v *seenView) Calls(prefixes ...string) []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []string
	for _, c := range v.calls {
		if len(prefixes) == 0 || slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(c, p) }) {
			out = append(out, c)
		}
	}
	return out
}

// saw reports whether a call starting with prefix was recorded.
func (v *seenView) has(prefix string) bool { return len(v.Calls(prefix)) > 0 }

func (v *seenView) Findings(rep report.Report) {
	v.saw("Findings %d error(s) %d finding(s)", rep.Errors(), len(rep.Findings))
	v.human.Findings(rep)
}
func (v *seenView) Warning(msg string)    { v.saw("Warning %s", msg); v.human.Warning(msg) }
func (v *seenView) Busy(holder string)    { v.saw("Busy %s", holder); v.human.Busy(holder) }
func (v *seenView) Waiting(holder string) { v.saw("Waiting %s", holder); v.human.Waiting(holder) }
func (v *seenView) Plan(a view.Against, p *plan.Plan) {
	v.mu.Lock()
	v.plans = append(v.plans, p)
	v.mu.Unlock()
	v.saw("Plan %s", view.PlanSummary(p))
	v.human.Plan(a, p)
}
func (v *seenView) RollingBack(gen, of string) {
	v.saw("RollingBack %s of %q", gen, of)
	v.human.RollingBack(gen, of)
}
func (v *seenView) StagingWarning(msg string) {
	v.saw("StagingWarning %s", msg)
	v.human.StagingWarning(msg)
}
func (v *seenView) StagingFailed(err error) {
	v.saw("StagingFailed %s", err)
	v.human.StagingFailed(err)
}
func (v *seenView) StageKept(dir, note string) {
	v.saw("StageKept %s", dir)
	v.human.StageKept(dir, note)
}
func (v *seenView) SecretValues(lines []string) {
	v.saw("SecretValues %d", len(lines))
	v.human.SecretValues(lines)
}
func (v *seenView) Leftovers(n int) { v.saw("Leftovers %d", n); v.human.Leftovers(n) }
func (v *seenView) Swept(n int)     { v.saw("Swept %d", n); v.human.Swept(n) }
func (v *seenView) SavedWritten(s view.Saved) {
	v.saw("SavedWritten %s", s.File)
	v.human.SavedWritten(s)
}
func (v *seenView) SavedHolds(s view.Saved, diff bool) {
	v.saw("SavedHolds %s", s.File)
	v.human.SavedHolds(s, diff)
}
func (v *seenView) SavedStale(s view.Saved, changes []string) {
	v.saw("SavedStale %s %d change(s)", s.File, len(changes))
	v.human.SavedStale(s, changes)
}
func (v *seenView) Applying(runID string) { v.saw("Applying %s", runID); v.human.Applying(runID) }
func (v *seenView) Progress() io.Writer   { return nil }
func (v *seenView) Actions() io.Writer    { return v.stderr }
func (v *seenView) Applied(runID string, res *executor.Result) {
	v.saw("Applied %s: %s", runID, view.ResultLine(res))
	v.human.Applied(runID, res)
}
func (v *seenView) JudgingEarlier() { v.saw("JudgingEarlier"); v.human.JudgingEarlier() }
func (v *seenView) Gate(g *gate.Report) {
	v.mu.Lock()
	v.gates = append(v.gates, g)
	v.mu.Unlock()
	switch {
	case g == nil || len(g.Units) == 0:
		v.saw("Gate none")
	case g.Interrupted:
		v.saw("Gate interrupted")
	case g.Passed():
		v.saw("Gate passed %d", len(g.Units))
	default:
		v.saw("Gate failed %d", len(g.Failures))
	}
	v.human.Gate(g)
}
func (v *seenView) NoRollback(why view.NoRollbackReason) {
	v.saw("NoRollback %d", why)
	v.human.NoRollback(why)
}
func (v *seenView) RolledBack(r view.Rollback) {
	if r.Err != nil {
		v.saw("RolledBack failed untouched=%v", r.Untouched)
	} else {
		v.saw("RolledBack %s to %s", r.Failed, r.Generation)
	}
	v.human.RolledBack(r)
}
func (v *seenView) Done(o *view.Outcome) {
	v.mu.Lock()
	v.outcome = o
	v.mu.Unlock()
	v.saw("Done %s", o.Verdict)
}
