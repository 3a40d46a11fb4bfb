package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/fleet"
	"github.com/syslet/syslet/pkg/push"
	"github.com/syslet/syslet/pkg/sshcommand"
)

type pushOptions struct {
	diff           bool
	parallel       int
	hostsDir       string
	selectSpec     string         // --select as given
	selector       fleet.Selector // only the host directories whose labels match
	remoteCommand  string
	knownHosts     string
	acceptNew      bool
	identities     []string
	sshConfig      string
	connectTimeout time.Duration
	commandTimeout time.Duration
	allowEmpty     bool
	// out (with --diff) saves each host's plan as out/<host>.plan;
	// planDir applies (with --diff: checks) the plans saved there.
	out, planDir string
	targets      []string
	path         string // "" with --hosts-dir
	// The rollout: --batch, --max-failed (as given: the default depends
	// on --batch), --pause; and --output.
	batch, maxFailed string
	pause            time.Duration
	output           string
	strategy         push.Strategy
	// verify is an allowed-signers file: the specs must be a clean
	// checkout whose HEAD one of its keys signed.
	verify string
}

// pushNotes are push's notes in --help, the reference and syslet(1).
const pushNotes = `Exit codes: 0 every host applied, was unchanged or (--diff) planned; 1 a host failed, was
unreachable, refused its host key or its stale saved plan, or was not reached; 2 the specs are
invalid or empty (then nothing was sent); 4 each host that failed rolled back and serves its last
good generation (as a local apply that rolls back exits 4; a rollout stops at the first such
host); 5 a host's rollback failed too (it needs a person); 130 interrupted.
Each host holds what it started to its health gate and, when a container fails it, rolls back to
its last good generation (its syslet's defaults: --rollback=auto, --soak 5s). Each host's syslet
runs with --output text+json added: its text is shown as it comes, and how its run ended is read
from the JSON document it reports at the end, never from its words (a host's syslet older than
this one refuses the flag: exit 64).
A rollout (--batch 1,25%: one host, then a quarter of the targets at a time, the last size
repeating; a percentage is rounded down, at least one host) starts a batch only when the one
before has ended, and starts no further host once more hosts have failed (failed, rolled back,
refused a stale plan, were unreachable) than --max-failed allows (default 0 with --batch: the
first failure stops it): the rest are "not reached" and are never connected to. --pause D waits
after each batch but the last, then looks at its hosts again, read-only ("syslet status" and
"syslet --diff --detailed-exitcode" with the same specs; status runs as the program of
--remote-command without the flags after it): a container down or restarted since its health
gate, or a host that no longer matches its specs, counts as failed. A first Ctrl-C starts no
more hosts (during a pause: ends it and the rollout), a second one forwards SIGINT to the
running ones.
--output json prints one JSON document when every host's turn is over: every host with its
batch, outcome (applied, unchanged, planned, failed, refused, unreachable, not reached, rolled
back, rollback failed, stale), its syslet's verdict, exit code, run IDs and durations, and why
the rollout stopped; the hosts' output and the table then go to stderr.
push --diff --out DIR saves each host's plan as DIR/<host>.plan; push --plan DIR with the same
specs applies on each host exactly its saved plan, and a host whose state or input changed since
refuses its own (the table says "stale"; nothing changed there) while the others go ahead.`

// define registers the flags of syslet push.
func (o *pushOptions) define(f *flags) {
	f.Bool(&o.diff, "diff", false, "plan only, on every host")
	f.String(&o.hostsDir, "hosts-dir", "", "take each host's specs from `DIR`/<host>/ plus DIR/common/")
	f.String(&o.selectSpec, "select", "", "with --hosts-dir: push only to the hosts whose labels (DIR/<host>/labels, key=value lines) match `SELECTOR`: key=value or key!=value, comma-separated, all must hold (role=web,site=fra)")
	f.Int(&o.parallel, "parallel", 4, "work on `N` hosts at once")
	f.String(&o.remoteCommand, "remote-command", "syslet", "run `CMD` on the hosts (e.g. \"sudo syslet\")")
	f.String(&o.sshConfig, "F", "", "read ssh settings from `FILE` (default ~/.ssh/config, /etc/ssh/ssh_config)")
	f.Each("i", "authenticate with the private key `FILE` (repeatable; IdentityFile and SSH_AUTH_SOCK are used too)", func(s string) error { o.identities = append(o.identities, s); return nil })
	f.String(&o.knownHosts, "known-hosts", "", "check host keys against `FILE` only (default ~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts)")
	f.Bool(&o.acceptNew, "accept-new", false, "pin the key of a host not in known_hosts yet (never a changed key)")
	f.Duration(&o.connectTimeout, "connect-timeout", 15*time.Second, "give connect, host key check and login at most `D`")
	f.Duration(&o.commandTimeout, "command-timeout", 30*time.Minute, "give the remote plan or apply at most `D` (0: no limit)")
	f.Bool(&o.allowEmpty, "allow-empty", false, "push a set with no specs (removes every removable syslet unit)")
	f.String(&o.out, "out", "", "with --diff: save each host's plan as `DIR`/<host>.plan (0600), for --plan DIR")
	f.String(&o.planDir, "plan", "", "apply on each host exactly its plan saved in `DIR`/<host>.plan (by push --diff --out DIR), given the same specs; a host whose state or input changed since refuses its plan (\"stale\" in the table) and the others go ahead; with --diff, only check whether each still holds")
	f.String(&o.batch, "batch", "", "roll out in batches of these sizes, in target order: `LIST` of host counts or percentages of the targets, the last repeating (1,25%: one host, then a quarter at a time)")
	f.String(&o.maxFailed, "max-failed", "", "start no further host once more than `N` hosts (or N% of the targets) have failed (default with --batch: 0, the first failure stops the rollout)")
	f.Duration(&o.pause, "pause", 0, "with --batch: wait `D` after each batch but the last, then look at its hosts again (services up and not restarted, no drift) before the next")
	f.String(&o.verify, "verify", "", "send nothing unless the specs are a clean git checkout whose HEAD carries a good signature by a key of `FILE`: an allowed-signers file (git's format, as webhookd's verify.allowedSigners) or an OpenPGP public keyring (gpg --export, as verify.keyring)")
	f.String(&o.output, "output", "text", "print as `FORMAT`: text, or json (one document on stdout after the last host: each host's batch, outcome, verdict, run IDs and durations, and why the rollout stopped; the hosts' output and the table go to stderr)")
}

// parsePush parses `syslet push` arguments. Without --hosts-dir the last
// positional argument is the spec PATH ("-" for stdin) and the others are
// targets; with it every positional argument is a target, and none means
// every host directory but common/.
func parsePush(args []string, stderr io.Writer) (pushOptions, error) {
	o := pushOptions{}
	f := commandFlags("push")
	o.define(f)
	pos, err := parseInterspersed(f.FlagSet, args)
	if err != nil {
		return o, fmt.Errorf("%w: %w", errUsage, err)
	}
	if o.parallel < 1 {
		return o, fmt.Errorf("%w: --parallel must be at least 1, got %d", errUsage, o.parallel)
	}
	if o.connectTimeout <= 0 || o.commandTimeout < 0 {
		return o, fmt.Errorf("%w: --connect-timeout must be positive and --command-timeout not negative", errUsage)
	}
	if strings.TrimSpace(o.remoteCommand) == "" {
		return o, fmt.Errorf("%w: --remote-command is empty", errUsage)
	}
	switch {
	case o.out != "" && !o.diff:
		return o, fmt.Errorf("%w: --out saves the plans of a --diff: add --diff (then apply them with --plan DIR)", errUsage)
	case o.out != "" && o.planDir != "":
		return o, fmt.Errorf("%w: --out and --plan both given", errUsage)
	}
	if err := o.parseRollout(); err != nil {
		return o, err
	}
	if o.verify != "" && len(pos) > 0 && o.hostsDir == "" && pos[len(pos)-1] == "-" {
		return o, fmt.Errorf("%w: --verify checks a git checkout: specs from stdin cannot be verified", errUsage)
	}
	if o.selectSpec != "" {
		if o.selector, err = fleet.ParseSelector(o.selectSpec); err != nil {
			return o, fmt.Errorf("%w: --select: %v", errUsage, err)
		}
		if o.hostsDir == "" {
			return o, fmt.Errorf("%w: --select picks host directories by their labels: give --hosts-dir too", errUsage)
		}
	}
	if o.hostsDir != "" {
		o.targets = pos
	} else {
		if len(pos) < 2 {
			return o, fmt.Errorf("%w: syslet push needs TARGET… PATH (or --hosts-dir DIR [TARGET…])", errUsage)
		}
		o.targets, o.path = pos[:len(pos)-1], pos[len(pos)-1]
	}
	seen := map[string]bool{}
	for _, t := range o.targets {
		if seen[t] {
			return o, fmt.Errorf("%w: target %q given twice", errUsage, t)
		}
		seen[t] = true
		if _, _, _, err := push.ParseTarget(t); err != nil {
			return o, fmt.Errorf("%w: %v", errUsage, err)
		}
	}
	return o, nil
}

// parseRollout reads --batch, --max-failed, --pause and --output into
// the strategy.
func (o *pushOptions) parseRollout() error {
	if o.output != "text" && o.output != "json" {
		return fmt.Errorf("%w: --output must be text or json, got %q", errUsage, o.output)
	}
	s := &o.strategy
	if o.batch != "" {
		sizes, err := push.ParseSizes(o.batch)
		if err != nil {
			return fmt.Errorf("%w: --batch: %v", errUsage, err)
		}
		s.Batches, s.MaxFailed = sizes, &push.Size{}
	}
	if o.maxFailed != "" {
		n, err := push.ParseSize(o.maxFailed, 0)
		if err != nil {
			return fmt.Errorf("%w: --max-failed: %v", errUsage, err)
		}
		s.MaxFailed = &n
	}
	switch {
	case o.pause < 0:
		return fmt.Errorf("%w: --pause must not be negative", errUsage)
	case o.pause > 0 && o.batch == "":
		return fmt.Errorf("%w: --pause waits between batches: give --batch too", errUsage)
	case o.pause > 0 && o.diff:
		return fmt.Errorf("%w: --pause looks at what a batch applied: with --diff nothing is applied", errUsage)
	}
	s.Pause = o.pause
	s.StatusCommand = statusCommand(o.remoteCommand)
	s.DiffCommand = o.remoteCommand + " " + strings.Join(sshcommand.PlanExit, " ")
	return nil
}

// statusCommand is the health read of a pause: the remote command up to
// its program (the word named syslet: "sudo syslet --soak 30s" → "sudo
// syslet"), since flags after it are the plan's and apply's, which
// status does not take; then the subcommand.
func statusCommand(remote string) string {
	words := strings.Fields(remote)
	for i, w := range words {
		if path.Base(w) == sshcommand.Program {
			words = words[:i+1]
			break
		}
	}
	return strings.Join(append(words, sshcommand.Status...), " ")
}

// command is what runs on each host: the remote program with the flags of
// an unattended plan or apply from stdin, exactly as `syslet ssh-command`
// allows them.
func (o pushOptions) command() string {
	switch {
	case o.planDir != "" && o.diff:
		return o.remoteCommand + " " + strings.Join(sshcommand.PlanCheck, " ")
	case o.planDir != "":
		return o.remoteCommand + " " + strings.Join(sshcommand.PlanApply, " ")
	case o.out != "":
		return o.remoteCommand + " " + strings.Join(sshcommand.PlanSave, " ")
	case o.diff:
		return o.remoteCommand + " " + strings.Join(sshcommand.Plan, " ")
	}
	return o.remoteCommand + " " + strings.Join(sshcommand.Apply, " ")
}

func cmdPush(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parsePush(args, stderr)
	if err != nil {
		return usage(stdout, stderr, "push", err)
	}
	if o.hostsDir != "" && len(o.targets) == 0 {
		if o.targets, err = hostDirs(o.hostsDir); err != nil {
			view.Error(stderr, "syslet push", err)
			return exitError
		}
	}
	if o.selector != nil {
		if o.targets, err = selectHosts(o.hostsDir, o.targets, o.selector, stderr); err != nil {
			view.Error(stderr, "syslet push", err)
			return exitError
		}
	}
	// 0. With --verify, who signed what is about to be sent, before it is read.
	if o.verify != "" && !verifyPush(o, stderr) {
		return exitError
	}
	// 1. Every host's specs, read and validated here before any connection.
	streams, code := pushStreams(o, stdin, stderr)
	if code != exitOK {
		return code
	}
	var plans map[string][]byte
	if o.planDir != "" {
		var ok bool
		if plans, ok = savedPlans(o.planDir, o.targets, streams, stderr); !ok {
			fmt.Fprintln(stderr, "syslet push: nothing was sent")
			return exitError
		}
	}
	// 2. Where and how to connect; passphrases are asked now, once each.
	c, err := connect(o, stderr)
	if err != nil {
		view.Error(stderr, "syslet push", err)
		return exitError
	}
	defer c.close()
	jobs, ok := c.jobs(o, streams, plans, stderr)
	if !ok {
		return exitError
	}
	// 3. Fan out; 4. say what came of it.
	// With --output json stdout holds the document alone: the hosts'
	// output and the table go to stderr.
	human := stdout
	if o.output == "json" {
		human = stderr
	}
	rep, interrupted := fanOut(o, jobs, c.hostKeys(o, stderr), human, stderr)
	return pushReport(o, rep, interrupted, human, stdout, stderr)
}

// verifyPush checks --verify: the specs about to be read are a clean
// checkout whose HEAD a key of the file signed. It says who, or why not.
func verifyPush(o pushOptions, stderr io.Writer) bool {
	dir := o.path
	if o.hostsDir != "" {
		dir = o.hostsDir
	}
	s, commit, err := verifyCheckout(dir, o.verify)
	if err != nil {
		view.Error(stderr, "syslet push", err)
		fmt.Fprintln(stderr, "syslet push: nothing was sent")
		return false
	}
	view.Printf(stderr, "syslet push: HEAD %s signed by %s\n", commit[:min(12, len(commit))], s.String())
	return true
}

// fanOut runs the rollout. The first Ctrl-C starts no more hosts and lets
// the running ones finish; a second one asks them to stop after their
// current action. It reports whether an interrupt came.
func fanOut(o pushOptions, jobs []push.Job, hk *push.HostKeys, human, stderr io.Writer) (push.Report, bool) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	abort := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if _, ok := <-sigs; !ok {
			return
		}
		cancel(errors.New("interrupted"))
		fmt.Fprintln(stderr, "syslet push: interrupted: starting no more hosts; running ones finish (interrupt again to stop them after their current action)")
		if _, ok := <-sigs; !ok {
			return
		}
		close(abort)
		fmt.Fprintln(stderr, "syslet push: interrupted again: asking running hosts to stop after their current action")
	}()
	fmt.Fprintf(stderr, "syslet push: %s on %d host(s), %d at a time%s\n", o.command(), len(jobs), min(o.parallel, len(jobs)), o.rolloutLine(len(jobs)))
	rep := push.Rollout(ctx, jobs, push.Options{
		Command:        o.command(),
		Parallel:       o.parallel,
		ConnectTimeout: o.connectTimeout,
		CommandTimeout: o.commandTimeout,
		HostKeys:       hk,
		Stdout:         human,
		Stderr:         stderr,
		Abort:          abort,
		Capture:        o.out != "",
		Log:            stderr,
	}, o.strategy)
	return rep, ctx.Err() != nil
}

// pushReport keeps the plans a --diff --out made, prints the result table
// for people (human) and, with --output json, the document on stdout,
// and returns push's exit code.
func pushReport(o pushOptions, rep push.Report, interrupted bool, human, stdout, stderr io.Writer) int {
	var saved []string
	if o.out != "" {
		saved = keepPlans(o.out, rep.Results, stderr)
	}
	fmt.Fprintln(human)
	push.WriteTable(human, rep)
	if len(saved) > 0 {
		fmt.Fprintf(human, "Saved %d plan(s): %s (apply with: syslet push --plan %s and the same specs)\n", len(saved), strings.Join(saved, ", "), o.out)
	}
	code := rep.Exit(interrupted)
	if o.output == "json" {
		doc := rep.Document(o.command())
		doc.ExitCode = code
		if writeJSON(stdout, doc) != exitOK {
			return exitError
		}
	}
	return code
}

// rolloutLine describes the strategy for the line push starts with.
func (o pushOptions) rolloutLine(n int) string {
	s := o.strategy
	var parts []string
	if len(s.Batches) > 0 {
		parts = append(parts, fmt.Sprintf("in %d batch(es) of %s", len(push.Batches(n, s.Batches)), o.batch))
	}
	if s.MaxFailed != nil {
		parts = append(parts, fmt.Sprintf("stopping once more than %d host(s) have failed (--max-failed %s)", s.MaxFailed.Of(n), s.MaxFailed))
	}
	if s.Pause > 0 {
		parts = append(parts, fmt.Sprintf("pausing %s after each batch", s.Pause))
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}
