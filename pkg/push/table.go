package push

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// summary picks syslet's own summary lines out of its output: the plan's
// last line ("No changes detected. …" or "Plan: …"; a host running an
// older syslet says "No changes. …") and, after an apply, the
// executor's "Summary: …" line.
type summary struct {
	mu            sync.Mutex // stdout and stderr are copied side by side
	plan, applied string
	// stale: the host refused its saved plan as stale (view.StalePrefix).
	stale bool
	// runs are the IDs of "Applying (run …):", in order; verdict is the
	// text of the last "ROLLED BACK: …" or "ROLLBACK FAILED: …" line.
	runs    []string
	verdict string
}

// observeErr reads a stderr line: only the refusal of a stale plan is
// looked for there.
func (s *summary) observeErr(line string) {
	if strings.HasPrefix(line, StalePrefix) {
		s.mu.Lock()
		s.stale = true
		s.mu.Unlock()
	}
}

func (s *summary) isStale() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stale
}

func (s *summary) observe(line string) {
	s.observeErr(line)
	s.mu.Lock()
	defer s.mu.Unlock()
	// The first plan and apply summary are the change's: after a failed
	// gate the rollback prints its own, which the verdict describes.
	switch {
	case s.plan != "" && (strings.HasPrefix(line, "No changes") || strings.HasPrefix(line, "Plan: ")):
	case strings.HasPrefix(line, "No changes detected.") || strings.HasPrefix(line, "No changes."):
		s.plan = "no changes"
	case strings.HasPrefix(line, "Plan: "):
		s.plan = compactPlan(strings.TrimPrefix(line, "Plan: "))
	case strings.HasPrefix(line, "Applying (run ") && strings.HasSuffix(line, "):"):
		s.runs = append(s.runs, strings.TrimSuffix(strings.TrimPrefix(line, "Applying (run "), "):"))
	case strings.HasPrefix(line, RolledBackPrefix):
		s.verdict = strings.TrimSuffix(strings.TrimPrefix(line, RolledBackPrefix), ".")
	case strings.HasPrefix(line, RollbackFailedPrefix):
		s.verdict = strings.TrimSuffix(strings.TrimPrefix(line, RollbackFailedPrefix), ".")
	case s.applied != "":
	case strings.HasPrefix(line, "Summary: "):
		s.applied = strings.TrimPrefix(line, "Summary: ")
		if i := strings.Index(s.applied, " ("); i >= 0 { // drop the remote duration
			s.applied = s.applied[:i]
		}
	}
}

// RolledBackPrefix and RollbackFailedPrefix begin the last word of a
// run whose health gate failed (pkg/app/view's RollbackSummary; a test in
// cmd/syslet keeps them equal).
const (
	RolledBackPrefix     = "ROLLED BACK: "
	RollbackFailedPrefix = "ROLLBACK FAILED: "
)

func (s *summary) runIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.runs)
}

func (s *summary) verdictLine() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.verdict
}

// success tells apart what a command that exited 0 did, by its summary.
func (s *summary) success() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.plan == "no changes":
		return Unchanged
	case s.applied != "":
		return Applied
	case s.plan != "":
		return Planned
	}
	return Succeeded
}

func (s *summary) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.plan == "":
		return ""
	case s.applied == "":
		return s.plan
	}
	return s.plan + "; " + s.applied
}

// compactPlan drops the zero counts and the digest of a plan line:
// "1 to create, 0 to change, …, 3 unchanged; 7 actions (digest 5e7b…)." →
// "1 to create, 3 unchanged; 7 actions".
func compactPlan(s string) string {
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	counts, tail, _ := strings.Cut(s, "; ")
	if i := strings.Index(tail, " ("); i >= 0 {
		tail = tail[:i]
	}
	var keep []string
	for _, c := range strings.Split(counts, ", ") {
		if !strings.HasPrefix(c, "0 ") {
			keep = append(keep, c)
		}
	}
	out := strings.Join(keep, ", ")
	if tail != "" {
		if out != "" {
			out += "; "
		}
		out += tail
	}
	return out
}

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
		plan := r.Summary
		if plan == "" {
			plan = "-"
		}
		took := "-"
		if r.Status != NotReached {
			took = r.Duration.Round(100 * time.Millisecond).String()
		}
		if batched {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", r.Target.Arg, r.Batch, r.Status, plan, took)
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Target.Arg, r.Status, plan, took)
		}
	}
	tw.Flush()
	var unreached []string
	for _, r := range rep.Results {
		switch {
		case r.Status.OK():
		case r.Status == NotReached:
			unreached = append(unreached, r.Target.Arg)
		case r.Verdict != "":
			fmt.Fprintf(w, "%s: %s: %s\n", r.Target.Arg, r.Status, r.Verdict)
		default:
			fmt.Fprintf(w, "%s: %s: %v\n", r.Target.Arg, r.Status, r.Err)
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

// countLine counts the results by status, in the order of the statuses.
func countLine(results []Result) string {
	var parts []string
	for s := range Status(len(statusNames)) {
		n := Count(results, s)
		switch {
		case n > 0 && s == Stale:
			parts = append(parts, fmt.Sprintf("%d stale (refused their saved plan; nothing changed there)", n))
		case n > 0:
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	return strings.Join(parts, ", ")
}

// Count is how many results have status s.
func Count(results []Result, s Status) int {
	n := 0
	for _, r := range results {
		if r.Status == s {
			n++
		}
	}
	return n
}

// AnyFailed reports whether any host did not succeed.
func AnyFailed(results []Result) bool {
	for _, r := range results {
		if !r.Status.OK() {
			return true
		}
	}
	return false
}
