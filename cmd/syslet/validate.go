package main

import (
	"encoding/json"
	"fmt"
	"github.com/syslet/syslet/pkg/deploy"
	"io"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
)

// validateResult is the JSON form of `syslet validate --output json`.
type validateResult struct {
	Valid    bool             `json:"valid"`
	Sources  int              `json:"sources"`
	Specs    int              `json:"specs"`
	Errors   int              `json:"errors"`
	Findings []report.Finding `json:"findings"`
}

// cmdValidate checks specs with no host access at all: no systemd, no
// podman, nothing read outside the given sources, nothing written.
func cmdValidate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate", stderr)
	output := fs.String("output", "text", "text or json")
	maxInput := fs.Int64("max-input", spec.DefaultMaxInput, "")
	strict := fs.Bool("strict", false, "treat warnings as errors")
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
	l, err := deploy.LoadMax(path, "/", stdin, *maxInput)
	if err != nil {
		fmt.Fprintln(stderr, "syslet validate:", err)
		return exitError
	}
	if *strict {
		l.Report.Strict()
	}
	if *output == "json" {
		res := validateResult{Valid: !l.Report.HasErrors(), Sources: len(l.Sources), Specs: len(l.Specs), Errors: l.Report.Errors(), Findings: l.Report.Findings}
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
