package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/generation"
	"github.com/syslet/syslet/pkg/runlog"
)

// cmdHistory lists recent runs from the run journal, or one run's actions.
// It only reads, and never waits for the apply lock.
type historyOptions struct {
	output, root string
	limit        int
}

func (o *historyOptions) define(f *flags) {
	f.String(&o.output, "output", "text", "print as `FORMAT`: text or json")
	f.String(&o.root, "root", "/", "read the journal under `DIR` as if it were /")
	f.Int(&o.limit, "n", 20, "show the last `N` runs (0: all)")
}

func cmdHistory(args []string, stdout, stderr io.Writer) int {
	var o historyOptions
	f := commandFlags("history")
	o.define(f)
	output, root, limit := &o.output, &o.root, &o.limit
	pos, err := parseInterspersed(f.FlagSet, args)
	if err == nil && len(pos) > 1 {
		err = fmt.Errorf("%w: one RUN at most, got %s", errUsage, strings.Join(pos, " "))
	}
	if err == nil && *output != "text" && *output != "json" {
		err = fmt.Errorf("%w: --output must be text or json, got %q", errUsage, *output)
	}
	if err != nil {
		return usage(stdout, stderr, "history", err)
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
	kept := map[string]bool{}
	if gens, err := generation.Open(abs).List(); err == nil {
		for _, g := range gens {
			kept[g.Run] = true
		}
	}
	if *output == "json" {
		return writeJSON(stdout, view.Summaries(runs, kept))
	}
	view.History(stdout, runs, kept)
	return exitOK
}

func writeJSON(w io.Writer, v any) int {
	if err := view.JSON(w, v); err != nil {
		return exitError
	}
	return exitOK
}
