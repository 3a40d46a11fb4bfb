package main

import (
	"fmt"
	"io"

	"github.com/syslet/syslet/pkg/secrets"
)

// cmdHostKey prints the host's age recipient: what an operator encrypts a
// secret for. It also records the host identity in the append-only cache,
// so a secret encrypted for this key still opens after the key is
// replaced.
func cmdHostKey(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("syslet host-key", stderr)
	root := fs.String("root", "/", "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "syslet: usage: syslet host-key [--root DIR]")
		return exitUsage
	}
	kr, err := secrets.Load(*root)
	if err != nil {
		fmt.Fprintln(stderr, "syslet:", err)
		return exitError
	}
	r, err := kr.HostRecipient()
	if err != nil {
		fmt.Fprintln(stderr, "syslet:", err)
		return exitError
	}
	if err := kr.Remember(); err != nil {
		fmt.Fprintln(stderr, "syslet:", err)
		return exitError
	}
	fmt.Fprintln(stdout, r)
	return exitOK
}
