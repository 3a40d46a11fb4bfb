package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/syslet/syslet/pkg/app/view"

	"github.com/syslet/syslet/pkg/secrets"
)

// cmdHostKey prints the host's age recipient: what an operator encrypts a
// secret for. It also records the host identity in the append-only cache,
// so a secret encrypted for this key still opens after the key is
// replaced.
type hostKeyOptions struct{ root string }

func (o *hostKeyOptions) define(f *flags) {
	f.String(&o.root, "root", "/", "read the host key and syslet's files under `DIR` as if it were /")
}

func cmdHostKey(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var o hostKeyOptions
	f := commandFlags("host-key")
	o.define(f)
	if err := parseNone(f, args); err != nil {
		return usage(stdout, stderr, "host-key", err)
	}
	if needsRoot(lookup("host-key"), filepath.Clean(o.root), args, stderr) {
		return exitError
	}
	kr, err := secrets.Load(o.root)
	if err != nil {
		view.Error(stderr, "syslet", err)
		return exitError
	}
	r, err := kr.HostRecipient()
	if err != nil {
		view.Error(stderr, "syslet", err)
		return exitError
	}
	if err := kr.Remember(); err != nil {
		view.Error(stderr, "syslet", err)
		return exitError
	}
	fmt.Fprintln(stdout, r)
	return exitOK
}
