package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/plan"
)

// execute runs the plan and prints the exit summary: applied, failed (with
// the unit's last log lines) and not reached.
func execute(ctx context.Context, o applyOptions, h *hostConn, p *plan.Plan, stdout, stderr io.Writer) int {
	if p.Empty() {
		return exitOK
	}
	eh, err := h.executor()
	if err != nil {
		fmt.Fprintln(stderr, "syslet:", err)
		return exitError
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano
	log := zerolog.New(zerolog.ConsoleWriter{Out: stderr, NoColor: !isTerminal(stderr), TimeFormat: "15:04:05.000"}).With().Timestamp().Logger()
	opts := executor.Options{Log: log, StartTimeout: o.timeout}
	if isTerminal(stderr) {
		opts.Progress = stderr
	}
	fmt.Fprintln(stdout, "\nApplying:")
	res, err := executor.Apply(ctx, p, eh, opts)
	printSummary(stdout, res)
	if err != nil {
		fmt.Fprintln(stderr, "syslet:", err)
		return exitError
	}
	return exitOK
}

func printSummary(w io.Writer, r *executor.Result) {
	fmt.Fprintf(w, "\nSummary: %d applied, %d failed, %d not reached (%s)\n", len(r.Applied), len(r.Failed), len(r.NotReached), r.Duration.Round(1e6))
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
		fmt.Fprintln(w, "  Fix the cause and re-run syslet to resume: what was applied is in place and will not be redone.")
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
