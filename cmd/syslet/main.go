package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/syslet/syslet/pkg/gcpolicy"
	"github.com/syslet/syslet/pkg/spec"
)

// Exit codes. They are documented in the README and stable: CI jobs and
// webhookd branch on them.
const (
	exitOK          = 0   // success, or nothing to change
	exitError       = 1   // host, plan or apply failure, lock timeout, refused plan
	exitInvalid     = 2   // the specs are invalid; nothing was touched
	exitPending     = 3   // --diff --detailed-exitcode: changes are pending
	exitUsage       = 64  // a command-line mistake; nothing was read or touched
	exitInternal    = 70  // a bug in syslet (a recovered panic)
	exitInterrupted = 130 // SIGINT/SIGTERM ended the run; the summary says what was not reached
)

var version = "dev"

const usage = `syslet — deploy podman quadlet units from JSON specs

Usage:
  syslet [--diff] [flags] [PATH | --stdin | -]   plan and apply (PATH: file or directory of *.json;
                                                 default /etc/syslet/config.json)
  syslet validate [--strict] [--output json] [--podman VERSION] [PATH | -]
                                                check specs without touching any host, podman's
                                                quadlet converter included, for podman VERSION
                                                (default 5.4, the oldest syslet supports;
                                                --strict: warnings are errors, for CI)
  syslet render PATH --out DIR [--podman VERSION]
                                                write the files a host would get under DIR
  syslet host-key                               print this host's age recipient (encrypt secrets for it)
  syslet adopt FILE…                            print v1 specs for hand-written quadlet files
  syslet push [flags] TARGET… PATH              validate PATH here, then plan/apply it on each
                                                TARGET ([user@]host[:port]) over SSH
  syslet push [flags] --hosts-dir DIR [TARGET…] each TARGET gets DIR/<host>/ plus DIR/common/
                                                (no TARGET: every host directory)
  syslet ssh-command [--diff-only]              authorized_keys forced command: runs only
                                                "syslet --diff --stdin" or "syslet --stdin"
  syslet history [RUN] [--output json]          recent runs from the run journal, or one run's actions
  syslet version [--output json]
  syslet schema                                 print the JSON Schema of spec format v1

Flags for apply / --diff:
  --diff                 print the plan and stop; nothing changes, no lock is taken
  --stdin                read specs from stdin (also: PATH "-"); an apply stores them in
                         /etc/syslet/config.json (0600) for later plain runs
  --root DIR             manage files under DIR instead of / (no systemd or podman is read)
  --output text|json     json: one JSON document on stdout (plan, and the result of an apply);
                         the human plan and log go to stderr
  --detailed-exitcode    with --diff: exit 3 when changes are pending
  --yes                  do not ask before applying (only asked when stdin and stderr are a terminal)
  --source TEXT          what the run journal records as the specs' origin (default: the path)
  --quadlet PATH         quadlet generator used for staging (default /usr/libexec/podman/quadlet)
  --lock-timeout D       how long to wait for another apply to finish (default 5m; 0: for ever)
  --timeout D            how long a started or reloaded unit has to become active (default 2m)
  --pull-timeout D       deadline of one image pull (default 10m)
  --stop-timeout D       deadline of one stop (default 2m)
  --reload-timeout D     deadline of the daemon-reload (default 2m)
  --dial-timeout D       deadline for connecting to systemd (default 30s)
  --read-timeout D       deadline for reading the host's state to plan (default 2m)
  --podman VERSION       with --root: podman release to check the units against (default 5.4);
                         on a host, syslet reads the host's podman version from its API
  --allow-removals       allow a plan that removes all managed units, or more than half of
                         them when there are more than four (refused otherwise)
  --force                overwrite managed files that were edited by hand (drift)
  --max-input BYTES      refuse spec input larger than this (default 16 MiB; also for
                         validate and render)

Secrets are decrypted while planning with the host's age identities (SSH ed25519 host key,
/var/lib/syslet/key.txt, ageIdentityFiles in /etc/syslet/syslet.json). SYSLET_SHOW_SECRETS=true
shows their values in --diff.
Flags for push:
  --diff                 plan only, on every host
  --parallel N           hosts worked on at once (default 4)
  --remote-command CMD   program run on the hosts (default syslet; e.g. "sudo syslet")
  -F FILE                ssh_config file (default ~/.ssh/config, /etc/ssh/ssh_config)
  -i FILE                private key (repeatable); also IdentityFile and SSH_AUTH_SOCK
  --known-hosts FILE     known_hosts file (default ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts)
  --accept-new           pin the key of a host not in known_hosts yet (never a changed key)
  --connect-timeout D    connect, host key check and login (default 15s)
  --command-timeout D    the remote plan/apply (default 30m; 0 = none)
  --allow-empty          push a set with no specs (removes every removable syslet unit)
  push exits 0 when every host succeeded, 1 when any failed, 2 when specs are invalid or empty
  (then nothing was sent), 130 when interrupted. A first Ctrl-C starts no more hosts, a second
  one forwards SIGINT to the running ones.

A first SIGINT/SIGTERM lets the action in progress finish, runs nothing after it and prints what
was not reached; a second one aborts at once. The next run resumes (see syslet history).

Exit codes: 0 ok / no changes, 1 error, 2 invalid specs, 3 changes pending (--detailed-exitcode),
64 usage error, 70 internal error, 130 interrupted.
`

func main() {
	gcpolicy.ForCLI()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// recovered turns a panic into exit code 70 with the stack on stderr, so a
// bug is never mistaken for "invalid specs" (Go's own panic exit code is 2).
func recovered(stderr io.Writer, code *int) {
	if r := recover(); r != nil {
		fmt.Fprintf(stderr, "syslet: internal error (a bug; please report it): %v\n%s", r, debug.Stack())
		*code = exitInternal
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer recovered(stderr, &code)
	if len(args) > 0 {
		switch args[0] {
		case "validate":
			return cmdValidate(args[1:], stdin, stdout, stderr)
		case "render":
			return cmdRender(args[1:], stdin, stdout, stderr)
		case "host-key":
			return cmdHostKey(args[1:], stdout, stderr)
		case "adopt":
			return cmdAdopt(args[1:], stdout, stderr)
		case "schema":
			stdout.Write(spec.Schema)
			return exitOK
		case "push":
			return cmdPush(args[1:], stdin, stdout, stderr)
		case "ssh-command":
			return cmdSSHCommand(args[1:], stdin, stdout, stderr)
		case "version", "--version":
			return cmdVersion(args[1:], stdout, stderr)
		case "history":
			return cmdHistory(args[1:], stdout, stderr)
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
