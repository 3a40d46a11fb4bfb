package push

import (
	"fmt"
	"io"
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
	switch {
	case strings.HasPrefix(line, "No changes detected.") || strings.HasPrefix(line, "No changes."):
		s.plan = "no changes"
	case strings.HasPrefix(line, "Plan: "):
		s.plan = compactPlan(strings.TrimPrefix(line, "Plan: "))
	case strings.HasPrefix(line, "Summary: "):
		s.applied = strings.TrimPrefix(line, "Summary: ")
		if i := strings.Index(s.applied, " ("); i >= 0 { // drop the remote duration
			s.applied = s.applied[:i]
		}
	}
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

// WriteTable prints the results: one row per host (host, result, plan
// summary, duration), then why each failed host failed, then a count.
func WriteTable(w io.Writer, results []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tRESULT\tPLAN\tDURATION")
	for _, r := range results {
		plan := r.Summary
		if plan == "" {
			plan = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Target.Arg, r.Status, plan, r.Duration.Round(100*time.Millisecond))
	}
	tw.Flush()
	ok, failed, notStarted, stale := 0, 0, 0, 0
	for _, r := range results {
		switch r.Status {
		case OK:
			ok++
			continue
		case NotStarted:
			notStarted++
		case Stale:
			stale++
		default:
			failed++
		}
		fmt.Fprintf(w, "%s: %s: %v\n", r.Target.Arg, r.Status, r.Err)
	}
	fmt.Fprintf(w, "%d of %d host(s) ok, %d failed", ok, len(results), failed)
	if stale > 0 {
		fmt.Fprintf(w, ", %d stale (refused their saved plan; nothing changed there)", stale)
	}
	if notStarted > 0 {
		fmt.Fprintf(w, ", %d not started", notStarted)
	}
	fmt.Fprintln(w)
}

// AnyFailed reports whether any host did not succeed.
func AnyFailed(results []Result) bool {
	for _, r := range results {
		if r.Status != OK {
			return true
		}
	}
	return false
}
