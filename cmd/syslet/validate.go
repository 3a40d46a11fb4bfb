package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/syslet/syslet/pkg/app/deploy"
	"github.com/syslet/syslet/pkg/load"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// validateResult is the JSON form of `syslet validate --output json`.
type validateResult struct {
	Valid    bool             `json:"valid"`
	Sources  int              `json:"sources"`
	Specs    int              `json:"specs"`
	Errors   int              `json:"errors"`
	Podman   string           `json:"podman"` // the release the units were checked against
	Findings []report.Finding `json:"findings"`
}

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
		res := validateResult{Valid: !l.Report.HasErrors(), Sources: len(l.Sources), Specs: len(l.Specs), Errors: l.Report.Errors(), Podman: release.String(), Findings: l.Report.Findings}
		if res.Findings == nil {
			res.Findings = []report.Finding{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(res)
	} else {
		deploy.PrintFindings(stdout, l.Report)
		if !l.Report.HasErrors() {
			fmt.Fprintf(stdout, "%d spec(s) from %d source(s) are valid\n", len(l.Specs), len(l.Sources))
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
