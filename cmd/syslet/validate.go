package main

import (
	"fmt"
	"io"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/load"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// cmdValidate checks specs with no host access at all: no systemd, no
// podman, nothing read outside the given sources, nothing written. The
// rendered units go through podman's quadlet converter in-process, for the
// podman release --podman names (default: the oldest syslet supports).
func cmdValidate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate", stderr)
	output := fs.String("output", "text", "text or json")
	podman := fs.String("podman", unit.OldestPodman.String(), "podman release to check against")
	strict := fs.Bool("strict", false, "treat warnings as errors")
	maxInput := fs.Int64("max-input", spec.DefaultMaxInput, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	path, err := oneSource(pos, false)
	if err != nil {
		fmt.Fprintln(stderr, "syslet validate:", err)
		return exitUsage
	}
	if *output != "text" && *output != "json" {
		fmt.Fprintf(stderr, "syslet validate: --output must be text or json, got %q\n", *output)
		return exitUsage
	}
	release, err := podmanFlag(*podman)
	if err != nil {
		fmt.Fprintln(stderr, "syslet validate:", err)
		return exitUsage
	}
	l, err := load.Path(path, load.Options{Stdin: stdin, MaxInput: *maxInput})
	if err != nil {
		fmt.Fprintln(stderr, "syslet validate:", err)
		return exitError
	}
	l.CheckPodman(release)
	if *strict {
		l.Report.Strict()
	}
	if *output == "json" {
		res := view.Validation{Valid: !l.Report.HasErrors(), Sources: len(l.Sources), Specs: len(l.Specs), Errors: l.Report.Errors(), Podman: release.String(), Findings: l.Report.Findings}
		if res.Findings == nil {
			res.Findings = []report.Finding{}
		}
		view.JSON(stdout, res)
	} else {
		view.Findings(stdout, l.Report)
		if !l.Report.HasErrors() {
			view.Valid(stdout, len(l.Specs), len(l.Sources))
		}
	}
	if l.Report.HasErrors() {
		return exitInvalid
	}
	return exitOK
}

// podmanFlag parses --podman: the podman release specs are checked against.
func podmanFlag(s string) (unit.Podman, error) {
	p, err := unit.ParsePodman(s)
	if err != nil {
		return p, fmt.Errorf("%w: --podman: %v", errUsage, err)
	}
	if p.Less(unit.OldestPodman) {
		return p, fmt.Errorf("%w: --podman %s: syslet supports podman %s and later", errUsage, s, unit.OldestPodman)
	}
	return p, nil
}
