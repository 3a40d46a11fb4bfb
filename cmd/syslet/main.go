package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes. They are documented in the README and stable: CI jobs and
// webhookd branch on them.
const (
	exitOK      = 0 // success, or nothing to change
	exitError   = 1 // host, plan or apply failure
	exitInvalid = 2 // the specs are invalid; nothing was touched
	exitPending = 3 // --diff --detailed-exitcode: changes are pending
)

var version = "dev"

const usage = `syslet — deploy podman quadlet units from JSON specs

Usage:
  syslet [--diff] [flags] [PATH | --stdin | -]   plan and apply (PATH: file or directory of *.json;
                                                 default /etc/syslet/config.json)
  syslet validate [--output json] [PATH | -]    check specs without touching any host
  syslet render PATH --out DIR                  write the files a host would get under DIR
  syslet adopt FILE…                            print v1 specs for hand-written quadlet files
  syslet version

Flags for apply / --diff:
  --diff                 print the plan and stop; nothing changes
  --stdin                read specs from stdin (also: PATH "-"); an apply stores them in
                         /etc/syslet/config.json (0600) for later plain runs
  --root DIR             manage files under DIR instead of / (no systemd or podman is read)
  --output text|json     plan format (default text)
  --detailed-exitcode    with --diff: exit 3 when changes are pending
  --quadlet PATH         quadlet generator used for staging (default /usr/libexec/podman/quadlet)
  --timeout DURATION     how long to wait for started units to become active (default 2m)
  --allow-removals       allow a plan that removes all managed units, or more than half of
                         them when there are more than four (refused otherwise)
  --force                overwrite managed files that were edited by hand (drift)
  --max-input BYTES      refuse spec input larger than this (default 16 MiB; also for
                         validate and render)

Exit codes: 0 ok / no changes, 1 error, 2 invalid specs, 3 changes pending (--detailed-exitcode).
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "validate":
			return cmdValidate(args[1:], stdin, stdout, stderr)
		case "render":
			return cmdRender(args[1:], stdin, stdout, stderr)
		case "adopt":
			return cmdAdopt(args[1:], stdout, stderr)
		case "version", "--version":
			fmt.Fprintf(stdout, "syslet %s\n", version)
			return exitOK
		case "help", "-h", "--help":
			fmt.Fprint(stdout, usage)
			return exitOK
		case "apply":
			args = args[1:]
		}
	}
	return cmdApply(args, stdin, stdout, stderr)
}

// parseInterspersed parses flags that may come before or after positional
// arguments ("syslet examples/ --diff" and "syslet --diff examples/").
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	return fs
}

// errUsage marks a command-line mistake.
var errUsage = errors.New("usage")

func oneSource(pos []string, stdinFlag bool) (string, error) {
	switch {
	case len(pos) > 1:
		return "", fmt.Errorf("%w: one PATH at most, got %s", errUsage, strings.Join(pos, " "))
	case stdinFlag && len(pos) == 1 && pos[0] != "-":
		return "", fmt.Errorf("%w: --stdin and PATH %q both given", errUsage, pos[0])
	case stdinFlag:
		return "-", nil
	case len(pos) == 1:
		return pos[0], nil
	}
	return "", nil
}
