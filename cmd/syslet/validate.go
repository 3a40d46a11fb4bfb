package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/unit"
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
// podman, nothing read outside the given sources, nothing written. The
// rendered units go through podman's quadlet converter in-process, for the
// podman release --podman names (default: the oldest syslet supports).
func cmdValidate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("validate", stderr)
	output := fs.String("output", "text", "text or json")
	podman := fs.String("podman", unit.OldestPodman.String(), "podman release to check against")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitInvalid
	}
	path, err := oneSource(pos, false)
	if err != nil {
		fmt.Fprintln(stderr, "syslet validate:", err)
		return exitError
	}
	if *output != "text" && *output != "json" {
		fmt.Fprintf(stderr, "syslet validate: --output must be text or json, got %q\n", *output)
		return exitError
	}
	release, err := podmanFlag(*podman)
	if err != nil {
		fmt.Fprintln(stderr, "syslet validate:", err)
		return exitError
	}
	l, err := load(path, "/", stdin)
	if err != nil {
		fmt.Fprintln(stderr, "syslet validate:", err)
		return exitError
	}
	l.checkPodman(release)
	if *output == "json" {
		res := validateResult{Valid: !l.report.HasErrors(), Sources: len(l.srcs), Specs: len(l.specs), Errors: l.report.Errors(), Findings: l.report.Findings}
		if res.Findings == nil {
			res.Findings = []report.Finding{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(res)
	} else {
		printFindings(stdout, l.report)
		if !l.report.HasErrors() {
			fmt.Fprintf(stdout, "%d spec(s) from %d source(s) are valid\n", len(l.specs), len(l.srcs))
		}
	}
	if l.report.HasErrors() {
		return exitInvalid
	}
	return exitOK
}
