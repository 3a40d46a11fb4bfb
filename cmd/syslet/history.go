package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/syslet/syslet/pkg/app/view"
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
				ra := view.Actions(r)
				if *output == "json" {
					return writeJSON(stdout, ra)
				}
				view.Run(stdout, ra)
				return exitOK
			}
		}
		fmt.Fprintf(stderr, "syslet history: no run %q in the journal\n", pos[0])
		return exitError
	}
	if len(runs) > *limit && *limit > 0 {
		runs = runs[len(runs)-*limit:]
	}
	if *output == "json" {
		return writeJSON(stdout, view.Summaries(runs))
	}
	view.History(stdout, runs)
	return exitOK
}

func writeJSON(w io.Writer, v any) int {
	if err := view.JSON(w, v); err != nil {
		return exitError
	}
	return exitOK
}
