package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/syslet/syslet/pkg/app/deploy"
	"github.com/syslet/syslet/pkg/app/planfile"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/verdict"
)

type applyOptions struct {
	req      deploy.Request
	stdin    bool
	output   string
	detailed bool
	yes      bool
	podman   string
	rollback string
	// planFile is --plan: the saved plan to apply (or check, with --diff).
	planFile string
	// metricsFile makes a --diff a drift check (notify.go).
	metricsFile string
}

// define registers the flags of a plan or apply.
func (o *applyOptions) define(f *flags) {
	r, d := &o.req, &deploy.Defaults
	f.Bool(&r.Diff, "diff", false, "print the plan and stop; nothing changes, no lock is taken")
	f.Bool(&o.stdin, "stdin", false, "read specs from stdin (also: PATH \"-\"); an apply stores them in /etc/syslet/config.json (0600) for later plain runs, as a rollback stores there the generation it restores")
	f.String(&r.Root, "root", d.Root, "manage the files under `DIR` instead of / (no systemd or podman is read; only --diff)")
	f.String(&o.output, "output", outputText, "print as `FORMAT`: text; json (one JSON document on stdout: the verdict and exit code, the plan, and the result of an apply; the human plan and log go to stderr); or text+json (the text, and the same document as one line at the end of stderr, after the byte 0x1E: what syslet push reads; push says a rollback for the host, so the text leaves out the rollback's sentence and error line)")
	f.Bool(&o.detailed, "detailed-exitcode", false, "with --diff: exit 3 when changes are pending")
	f.Bool(&o.yes, "yes", false, "do not ask before applying (only asked when stdin and stderr are a terminal)")
	f.String(&r.Source, "source", "", "record `TEXT` as the specs' origin in the run journal (default: the path)")
	f.String(&r.Quadlet, "quadlet", d.Quadlet, "stage with the quadlet generator at `PATH`")
	f.Duration(&r.LockTimeout, "lock-timeout", d.LockTimeout, "wait at most `D` for another apply to finish (0: for ever)")
	f.Duration(&r.StartTimeout, "timeout", d.StartTimeout, "give a started or reloaded unit `D` to become active")
	f.Duration(&r.PullTimeout, "pull-timeout", d.PullTimeout, "give one image pull at most `D`")
	f.Duration(&r.StopTimeout, "stop-timeout", d.StopTimeout, "give one stop at most `D`")
	f.Duration(&r.ReloadTimeout, "reload-timeout", d.ReloadTimeout, "give the daemon-reload at most `D`")
	f.Duration(&r.DialTimeout, "dial-timeout", d.DialTimeout, "give connecting to systemd at most `D`")
	f.Duration(&r.ReadTimeout, "read-timeout", d.ReadTimeout, "give reading the host's state to plan, and each read of the health gate, at most `D`")
	f.String(&o.podman, "podman", "", "with --root: check the units against podman `VERSION` (default 5.4); on a host, syslet asks the host's podman for its version")
	f.Bool(&r.AllowRemovals, "allow-removals", false, "allow a plan that removes all managed units, or more than half of them when there are more than four (refused otherwise)")
	f.Bool(&r.Force, "force", false, "overwrite managed files that were edited by hand (drift)")
	f.String(&r.SavePlan, "out", "", "with --diff: save the plan to `FILE` (0600; - prints it on stdout and the human plan on stderr) with its input's digest and the host state it was made from, for --plan")
	f.String(&o.planFile, "plan", "", "apply exactly the plan saved in `FILE` (by --diff --out; - reads it from stdin, before the specs with --stdin), given the same input: refused, changing nothing, if the host or the input changed since; with --diff, only say whether it still holds")
	f.Bool(&r.KeepStage, "keep-stage", false, "keep the staging directory (the staged units and what podman's generator made of them) and print its path; a failed staging always keeps it, and the newest 5 kept ones are left")
	f.Int(&r.KeepBackups, "keep-backups", d.KeepBackups, "keep the newest `N` backups of each volume (syslet backups); an apply exports a volume before it deletes or recreates it")
	f.Bytes(&r.MaxBackupBytes, "max-backup-size", 0, "keep the backups under `BYTES` in all: a new backup removes the oldest of earlier runs until the rest fit (0: no bound but --keep-backups and the free space)")
	f.Bool(&r.NoBackup, "no-backup", false, "the data of the volumes this run deletes or recreates may go: export none of them first (the plan says so)")
	f.Bytes(&r.MaxInput, "max-input", d.MaxInput, "refuse spec input larger than `BYTES` (also for validate and render)")
	f.String(&o.metricsFile, "metrics-file", "", "with --diff: a drift check: ask each running container's readiness probe once, write the units that differ (by kind; probe: its probe fails), each probe's answer and latency, the time and the notification counters to `FILE` as Prometheus text (node_exporter's textfile collector), and send one drift notification when units first differ")
	o.defineGate(f)
}

// defineGate registers the health gate's and the rollback's flags, which
// an apply and syslet rollback share.
func (o *applyOptions) defineGate(f *flags) {
	r, d := &o.req, &deploy.Defaults
	f.Duration(&r.Soak, "soak", d.Soak, "after starting containers, require them to stay up (no restart, still active) for `D`; 0: only up")
	f.String(&o.rollback, "rollback", string(d.Rollback), fmt.Sprintf("what a failed health gate does: `POLICY` auto applies the newest kept generation again "+
		"(that of the last run that passed its gate): each container pinned to the image it ran then, each volume the failed run deleted or recreated filled again from its backup, nothing deleted "+
		"(exit %d; %d when the rollback fails too); with no generation kept, and with never, the host stays as the failed run left it (exit %d)",
		verdict.RolledBack.Exit(), verdict.RollbackFailed.Exit(), verdict.GateFailed.Exit()))
	f.Int(&r.KeepGenerations, "keep-generations", d.KeepGenerations, "keep the last `N` good generations to roll back to")
}

func parseApply(args []string, stderr io.Writer) (applyOptions, error) {
	return parseApplyAs("", args, stderr)
}

// parseApplyAs parses the flags of the apply-like command name (the
// default command, or update).
func parseApplyAs(name string, args []string, stderr io.Writer) (applyOptions, error) {
	var o applyOptions
	r := &o.req
	f := commandFlags(name)
	o.define(f)
	pos, err := parseInterspersed(f.FlagSet, args)
	if err != nil {
		return o, fmt.Errorf("%w: %w", errUsage, err)
	}
	if r.Path, err = oneSource(pos, o.stdin); err != nil {
		return o, err
	}
	if err := checkRunOutput(o.output); err != nil {
		return o, err
	}
	if o.detailed && !r.Diff {
		return o, fmt.Errorf("%w: --detailed-exitcode only applies with --diff", errUsage)
	}
	if err := o.checkSaved(); err != nil {
		return o, err
	}
	if o.metricsFile != "" && !r.Diff {
		return o, fmt.Errorf("%w: --metrics-file only applies with --diff (a drift check)", errUsage)
	}
	// Abs cleans: "/.", "//" and "/etc/.." all name the live host, and
	// are treated exactly like "/".
	if r.Root, err = filepath.Abs(r.Root); err != nil {
		return o, err
	}
	if err := o.checkGate(); err != nil {
		return o, err
	}
	if o.metricsFile != "" && r.Root != "/" {
		return o, fmt.Errorf("%w: --metrics-file checks the running host, not a tree (--root)", errUsage)
	}
	if o.podman != "" {
		if r.Root == "/" {
			return o, fmt.Errorf("%w: --podman only applies with --root: on a host, syslet checks against the podman the host runs", errUsage)
		}
		if r.Podman, err = podmanFlag(o.podman); err != nil {
			return o, err
		}
	}
	return o, nil
}

// checkSaved checks --out and --plan against the other flags: a plan is
// saved by a --diff, and a saved plan brings its own options.
func (o *applyOptions) checkSaved() error {
	r := &o.req
	switch {
	case r.SavePlan != "" && !r.Diff:
		return fmt.Errorf("%w: --out saves the plan of a --diff: add --diff (then apply it with --plan FILE)", errUsage)
	case r.SavePlan != "" && o.planFile != "":
		return fmt.Errorf("%w: --out and --plan both given: --diff --plan FILE checks a saved plan, it saves none", errUsage)
	case r.SavePlan == "-" && o.output == outputJSON:
		return fmt.Errorf("%w: --out - and --output json both print on stdout", errUsage)
	case o.planFile == "":
		return nil
	case r.Force || r.AllowRemovals:
		return fmt.Errorf("%w: --plan applies the options the plan was saved with: --force and --allow-removals go with --diff --out", errUsage)
	}
	return nil
}

// checkGate reads the gate flags into the request.
func (o *applyOptions) checkGate() error {
	var err error
	if o.req.Rollback, err = deploy.ParseRollback(o.rollback); err != nil {
		return fmt.Errorf("%w: --rollback: %v", errUsage, err)
	}
	if o.req.MaxBackupBytes < 0 {
		return fmt.Errorf("%w: --max-backup-size must not be negative", errUsage)
	}
	if o.req.KeepBackups < 0 {
		return fmt.Errorf("%w: --keep-backups must not be negative", errUsage)
	}
	if o.req.Soak < 0 || o.req.KeepGenerations < 1 {
		return fmt.Errorf("%w: --soak must not be negative and --keep-generations at least 1", errUsage)
	}
	return nil
}

func cmdApply(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseApply(args, stderr)
	if err != nil {
		return usage(stdout, stderr, "", err)
	}
	if needsRoot(lookup(""), o.req.Root, args, stderr) {
		return exitError
	}
	return applyParsed(o, stdin, stdout, stderr)
}

// cmdUpdate is an apply that also asks the registries whether the tags
// the running containers name moved (Request.Update).
func cmdUpdate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseApplyAs("update", args, stderr)
	if err == nil && (o.planFile != "" || o.req.SavePlan != "") {
		// A saved plan is checked against the host state it was made
		// from, which holds no registry answers yet.
		err = fmt.Errorf("%w: syslet update saves and applies no plan file (--out, --plan): run syslet update --diff, then syslet update", errUsage)
	}
	if err != nil {
		return usage(stdout, stderr, "update", err)
	}
	if needsRoot(lookup("update"), o.req.Root, args, stderr) {
		return exitError
	}
	o.req.Update = true
	return applyParsed(o, stdin, stdout, stderr)
}

// applyParsed runs an apply-like command whose flags are parsed.
func applyParsed(o applyOptions, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop, release := signals(stderr)
	defer release()
	req := o.req
	req.Stdin, req.Stop = stdin, stop
	if o.planFile != "" {
		// The plan was reviewed when it was saved: it is applied without a
		// prompt, as terraform applies a saved plan.
		var err error
		if req.Saved, req.Stdin, err = planfile.Open(o.planFile, stdin); err != nil {
			fmt.Fprintln(stderr, "syslet:", err)
			return exitError
		}
		req.SavedFile = o.planFile
	}
	req.Version = buildVersion().Version
	if !req.Diff && !o.yes && req.Path != "-" && req.Saved == nil && view.IsTerminal(stdin) && view.IsTerminal(stderr) {
		req.Confirm = func() bool { return confirm(stdin, stderr) }
	}
	req.AfterStep = testPause(stop, stderr)

	return runRequest(ctx, req, o, stdout, stderr)
}

// toldRollback reports whether the run's rollback was told already, so
// that its error, the same sentence, is not said again: a person's view
// ends with the rollback's own last word (ROLLED BACK, ROLLBACK FAILED),
// and with text+json syslet push says it for the host, from the record.
// The JSON view tells it in its document alone; the error says it there.
func toldRollback(o applyOptions, out *view.Outcome) bool {
	return out.Rollback != nil && o.output != outputJSON
}

// runRequest runs one plan or apply and maps what came of it to the exit
// code.
//
// An apply tells the targets of /etc/syslet/syslet.json what it does
// (started, then succeeded, failed or rolled-back), off its path: the run
// never waits for a notification, and the program waits at most
// notifyFlush for them after it. A --diff tells nothing, unless it is a
// drift check (--metrics-file).
func runRequest(ctx context.Context, req deploy.Request, o applyOptions, stdout, stderr io.Writer) int {
	var nt *notifier
	if !req.Diff || o.metricsFile != "" {
		nt = openNotifier(req.Root, stderr)
	}
	if !req.Diff && nt != nil {
		req.Started = nt.send
	}
	req.AskProbes = o.metricsFile != ""
	req.View = operationView(o, stdout, stderr)
	req.ShowSecrets = os.Getenv(view.ShowSecretsEnv) == "true"
	out, err := deploy.Run(ctx, req)
	if out.SavedDocument != nil {
		_, _ = stdout.Write(out.SavedDocument)
	}
	if err != nil && out.Verdict != verdict.Invalid && !toldRollback(o, out) { // the findings said it
		view.Error(stderr, "syslet", err)
	}
	switch {
	case o.metricsFile != "":
		driftCheck(o, out, nt, stderr)
	case !req.Diff:
		if ev, ok := out.Event(); ok {
			nt.send(ev)
		}
		nt.close()
	}
	code := out.Verdict.Exit()
	if code == exitOK && o.detailed && out.Pending() {
		return exitPending
	}
	return code
}

// The formats of --output of a run (an apply, update, rollback, --diff).
const (
	outputText     = "text"
	outputJSON     = "json"
	outputTextJSON = "text+json"
)

// checkRunOutput checks --output of a run.
func checkRunOutput(format string) error {
	switch format {
	case outputText, outputJSON, outputTextJSON:
		return nil
	}
	return fmt.Errorf("%w: --output must be text, json or text+json, got %q", errUsage, format)
}

// operationView is how the command line shows a run: for people, with
// the plan and the run's story on stdout; with --output json, the Outcome
// as the one document on stdout and the story on stderr; with text+json,
// as for people, and the Outcome as a record at the end of stderr; with
// --out -, stdout is the saved plan's alone.
func operationView(o applyOptions, stdout, stderr io.Writer) view.Operation {
	out := stdout
	if o.req.SavePlan == "-" {
		out = stderr
	}
	switch o.output {
	case outputJSON:
		return view.NewJSON(stdout, stderr)
	case outputTextJSON:
		return view.NewReported(out, stderr)
	}
	return view.NewHuman(out, stderr)
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
// signalled or killed, or the marker file it writes is removed (then it
// goes on with the next step): "N", or "rollback:N" to pause only in the
// rollback after a failed health gate. Only the integration tests set it:
// they kill syslet there to prove the next run resumes exactly, or change
// the host under it to prove what a failure in the next step puts back.
const testPauseEnv = "SYSLET_TEST_PAUSE_AFTER_STEP"

func testPause(stop <-chan struct{}, stderr io.Writer) func(step int, pass string) {
	want, spec := deploy.PassApply, os.Getenv(testPauseEnv)
	if s, ok := strings.CutPrefix(spec, deploy.PassRollback+":"); ok {
		want, spec = deploy.PassRollback, s
	}
	n, err := strconv.Atoi(spec)
	if err != nil || n <= 0 {
		return nil
	}
	return func(s int, pass string) {
		if s != n || pass != want {
			return
		}
		fmt.Fprintf(stderr, "syslet: test pause after step %d of the %s (pid %d)\n", n, pass, os.Getpid())
		marker := layout.TestPauseFile(n)
		_ = os.WriteFile(marker, []byte(strconv.Itoa(os.Getpid())), 0o644)
		deadline := time.After(10 * time.Minute)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-deadline:
				return
			case <-tick.C:
				if _, err := os.Lstat(marker); errors.Is(err, fs.ErrNotExist) {
					return
				}
			}
		}
	}
}
