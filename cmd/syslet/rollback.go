package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/syslet/syslet/pkg/app/deploy"
	"github.com/syslet/syslet/pkg/app/view"
)

// cmdRollback is `syslet rollback [RUN]`: apply a kept generation again —
// the one before the host's current generation, or the run named — with
// each container pinned to the image it ran then, its plan shown first
// like any apply's; --diff shows only the plan.
func cmdRollback(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o applyOptions
	r, f := &o.req, commandFlags("rollback")
	o.defineRollback(f)
	pos, err := parseInterspersed(f.FlagSet, args)
	if err == nil && len(pos) > 1 {
		err = fmt.Errorf("%w: one RUN at most", errUsage)
	}
	if err == nil {
		err = checkRunOutput(o.output)
	}
	if err == nil {
		err = o.checkGate()
	}
	if err == nil {
		r.Root, err = filepath.Abs(r.Root)
	}
	if err != nil {
		return usage(stdout, stderr, "rollback", err)
	}
	if needsRoot(lookup("rollback"), r.Root, args, stderr) {
		return exitError
	}
	r.Generation = "previous"
	if len(pos) == 1 {
		r.Generation = pos[0]
	}
	ctx, stop, release := signals(stderr)
	defer release()
	req := o.req
	req.Stdin, req.Stop = stdin, stop
	if !req.Diff && !o.yes && view.IsTerminal(stdin) && view.IsTerminal(stderr) {
		req.Confirm = func() bool { return confirm(stdin, stderr) }
	}
	return runRequest(ctx, req, o, stdout, stderr)
}

// defineRollback registers the flags of syslet rollback.
func (o *applyOptions) defineRollback(f *flags) {
	r, d := &o.req, &deploy.Defaults
	f.Bool(&r.Diff, "diff", false, "print the rollback's plan and stop; nothing changes")
	f.String(&o.output, "output", outputText, "print as `FORMAT`: text, json or text+json, as an apply's")
	f.Bool(&o.yes, "yes", false, "do not ask before applying (only asked when stdin and stderr are a terminal)")
	f.String(&r.Root, "root", d.Root, "the host's root `DIR` (only with --diff)")
	f.Duration(&r.LockTimeout, "lock-timeout", d.LockTimeout, "wait at most `D` for another apply to finish (0: for ever)")
	f.Duration(&r.StartTimeout, "timeout", d.StartTimeout, "give a started unit `D` to become active")
	o.defineGate(f)
}
