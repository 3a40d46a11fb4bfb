package push

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/syslet/syslet/pkg/verdict"
)

// WriteTable prints a rollout's results: one row per host (host, its
// batch when there were several, result, plan summary, duration), then
// why each failed host failed, the hosts not reached, why the rollout
// stopped, and a count of each result.
func WriteTable(w io.Writer, rep Report) {
	batched := rep.Batches > 1
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if batched {
		fmt.Fprintln(tw, "HOST\tBATCH\tRESULT\tPLAN\tDURATION")
	} else {
		fmt.Fprintln(tw, "HOST\tRESULT\tPLAN\tDURATION")
	}
	for _, r := range rep.Results {
		plan := r.Plan()
		if plan == "" {
			plan = "-"
		}
		took := "-"
		if r.Ending.Own != NotReached {
			took = r.Duration.Round(100 * time.Millisecond).String()
		}
		if batched {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", r.Target.Arg, r.Batch, r.Ending, plan, took)
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Target.Arg, r.Ending, plan, took)
		}
	}
	tw.Flush()
	var unreached []string
	for _, r := range rep.Results {
		switch {
		case r.OK():
		case r.Ending.Own == NotReached:
			unreached = append(unreached, r.Target.Arg)
		default:
			fmt.Fprintf(w, "%s: %s: %s\n", r.Target.Arg, r.Ending, r.Reason())
		}
	}
	if len(unreached) > 0 {
		fmt.Fprintf(w, "not reached (never connected to, left as they were): %s\n", strings.Join(unreached, ", "))
	}
	if rep.Stop != nil {
		fmt.Fprintf(w, "Rollout stopped: %s.\n", rep.Stop)
	}
	fmt.Fprintf(w, "%d host(s): %s\n", len(rep.Results), countLine(rep.Results))
}

// AnyFailed reports whether any host did not do what it was asked to.
func AnyFailed(results []Result) bool {
	for _, r := range results {
		if !r.OK() {
			return true
		}
	}
	return false
}

// Exit is the code `syslet push` exits with, from the hosts' endings: a
// host whose rollback failed first (it needs a person: its verdict's
// code, 5), then an interrupt (130), then failures that were all
// rollbacks (each such host serves its last good generation: the
// verdict's code, 4, as a local apply's), then any other failure (1).
// Hosts not reached count for nothing of their own: they are not reached
// because of an interrupt or of the failures before them.
func (rep Report) Exit(interrupted bool) int {
	failed, rolledBack := 0, 0
	for i := range rep.Results {
		r := &rep.Results[i]
		switch {
		case r.Ending.Is(verdict.RollbackFailed):
			return verdict.RollbackFailed.Exit()
		case r.OK() || r.Ending.Own == NotReached:
		case r.Ending.Is(verdict.RolledBack):
			failed, rolledBack = failed+1, rolledBack+1
		default:
			failed++
		}
	}
	switch {
	case interrupted:
		return verdict.ExitInterrupted
	case failed > 0 && failed == rolledBack:
		return verdict.RolledBack.Exit()
	case failed > 0 || AnyFailed(rep.Results):
		return verdict.ExitError
	}
	return verdict.ExitOK
}
