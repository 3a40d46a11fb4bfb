package main

import (
	"fmt"
	"io"
	"os"

	"github.com/syslet/syslet/pkg/app/view"

	"github.com/syslet/syslet/pkg/sshcommand"
)

// cmdSSHCommand is the authorized_keys forced command: it runs the plan,
// apply or status read the client asked for in SSH_ORIGINAL_COMMAND, in this process,
// when the policy allows it, and refuses anything else.
type sshCommandOptions struct{ diffOnly bool }

func (o *sshCommandOptions) define(f *flags) {
	f.Bool(&o.diffOnly, "diff-only", false, "allow only what changes nothing: the plan (syslet --diff --stdin), saving it (--out -), checking a saved one (--diff --plan - --stdin), the plan with its exit code (--diff --stdin --detailed-exitcode) and the services' health (syslet status --stdin --output json)")
}

func cmdSSHCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o sshCommandOptions
	f := commandFlags("ssh-command")
	o.define(f)
	if err := f.Parse(args); err != nil {
		return usage(stdout, stderr, "ssh-command", fmt.Errorf("%w: %w", errUsage, err))
	}
	if f.NArg() > 0 {
		fmt.Fprintf(stderr, "syslet ssh-command: unexpected argument %q (the client's command comes from SSH_ORIGINAL_COMMAND)\n", f.Arg(0))
		return exitUsage
	}
	original, present := os.LookupEnv("SSH_ORIGINAL_COMMAND")
	argv, err := sshcommand.Policy{DiffOnly: o.diffOnly}.Check(original, present)
	if err != nil {
		view.Error(stderr, "syslet ssh-command", err)
		return exitError
	}
	if argv[0] == "status" { // the one subcommand allowed: read-only
		return cmdStatus(argv[1:], stdin, stdout, stderr)
	}
	return cmdApply(argv, stdin, stdout, stderr)
}
