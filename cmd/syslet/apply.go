package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/syslet/syslet/pkg/app/deploy"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
)

type applyOptions struct {
	req      deploy.Request
	stdin    bool
	output   string
	detailed bool
	yes      bool
}

func parseApply(args []string, stderr io.Writer) (applyOptions, error) {
	var o applyOptions
	r := &o.req
	fs := newFlagSet("syslet", stderr)
	fs.BoolVar(&r.Diff, "diff", false, "")
	fs.BoolVar(&o.stdin, "stdin", false, "")
	fs.StringVar(&r.Root, "root", "/", "")
	fs.StringVar(&o.output, "output", "text", "")
	fs.BoolVar(&o.detailed, "detailed-exitcode", false, "")
	fs.BoolVar(&o.yes, "yes", false, "")
	fs.StringVar(&r.Quadlet, "quadlet", deploy.Defaults.Quadlet, "")
	fs.StringVar(&r.Source, "source", "", "")
	fs.DurationVar(&r.StartTimeout, "timeout", deploy.Defaults.StartTimeout, "")
	fs.DurationVar(&r.PullTimeout, "pull-timeout", deploy.Defaults.PullTimeout, "")
	fs.DurationVar(&r.StopTimeout, "stop-timeout", deploy.Defaults.StopTimeout, "")
	fs.DurationVar(&r.ReloadTimeout, "reload-timeout", deploy.Defaults.ReloadTimeout, "")
	fs.DurationVar(&r.DialTimeout, "dial-timeout", deploy.Defaults.DialTimeout, "")
	fs.DurationVar(&r.ReadTimeout, "read-timeout", deploy.Defaults.ReadTimeout, "")
	fs.DurationVar(&r.LockTimeout, "lock-timeout", deploy.Defaults.LockTimeout, "")
	fs.Int64Var(&r.MaxInput, "max-input", spec.DefaultMaxInput, "")
	fs.BoolVar(&r.AllowRemovals, "allow-removals", false, "")
	fs.BoolVar(&r.Force, "force", false, "")
	podman := fs.String("podman", "", "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	if r.Path, err = oneSource(pos, o.stdin); err != nil {
		return o, err
	}
	if o.output != "text" && o.output != "json" {
		return o, fmt.Errorf("%w: --output must be text or json, got %q", errUsage, o.output)
	}
	r.JSON = o.output == "json"
	if o.detailed && !r.Diff {
		return o, fmt.Errorf("%w: --detailed-exitcode only applies with --diff", errUsage)
	}
	// Abs cleans: "/.", "//" and "/etc/.." all name the live host, and
	// are treated exactly like "/".
	if r.Root, err = filepath.Abs(r.Root); err != nil {
		return o, err
	}
	if *podman != "" {
		if r.Root == "/" {
			return o, fmt.Errorf("%w: --podman only applies with --root: on a host, syslet checks against the podman the host runs", errUsage)
		}
		if r.Podman, err = podmanFlag(*podman); err != nil {
			return o, err
		}
	}
	return o, nil
}

func cmdApply(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseApply(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "syslet:", err)
		return exitUsage
	}
	ctx, stop, release := signals(stderr)
	defer release()
	req := o.req
	req.Stdin, req.Stdout, req.Stderr, req.Stop = stdin, stdout, stderr, stop
	if !req.Diff && !o.yes && req.Path != "-" && view.IsTerminal(stdin) && view.IsTerminal(stderr) {
		req.Confirm = func() bool { return confirm(stdin, stderr) }
	}
	req.AfterStep = testPause(stop, stderr)

	out, err := deploy.Run(ctx, req)
	if req.JSON && out != nil {
		_ = view.JSON(stdout, out)
	}
	code := exitCode(err)
	if err != nil && !errors.Is(err, deploy.ErrInvalid) {
		fmt.Fprintln(stderr, "syslet:", err)
	}
	if code == exitOK && o.detailed && out.Pending() {
		return exitPending
	}
	return code
}

// exitCode maps a run's error to the documented exit codes.
func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, deploy.ErrInvalid):
		return exitInvalid
	case errors.Is(err, deploy.ErrInterrupted):
		return exitInterrupted
	}
	return exitError
}

// signals returns a context cancelled by a second SIGINT/SIGTERM and a
// channel closed by the first: the first lets the action in progress
// finish and runs nothing after it, the second aborts at once.
func signals(stderr io.Writer) (context.Context, <-chan struct{}, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	stop := make(chan struct{})
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case s := <-ch:
				n++
				if n == 1 {
					fmt.Fprintf(stderr, "\nsyslet: %s: finishing the action in progress, then stopping (again to abort at once)\n", s)
					close(stop)
					continue
				}
				fmt.Fprintf(stderr, "\nsyslet: %s: aborting\n", s)
				cancel()
				return
			case <-done:
				return
			}
		}
	}()
	return ctx, stop, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}

// confirm asks once on the terminal.
func confirm(in io.Reader, w io.Writer) bool {
	fmt.Fprint(w, "\nApply this plan? Only 'yes' continues: ")
	line, _ := bufio.NewReader(in).ReadString('\n')
	return strings.TrimSpace(line) == "yes"
}

// testPauseEnv names the step after which an apply pauses until it is
// signalled or killed. Only the integration tests set it: they kill syslet
// at every step to prove the next run resumes exactly.
const testPauseEnv = "SYSLET_TEST_PAUSE_AFTER_STEP"

func testPause(stop <-chan struct{}, stderr io.Writer) func(step int) {
	n, err := strconv.Atoi(os.Getenv(testPauseEnv))
	if err != nil || n <= 0 {
		return nil
	}
	return func(s int) {
		if s != n {
			return
		}
		fmt.Fprintf(stderr, "syslet: test pause after step %d (pid %d)\n", n, os.Getpid())
		_ = os.WriteFile(layout.TestPauseFile(n), []byte(strconv.Itoa(os.Getpid())), 0o644)
		select {
		case <-stop:
		case <-time.After(10 * time.Minute):
		}
	}
}
