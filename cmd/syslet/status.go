package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/syslet/syslet/pkg/app/deploy"
	"github.com/syslet/syslet/pkg/app/status"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/spec"
)

// cmdStatus is `syslet status`: how systemd sees the services the specs
// run, read-only. It takes no lock, so it never waits for an apply; it is
// what `syslet push --pause` reads on each host before and after a pause.
type statusOptions struct {
	output string
	stdin  bool
}

func (o *statusOptions) define(f *flags) {
	f.Bool(&o.stdin, "stdin", false, "read specs from stdin (also: PATH \"-\")")
	f.String(&o.output, "output", "text", "print as `FORMAT`: text, or json (every service with its active and sub state, last result, InvocationID and NRestarts; each probe with its answer)")
}

func cmdStatus(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o statusOptions
	f := commandFlags("status")
	o.define(f)
	pos, err := parseInterspersed(f.FlagSet, args)
	if err != nil {
		return usage(stdout, stderr, "status", fmt.Errorf("%w: %w", errUsage, err))
	}
	path, err := oneSource(pos, o.stdin)
	if err == nil && o.output != "text" && o.output != "json" {
		err = fmt.Errorf("%w: --output must be text or json, got %q", errUsage, o.output)
	}
	if err != nil {
		return usage(stdout, stderr, "status", err)
	}
	if path == "" {
		// Without a PATH the specs are the stored ones, maybe stored long
		// ago: say which, as a plain run's plan header does.
		path = layout.StoredSpecs
		if fi, err := os.Stat(path); err == nil {
			view.Printf(stderr, "syslet status: the services of %s\n", view.Stored{Path: path, At: fi.ModTime()}.Label(time.Now()))
		}
	}
	srcs, err := spec.ReadSources(path, stdin)
	if err != nil {
		view.Error(stderr, "syslet status", err)
		var ie *spec.InputError
		if errors.As(err, &ie) { // a missing or unusable PATH is the specs' fault
			return exitInvalid
		}
		return exitError
	}
	l := load.Sources(srcs)
	if l.Report.HasErrors() {
		view.Findings(stderr, l.Report)
		return exitInvalid
	}
	ctx := context.Background()
	m, err := status.Dial(ctx, deploy.Defaults.DialTimeout)
	if err != nil {
		view.Error(stderr, "syslet status", err)
		return exitError
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(ctx, deploy.Defaults.ReadTimeout)
	defer cancel()
	r, err := status.Read(ctx, m, l.Out)
	if err != nil {
		view.Error(stderr, "syslet status", err)
		return exitError
	}
	status.Probe(ctx, status.Podman(), "/", l.Out, &r)
	if o.output == "json" {
		return writeJSON(stdout, r)
	}
	status.Write(stdout, r)
	return exitOK
}
