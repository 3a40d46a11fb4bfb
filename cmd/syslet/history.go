package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/syslet/syslet/pkg/runlog"
)

// cmdHistory lists recent runs from the run journal, or one run's actions.
// It only reads, and never waits for the apply lock.
func cmdHistory(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("history", stderr)
	output := fs.String("output", "text", "text or json")
	root := fs.String("root", "/", "")
	limit := fs.Int("n", 20, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil || len(pos) > 1 || (*output != "text" && *output != "json") {
		fmt.Fprintln(stderr, "syslet history: usage: syslet history [--output text|json] [-n N] [RUN]")
		return exitUsage
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		fmt.Fprintln(stderr, "syslet history:", err)
		return exitUsage
	}
	runs, err := runlog.Open(abs).Runs()
	if err != nil {
		fmt.Fprintln(stderr, "syslet history:", err)
		return exitError
	}
	if len(pos) == 1 {
		for _, r := range runs {
			if r.ID() == pos[0] || strings.HasPrefix(r.ID(), pos[0]) && len(pos[0]) >= 8 {
				return showRun(stdout, r, *output == "json")
			}
		}
		fmt.Fprintf(stderr, "syslet history: no run %q in the journal\n", pos[0])
		return exitError
	}
	if len(runs) > *limit && *limit > 0 {
		runs = runs[len(runs)-*limit:]
	}
	if *output == "json" {
		list := make([]runSummary, 0, len(runs))
		for _, r := range runs {
			list = append(list, summarize(r))
		}
		return writeJSON(stdout, list)
	}
	if len(runs) == 0 {
		fmt.Fprintln(stdout, "No runs recorded yet.")
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tDURATION\tRESULT\tACTIONS\tAPPLIED\tFAILED\tNOT REACHED\tSOURCE")
	for _, r := range runs {
		s := summarize(r)
		dur := "-"
		if s.Duration != nil {
			dur = s.Duration.Round(time.Millisecond).String()
		}
		src := s.Source
		if s.Resumes != "" {
			src += " (resumes " + s.Resumes + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", s.Run, s.Started.Local().Format("2006-01-02 15:04:05"), dur,
			s.Result, s.Actions, s.Applied, s.Failed, s.NotReached, src)
	}
	tw.Flush()
	return exitOK
}

// runSummary is one line of `syslet history`.
type runSummary struct {
	Run        string         `json:"run"`
	Started    time.Time      `json:"started"`
	Duration   *time.Duration `json:"duration,omitempty"`
	Source     string         `json:"source"`
	Result     string         `json:"result"`
	Resumes    string         `json:"resumes,omitempty"`
	PlanDigest string         `json:"planDigest"`
	Actions    int            `json:"actions"`
	Applied    int            `json:"applied"`
	Failed     int            `json:"failed"`
	NotReached int            `json:"notReached"`
}

func summarize(r *runlog.RunInfo) runSummary {
	s := runSummary{Run: r.ID(), Started: r.Intent.Time, Source: r.Intent.Source, Result: r.Result(),
		Resumes: r.Intent.Resumes, PlanDigest: r.Intent.PlanDigest, Actions: len(r.Intent.Actions)}
	for _, a := range r.Actions {
		switch a.Result {
		case runlog.ResultOK:
			s.Applied++
		case runlog.ResultFailed:
			s.Failed++
		}
	}
	if r.End != nil {
		d := r.End.Time.Sub(r.Intent.Time)
		s.Duration = &d
		s.NotReached = r.End.NotReached
	} else {
		s.NotReached = len(r.Intent.Actions) - s.Applied - s.Failed
	}
	return s
}

// runActions is `syslet history RUN`: the run and each planned action
// with what became of it.
type runActions struct {
	runSummary
	Steps []actionLine `json:"actions"`
}

type actionLine struct {
	Index   int    `json:"i"`
	Step    int    `json:"step"`
	Op      string `json:"op"`
	Target  string `json:"target"`
	Result  string `json:"result"` // ok, failed, not reached
	Error   string `json:"error,omitempty"`
	Millis  int64  `json:"ms,omitempty"`
	Carried bool   `json:"carried,omitempty"`
}

func showRun(w io.Writer, r *runlog.RunInfo, asJSON bool) int {
	ra := runActions{runSummary: summarize(r)}
	for _, a := range r.Intent.Actions {
		l := actionLine{Index: a.Index, Step: a.Step, Op: a.Op, Target: a.Target, Result: "not reached", Carried: a.Carried}
		for _, rec := range r.Actions {
			if rec.Index != nil && *rec.Index == a.Index {
				l.Result, l.Error, l.Millis = rec.Result, rec.Error, rec.Millis
			}
		}
		ra.Steps = append(ra.Steps, l)
	}
	if asJSON {
		return writeJSON(w, ra)
	}
	s := ra.runSummary
	fmt.Fprintf(w, "run %s: %s, started %s, source %s, plan %s\n", s.Run, s.Result, s.Started.Local().Format("2006-01-02 15:04:05"), s.Source, short(s.PlanDigest))
	if s.Resumes != "" {
		fmt.Fprintf(w, "resumes run %s\n", s.Resumes)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  STEP\tOP\tTARGET\tRESULT\tTOOK")
	for _, l := range ra.Steps {
		res := l.Result
		if l.Error != "" {
			res += ": " + l.Error
		}
		if l.Carried {
			res += " (resumed)"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%dms\n", l.Step, l.Op, l.Target, res, l.Millis)
	}
	tw.Flush()
	return exitOK
}

func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

func writeJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return exitError
	}
	return exitOK
}
