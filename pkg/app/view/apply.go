package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/redact"
	"github.com/syslet/syslet/plan"
)

// Against says what a plan was made against, for its header.
type Against struct {
	Specs, Sources int
	// Root is the managed root; NoHost says it is a tree without a
	// running system (--root).
	Root   string
	NoHost bool
}

// PlanWithHeader writes the plan for people, with what it was made
// against and, when it resumes an unfinished run, which one.
func PlanWithHeader(w io.Writer, a Against, p *plan.Plan) {
	what := "host"
	if a.NoHost {
		what = a.Root + " (no host: systemd and podman are not read, secrets are not decrypted; installed units are assumed to run as declared)"
	}
	fmt.Fprintf(w, "syslet plan: %d spec(s) from %d source(s) against %s\n\n", a.Specs, a.Sources, what)
	if r := p.Resume; r != nil {
		fmt.Fprintf(w, "previous run %s did not finish; resuming %d action(s)\n\n", r.Run, r.Resumed)
	}
	Plan(w, p)
}

// Applying is the line an apply starts its actions with.
func Applying(w io.Writer, runID string) {
	fmt.Fprintf(w, "\nApplying (run %s):\n", runID)
}

// ApplySummary writes the exit summary: applied, failed (with the unit's
// last log lines) and not reached.
func ApplySummary(w io.Writer, runID string, r *executor.Result) {
	verb := ""
	if r.Interrupted {
		verb = " — interrupted"
	}
	fmt.Fprintf(w, "\nSummary%s: %d applied, %d failed, %d not reached (%s, run %s)\n", verb, len(r.Applied), len(r.Failed), len(r.NotReached), r.Duration.Round(1e6), runID)
	for _, f := range r.Failed {
		fmt.Fprintf(w, "  FAILED %d. %s %s: %s\n", f.Action.Step, f.Action.Op, redact.Escape(f.Action.Target), redact.Escape(f.Error))
		for _, l := range f.Log {
			fmt.Fprintf(w, "      | %s\n", l)
		}
	}
	if len(r.NotReached) > 0 {
		var names []string
		for _, a := range r.NotReached {
			names = append(names, fmt.Sprintf("%s %s", a.Op, redact.Escape(a.Target)))
		}
		fmt.Fprintf(w, "  not reached: %s\n", strings.Join(names, ", "))
		fmt.Fprintln(w, "  Re-run syslet to resume: what was applied stays in place, the rest is planned again (see `syslet history`).")
	}
}

// ResultLine is an apply's result in one line, for the JSON document,
// webhookd's status and syslet push's table.
func ResultLine(r *executor.Result) string {
	s := fmt.Sprintf("%d applied, %d failed, %d not reached", len(r.Applied), len(r.Failed), len(r.NotReached))
	if r.Interrupted {
		s = "interrupted: " + s
	}
	return s
}
