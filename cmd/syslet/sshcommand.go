package main

import (
	"fmt"
	"io"
	"os"

	"github.com/syslet/syslet/pkg/sshcommand"
)

// cmdSSHCommand is the authorized_keys forced command: it runs the plan or
// apply the client asked for in SSH_ORIGINAL_COMMAND, in this process,
// when the policy allows it, and refuses anything else.
func cmdSSHCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("syslet ssh-command", stderr)
	diffOnly := fs.Bool("diff-only", false, "")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "syslet ssh-command: unexpected argument %q (the client's command comes from SSH_ORIGINAL_COMMAND)\n", fs.Arg(0))
		return exitUsage
	}
	original, present := os.LookupEnv("SSH_ORIGINAL_COMMAND")
	argv, err := sshcommand.Policy{DiffOnly: *diffOnly}.Check(original, present)
	if err != nil {
		fmt.Fprintln(stderr, "syslet ssh-command:", err)
		return exitError
	}
	return cmdApply(argv, stdin, stdout, stderr)
}
