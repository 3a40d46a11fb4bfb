package view

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/pkg/redact"
	"github.com/syslet/syslet/pkg/runlog"
)

// RunSummary is one line of `syslet history` (and its JSON form).
type RunSummary struct {
	Run      string         `json:"run"`
	Started  time.Time      `json:"started"`
	Duration *time.Duration `json:"duration,omitempty"`
	Source   string         `json:"source"`
	// Signer signed the commit the run's input came from, when checked.
	Signer  *commitsig.Signer `json:"signer,omitempty"`
	Result  string            `json:"result"`
	Resumes string            `json:"resumes,omitempty"`
	// Rollback is the run whose generation a rollback run restored,
	// RollbackOf the failed run it rolled back.
	Rollback   string `json:"rollback,omitempty"`
	RollbackOf string `json:"rollbackOf,omitempty"`
	// Error says why a run failed (a unit that did not pass the gate).
	Error string `json:"error,omitempty"`
	// Generation marks a run whose generation is kept: what syslet
	// rollback can return to.
	Generation bool   `json:"generation,omitempty"`
	PlanDigest string `json:"planDigest"`
	Actions    int    `json:"actions"`
	Applied    int    `json:"applied"`
	Failed     int    `json:"failed"`
	NotReached int    `json:"notReached"`
	// GateFailed counts the units that failed the health gate.
	GateFailed int `json:"gateFailed,omitempty"`
	// Updates are the images an update run pulled again, with the
	// digests before and after.
	Updates []runlog.ImageUpdate `json:"updates,omitempty"`
}

// Summarize is what the journal says of one run, counted.
func Summarize(r *runlog.RunInfo) RunSummary {
	s := RunSummary{Run: r.ID(), Started: r.Intent.Time, Source: r.Intent.Source, Signer: r.Intent.Signer, Result: r.Result(),
		Resumes: r.Intent.Resumes, PlanDigest: r.Intent.PlanDigest, Actions: len(r.Intent.Actions),
		Rollback: r.Intent.Rollback, RollbackOf: r.Intent.RollbackOf, Updates: r.Intent.Updates}
	for _, a := range r.Actions {
		switch a.Result {
		case runlog.ResultOK:
			s.Applied++
		case runlog.ResultFailed:
			s.Failed++
		}
	}
	if r.End != nil {
		s.Error = r.End.Error
		d := r.End.Time.Sub(r.Intent.Time)
		s.Duration = &d
		s.NotReached, s.GateFailed = r.End.NotReached, r.End.GateFailed
	} else {
		s.NotReached = len(r.Intent.Actions) - s.Applied - s.Failed
	}
	return s
}

// Summaries is the JSON form of `syslet history`; kept are the runs whose
// generations are kept.
func Summaries(runs []*runlog.RunInfo, kept map[string]bool) []RunSummary {
	list := make([]RunSummary, 0, len(runs))
	for _, r := range runs {
		s := Summarize(r)
		s.Generation = kept[s.Run]
		list = append(list, s)
	}
	return list
}

// History writes the table of recent runs; kept are the runs whose
// generations are kept (marked "*": what syslet rollback can return to).
func History(w io.Writer, runs []*runlog.RunInfo, kept map[string]bool) {
	if len(runs) == 0 {
		fmt.Fprintln(w, "No runs recorded yet.")
		return
	}
	// The notes on the runs come first, and the table last: the newest
	// runs are its last rows, what `syslet history | tail` shows, and
	// notes after it crowded them out.
	notes := 0
	for _, r := range runs {
		s := Summarize(r)
		for _, u := range s.Updates {
			fmt.Fprintf(w, "%s: %s\n", redact.Escape(s.Run), imageChange(u))
			notes++
		}
		if s.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", redact.Escape(s.Run), redact.Escape(s.Error))
			notes++
		}
	}
	if notes > 0 {
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tGEN\tSTARTED\tDURATION\tRESULT\tACTIONS\tAPPLIED\tFAILED\tNOT REACHED\tSOURCE")
	for _, r := range runs {
		s := Summarize(r)
		gen := ""
		if kept[s.Run] {
			gen = "*"
		}
		dur := "-"
		if s.Duration != nil {
			dur = s.Duration.Round(time.Millisecond).String()
		}
		src := redact.Escape(s.Source)
		switch {
		case s.Signer != nil && s.Rollback != "":
			// A rollback's signer is the restored generation's: written
			// after "… after RUN" it read as the failed run's.
			src += " (run " + redact.Escape(s.Rollback) + "'s specs, signed by " + redact.Escape(s.Signer.Principal) + ")"
		case s.Signer != nil:
			src += " (signed by " + redact.Escape(s.Signer.Principal) + ")"
		}
		if s.Resumes != "" {
			src += " (resumes " + redact.Escape(s.Resumes) + ")"
		}
		if s.RollbackOf != "" && !strings.Contains(s.Source, s.RollbackOf) {
			src += " (rolls back " + redact.Escape(s.RollbackOf) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%d\t%s\n", redact.Escape(s.Run), gen, s.Started.Local().Format("2006-01-02 15:04:05"), dur,
			redact.Escape(s.Result), s.Actions, s.Applied, failedCell(s), s.NotReached, src)
	}
	tw.Flush()
}

// imageChange is one image an update pulled again, in one line: the
// image, its digests before and after, and what it restarted.
func imageChange(u runlog.ImageUpdate) string {
	from := "(no registry digest)"
	if len(u.From) > 0 {
		from = strings.Join(u.From, ", ")
	}
	line := fmt.Sprintf("image %s %s → %s", u.Image, from, u.To)
	if len(u.Restarts) > 0 {
		line += " (restarts " + strings.Join(u.Restarts, ", ") + ")"
	}
	return redact.Escape(line)
}

// failedCell is the FAILED column: failed actions, and the units that
// failed the health gate, which a run whose every action landed counts
// too ("1 gate": one unit did not pass it).
func failedCell(s RunSummary) string {
	switch {
	case s.GateFailed == 0:
		return fmt.Sprint(s.Failed)
	case s.Failed == 0:
		return fmt.Sprintf("%d gate", s.GateFailed)
	}
	return fmt.Sprintf("%d+%d gate", s.Failed, s.GateFailed)
}

// RunActions is `syslet history RUN`: the run and each planned action
// with what became of it.
type RunActions struct {
	RunSummary
	Steps []ActionLine `json:"actions"`
}

// ActionLine is one planned action of a run and what became of it.
type ActionLine struct {
	Index   int    `json:"i"`
	Step    int    `json:"step"`
	Op      string `json:"op"`
	Target  string `json:"target"`
	Result  string `json:"result"` // ok, failed, not reached
	Error   string `json:"error,omitempty"`
	Millis  int64  `json:"ms,omitempty"`
	Carried bool   `json:"carried,omitempty"`
}

// Actions joins a run's intent with the journal lines of its actions.
func Actions(r *runlog.RunInfo) RunActions {
	ra := RunActions{RunSummary: Summarize(r)}
	for _, a := range r.Intent.Actions {
		l := ActionLine{Index: a.Index, Step: a.Step, Op: a.Op, Target: a.Target, Result: "not reached", Carried: a.Carried}
		for _, rec := range r.Actions {
			if rec.Index != nil && *rec.Index == a.Index {
				l.Result, l.Error, l.Millis = rec.Result, rec.Error, rec.Millis
			}
		}
		ra.Steps = append(ra.Steps, l)
	}
	return ra
}

// Run writes one run: its summary line and every planned action.
func Run(w io.Writer, ra RunActions) {
	s := ra.RunSummary
	fmt.Fprintf(w, "run %s: %s, started %s, source %s, plan %s\n", redact.Escape(s.Run), redact.Escape(s.Result), s.Started.Local().Format("2006-01-02 15:04:05"),
		redact.Escape(s.Source), redact.Escape(short(s.PlanDigest)))
	switch {
	case s.Signer != nil && s.Rollback != "":
		fmt.Fprintf(w, "run %s's specs, which it restores, signed by %s\n", redact.Escape(s.Rollback), redact.Escape(s.Signer.String()))
	case s.Signer != nil:
		fmt.Fprintf(w, "signed by %s\n", redact.Escape(s.Signer.String()))
	}
	if s.Resumes != "" {
		fmt.Fprintf(w, "resumes run %s\n", redact.Escape(s.Resumes))
	}
	if s.Rollback != "" {
		fmt.Fprintf(w, "rolls back to the generation of run %s", redact.Escape(s.Rollback))
		if s.RollbackOf != "" {
			fmt.Fprintf(w, " after run %s failed its health gate", redact.Escape(s.RollbackOf))
		}
		fmt.Fprintln(w)
	}
	for _, u := range s.Updates {
		fmt.Fprintln(w, imageChange(u))
	}
	if s.Error != "" {
		fmt.Fprintf(w, "failed: %s\n", redact.Escape(s.Error))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  STEP\tOP\tTARGET\tRESULT\tTOOK")
	for _, l := range ra.Steps {
		res := redact.Escape(l.Result)
		if l.Error != "" {
			res += ": " + redact.Escape(l.Error)
		}
		if l.Carried {
			res += " (resumed)"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%dms\n", l.Step, redact.Escape(l.Op), redact.Escape(l.Target), res, l.Millis)
	}
	tw.Flush()
}

func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}
