package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/syslet/syslet/pkg/secrets"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// showSecretsEnv reveals decrypted values in the text of --diff, and
// nowhere else (not in an apply's output, not in --output json).
const showSecretsEnv = "SYSLET_SHOW_SECRETS"

// openSecrets decrypts every secret spec while planning, so that a wrong
// recipient, a bad MAC or a missing identity stops --diff and apply by
// spec name before anything is written. Under --root there is no host
// identity to decrypt with and no apply: nothing is opened. An apply
// (not --diff) also records the host identity in the append-only cache.
func openSecrets(o applyOptions, out *render.Output, stderr io.Writer) (*secrets.Opened, error) {
	if o.hostless() || len(out.Secrets) == 0 {
		return nil, nil
	}
	kr, err := secrets.Load(o.root)
	if err != nil {
		return nil, fmt.Errorf("loading the host's age identities: %w", err)
	}
	for _, w := range kr.Warnings {
		fmt.Fprintln(stderr, "syslet: warning:", w)
	}
	opened, err := secrets.OpenAll(out.Secrets, kr)
	if err != nil {
		return nil, err
	}
	if !o.diff {
		if err := kr.Remember(); err != nil {
			opened.Wipe()
			return nil, err
		}
	}
	return opened, nil
}

// printSecretFailure prints each secret that cannot be opened on a line
// of its own.
func printSecretFailure(stderr io.Writer, err error) {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			fmt.Fprintln(stderr, "syslet:", e)
		}
	} else {
		fmt.Fprintln(stderr, "syslet:", err)
	}
	fmt.Fprintln(stderr, "syslet: secrets cannot be opened on this host (its recipients: syslet host-key); nothing was changed")
}

// printSecretValues lists the values of the secrets the plan creates or
// replaces, for --diff with SYSLET_SHOW_SECRETS=true.
func printSecretValues(w io.Writer, o applyOptions, p *plan.Plan, out *render.Output, opened *secrets.Opened) {
	if !o.diff || o.output != "text" || opened == nil || os.Getenv(showSecretsEnv) != "true" {
		return
	}
	var lines []string
	for _, a := range p.Actions {
		if a.Op != plan.OpCreateSecret || a.Secret == nil {
			continue
		}
		if v, ok := opened.Value(a.Secret, a.Key); ok {
			lines = append(lines, fmt.Sprintf("  %s = %q", a.Target, v))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\nSecret values (%s=true; shown by --diff only):\n", showSecretsEnv)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// cmdHostKey prints the host's age recipient: what an operator encrypts a
// secret for. It also records the host identity in the append-only cache,
// so a secret encrypted for this key still opens after the key is
// replaced.
func cmdHostKey(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("syslet host-key", stderr)
	root := fs.String("root", "/", "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "syslet: usage: syslet host-key [--root DIR]")
		return exitError
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
