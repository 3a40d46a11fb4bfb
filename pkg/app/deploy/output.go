package deploy

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/plan"
)

// PrintFindings writes findings one per line and a count.
func PrintFindings(w io.Writer, rep report.Report) {
	for _, f := range rep.Findings {
		fmt.Fprintln(w, f.String())
	}
	if n := rep.Errors(); n > 0 {
		fmt.Fprintf(w, "%d error(s): the specs are invalid; nothing was changed\n", n)
	}
}

// printPlan writes the plan for people, with what it was made against and,
// when it resumes an unfinished run, which one.
func printPlan(w io.Writer, req *Request, l *load.Set, p *plan.Plan) {
	what := "host"
	if req.hostless() {
		what = req.Root + " (no host: systemd and podman are not read, secrets are not decrypted; installed units are assumed to run as declared)"
	}
	fmt.Fprintf(w, "syslet plan: %d spec(s) from %d source(s) against %s\n\n", len(l.Specs), len(l.Sources), what)
	if r := p.Resume; r != nil {
		fmt.Fprintf(w, "previous run %s did not finish; resuming %d action(s)\n\n", r.Run, r.Resumed)
	}
	p.Format(w)
}

// PrintSummary writes the exit summary: applied, failed (with the unit's
// last log lines) and not reached.
func PrintSummary(w io.Writer, runID string, r *executor.Result) {
	verb := ""
	if r.Interrupted {
		verb = " — interrupted"
	}
	fmt.Fprintf(w, "\nSummary%s: %d applied, %d failed, %d not reached (%s, run %s)\n", verb, len(r.Applied), len(r.Failed), len(r.NotReached), r.Duration.Round(1e6), runID)
	for _, f := range r.Failed {
		fmt.Fprintf(w, "  FAILED %d. %s %s: %s\n", f.Action.Step, f.Action.Op, plan.Escape(f.Action.Target), plan.Escape(f.Error))
		for _, l := range f.Log {
			fmt.Fprintf(w, "      | %s\n", l)
		}
	}
	if len(r.NotReached) > 0 {
		var names []string
		for _, a := range r.NotReached {
			names = append(names, fmt.Sprintf("%s %s", a.Op, plan.Escape(a.Target)))
		}
		fmt.Fprintf(w, "  not reached: %s\n", strings.Join(names, ", "))
		fmt.Fprintln(w, "  Re-run syslet to resume: what was applied stays in place, the rest is planned again (see `syslet history`).")
	}
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
