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
	"github.com/syslet/syslet/pkg/verdict"
)

// Exit codes. They are documented (exitStatus in cli.go, hence --help, the CLI reference and syslet(1)) and stable: CI jobs and
// webhookd branch on them. Those a run ends with are its verdict's (pkg/verdict); the others are the command line's own.
const (
	exitOK          = verdict.ExitOK             // success, or nothing to change
	exitError       = verdict.ExitError          // host, plan or apply failure, lock timeout, refused plan, stale saved plan
	exitInvalid     = verdict.ExitInvalid        // the specs are invalid; nothing was touched
	exitPending     = 3                          // --diff --detailed-exitcode: changes are pending
	exitRolledBack  = verdict.ExitRolledBack     // the change failed its health gate; the last good generation was restored and passed it
	exitRollbackBad = verdict.ExitRollbackFailed // the change failed its health gate, and so did the rollback: the host needs a person
	exitUsage       = 64                         // a command-line mistake; nothing was read or touched
	exitInternal    = 70                         // a bug in syslet (a recovered panic)
	exitInterrupted = verdict.ExitInterrupted    // SIGINT/SIGTERM ended the run; the summary says what was not reached
)

// version is stamped by a release build (see buildVersion).
var version = "dev"

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
	c := lookup("")
	if len(args) > 0 {
		if named := dispatch(args[0]); named != nil {
			c, args = named, args[1:]
		} else if err := unknownVerb(args); err != nil {
			return usage(stdout, stderr, "", err)
		}
	}
	return c.run(args, stdin, stdout, stderr)
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

// commandFlags returns an empty flag set for the command named name. The
// flag package prints nothing itself: usage reports a mistake, or the
// help that was asked for.
func commandFlags(name string) *flags {
	f := newFlags(lookup(name).title(), io.Discard)
	f.Usage = func() {}
	return f
}

// parseNone parses a command that takes flags and no arguments.
func parseNone(f *flags, args []string) error {
	if err := f.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if f.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, f.Arg(0))
	}
	return nil
}

// errUsage marks a command-line mistake.
var errUsage = errors.New("usage")

// usage reports a command-line mistake — what was wrong and where the
// help is — with exit code 64; help asked for (-h, --help) is printed on
// stdout, exit code 0.
func usage(stdout, stderr io.Writer, name string, err error) int {
	c := lookup(name)
	if errors.Is(err, flag.ErrHelp) {
		writeHelp(stdout, c)
		return exitOK
	}
	msg := strings.TrimPrefix(err.Error(), errUsage.Error()+": ")
	if hint := flagHint(c, msg); hint != "" {
		msg = unknownFlag(msg) + "; " + hint
	}
	fmt.Fprintf(stderr, "%s: %s\nsee '%s --help'\n", c.title(), msg, c.title())
	return exitUsage
}

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
