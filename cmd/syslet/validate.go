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
type validateOptions struct {
	output, podman string
	strict         bool
	maxInput       int64
}

func (o *validateOptions) define(f *flags) {
	f.String(&o.output, "output", "text", "print as `FORMAT`: text, or json (valid, podman, and per finding source, path, rule, message, severity)")
	f.String(&o.podman, "podman", unit.OldestPodman.String(), "check against podman `VERSION` (the oldest release syslet supports by default)")
	f.Bool(&o.strict, "strict", false, "treat warnings as errors (for CI)")
	f.Bytes(&o.maxInput, "max-input", spec.DefaultMaxInput, "refuse spec input larger than `BYTES`")
}

func cmdValidate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o validateOptions
	f := commandFlags("validate")
	o.define(f)
	pos, err := parseInterspersed(f.FlagSet, args)
	if err == nil && o.output != "text" && o.output != "json" {
		err = fmt.Errorf("%w: --output must be text or json, got %q", errUsage, o.output)
	}
	var path string
	if err == nil {
		path, err = oneSource(pos, false)
	}
	var release unit.Podman
	if err == nil {
		release, err = podmanFlag(o.podman)
	}
	if err != nil {
		return usage(stdout, stderr, "validate", err)
	}
	strict := &o.strict
	l, err := load.Path(path, load.Options{Stdin: stdin, MaxInput: o.maxInput})
	if err != nil {
		view.Error(stderr, "syslet validate", err)
		return exitError
	}
	l.CheckPodman(release)
	if *strict {
		l.Report.Strict()
	}
	if o.output == "json" {
		res := view.Validation{Valid: !l.Report.HasErrors(), Sources: len(l.Sources), Specs: len(l.Specs), Errors: l.Report.Errors(), Podman: release.String(), Findings: l.Report.Findings}
		if res.Findings == nil {
			res.Findings = []report.Finding{}
		}
		view.WriteJSON(stdout, res)
	} else {
		view.Findings(stdout, l.Report)
		if !l.Report.HasErrors() {
			// What was checked of the secrets comes first: the verdict
			// line stays the last, which CI scripts read.
			names, recipients := secretRecipients(l.Specs)
			view.SecretsChecked(stdout, names, recipients)
			view.Valid(stdout, len(l.Specs), len(l.Sources))
		}
	}
	if l.Report.HasErrors() {
		return exitInvalid
	}
	return exitOK
}

// secretRecipients are the secret specs (those syslet decrypts, not
// external ones) and the age recipients each is encrypted for.
func secretRecipients(specs []*spec.Spec) ([]string, map[string][]string) {
	var names []string
	out := map[string][]string{}
	for _, s := range specs {
		if s.Kind == spec.Secret && s.Ciphertext != "" {
			names = append(names, s.Name)
			out[s.Name] = spec.Recipients(s.Ciphertext)
		}
	}
	return names, out
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
