package main

import (
	"fmt"
	"github.com/syslet/syslet/pkg/app/planfile"
	"io"
	"strings"

	"github.com/syslet/syslet/pkg/app/view"
)

// cmdShow is `syslet show FILE`: a saved plan printed as the --diff that
// saved it printed it, with what it was made from; --output json prints
// the file itself (whose plan, planDigest and summary are --diff's JSON
// under the same names). It reads only the file: no host, no lock.
type showOptions struct{ output string }

func (o *showOptions) define(f *flags) {
	f.String(&o.output, "output", "text", "print as `FORMAT`: text (as --diff printed the plan), or json (the saved plan file, checked and indented)")
}

func cmdShow(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o showOptions
	f := commandFlags("show")
	o.define(f)
	pos, err := parseInterspersed(f.FlagSet, args)
	switch {
	case err != nil:
		err = fmt.Errorf("%w: %w", errUsage, err)
	case len(pos) != 1:
		err = fmt.Errorf("%w: want one FILE (a plan saved by syslet --diff --out FILE), got %d argument(s): %s", errUsage, len(pos), strings.Join(pos, " "))
	case o.output != "text" && o.output != "json":
		err = fmt.Errorf("%w: --output must be text or json, got %q", errUsage, o.output)
	}
	if err != nil {
		return usage(stdout, stderr, "show", err)
	}
	s, _, err := planfile.Open(pos[0], stdin)
	if err != nil {
		fmt.Fprintln(stderr, "syslet show:", err)
		return exitError
	}
	if o.output == "json" {
		if err := s.Encode(stdout); err != nil {
			fmt.Fprintln(stderr, "syslet show:", err)
			return exitError
		}
		return exitOK
	}
	view.SavedPlan(stdout, s.View(pos[0]), s.Against(), s.Plan)
	return exitOK
}
