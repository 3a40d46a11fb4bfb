package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/generation"
	"github.com/syslet/syslet/pkg/redact"
	"github.com/syslet/syslet/pkg/runlog"
)

// cmdHistory lists recent runs from the run journal, or one run's actions.
// It only reads, and never waits for the apply lock.
type historyOptions struct {
	output, root string
	limit        int
	specs        bool
}

func (o *historyOptions) define(f *flags) {
	f.String(&o.output, "output", "text", "print as `FORMAT`: text or json")
	f.Bool(&o.specs, "specs", false, "print the specs RUN applied, as its kept generation holds them (without RUN: the newest generation's, the last run that ended ok)")
	f.String(&o.root, "root", "/", "read the journal under `DIR` as if it were /")
	f.Int(&o.limit, "n", 20, "show the last `N` runs (0: all)")
}

func cmdHistory(args []string, _ io.Reader, stdout, stderr io.Writer) int {
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
	if err == nil && o.specs && *output != "text" {
		err = fmt.Errorf("%w: --specs prints the spec stream itself, --output does not apply", errUsage)
	}
	if err != nil {
		return usage(stdout, stderr, "history", err)
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		view.Error(stderr, "syslet history", err)
		return exitUsage
	}
	if needsRoot(lookup("history"), abs, args, stderr) {
		return exitError
	}
	if o.specs {
		return printSpecs(generation.Open(abs), pos, stdout, stderr)
	}
	runs, err := runlog.Open(abs).Runs()
	if err != nil {
		view.Error(stderr, "syslet history", err)
		return exitError
	}
	if len(pos) == 1 {
		r, err := findRun(runs, pos[0])
		if err != nil {
			view.Error(stderr, "syslet history", err)
			return exitError
		}
		ra := view.Actions(r)
		if *output == "json" {
			return writeJSON(stdout, ra)
		}
		view.Run(stdout, ra)
		return exitOK
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

// findRun is the run id names: the run of that ID, or the one run whose
// ID starts with it (8 characters at least). A prefix of several runs
// names none: showing the first of them, without a word, showed the
// wrong run as often as the right one.
func findRun(runs []*runlog.RunInfo, id string) (*runlog.RunInfo, error) {
	var found []*runlog.RunInfo
	for _, r := range runs {
		if r.ID() == id {
			return r, nil
		}
		if strings.HasPrefix(r.ID(), id) && len(id) >= 8 {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no run %q in the journal", id)
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, r := range found {
		ids[i] = r.ID()
	}
	return nil, fmt.Errorf("%q is the start of %d runs (%s): give more of the run's ID", id, len(found), strings.Join(ids, ", "))
}

// printSpecs writes the spec stream a kept generation holds, byte for
// byte as the run applied it: what syslet validate, --diff --stdin or a
// diff against the config repository can be given.
func printSpecs(store *generation.Store, pos []string, stdout, stderr io.Writer) int {
	var g *generation.Generation
	var err error
	if len(pos) == 1 {
		if g, err = store.Find(pos[0]); err != nil {
			err = fmt.Errorf("%w: a generation is kept of each run that ended ok, the last --keep-generations of them (marked * in syslet history)", err)
		}
	} else if g, err = store.Latest(); err == nil && g == nil {
		err = errors.New("no generation is kept yet: one is made by each run that ends ok")
	}
	if err == nil {
		err = printable(g, stdout)
	}
	if err != nil {
		view.Error(stderr, "syslet history", err)
		return exitError
	}
	if _, err := stdout.Write(g.Input); err != nil {
		view.Error(stderr, "syslet history", err)
		return exitError
	}
	return exitOK
}

// printable refuses, when stdout is a terminal, a stream holding what no
// terminal should be handed: what a diff escapes in a line of content
// (redact.Line: invalid UTF-8, C0 but the tab, DEL, C1, line and
// paragraph separators), a CRLF line ending aside. Spec content may hold
// some of them inside a JSON string, and a generation file may have been
// written by anyone since; redirected, the stream is written as it is.
func printable(g *generation.Generation, stdout io.Writer) error {
	if !view.IsTerminal(stdout) {
		return nil
	}
	for _, l := range strings.Split(string(g.Input), "\n") {
		if l = strings.TrimSuffix(l, "\r"); redact.Line(l) != l {
			return fmt.Errorf("generation of run %s: its input holds control characters or invalid UTF-8, not printed to a terminal; redirect it to a file", g.Run)
		}
	}
	return nil
}

func writeJSON(w io.Writer, v any) int {
	if err := view.WriteJSON(w, v); err != nil {
		return exitError
	}
	return exitOK
}
