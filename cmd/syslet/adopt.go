package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/syslet/syslet/pkg/app/adopt"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/redact"
	"github.com/syslet/syslet/pkg/unit"
)

// cmdAdopt prints v1 specs for hand-written quadlet files (and the build
// contexts of .build files) on stdout; what the first apply of them would
// still change goes to stderr. It reads only; nothing is written.
func cmdAdopt(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	pos, err := parseInterspersed(commandFlags("adopt").FlagSet, args)
	if err == nil && len(pos) == 0 {
		err = fmt.Errorf("%w: syslet adopt FILE… (quadlet unit files: %s)", errUsage, strings.Join(unit.Exts(), ", "))
	}
	if err != nil {
		return usage(stdout, stderr, "adopt", err)
	}
	files, err := adopt.Read(pos)
	if err != nil {
		view.Error(stderr, "syslet adopt", err)
		return exitError
	}
	res := adopt.Convert(files)
	stdout.Write(res.Specs)
	for _, n := range res.Notes {
		fmt.Fprintln(stderr, "syslet adopt: note:", redact.Line(n))
	}
	for _, f := range res.Failed {
		view.Printf(stderr, "syslet adopt: not adopted: %s\n", f)
	}
	if len(res.Failed) > 0 {
		return exitInvalid
	}
	fmt.Fprintf(stderr, "syslet adopt: %d file(s) adopted", len(files))
	if len(res.ExternalSecrets) > 0 {
		fmt.Fprintf(stderr, ", %d podman secret(s) declared external (%s: syslet checks they exist and never changes them)",
			len(res.ExternalSecrets), redact.Escape(strings.Join(res.ExternalSecrets, ", ")))
	}
	if len(res.Notes) == 0 {
		fmt.Fprint(stderr, "; the rendered units mean exactly what the files say (the first apply is metadata-only)")
	}
	fmt.Fprintln(stderr)
	return exitOK
}
