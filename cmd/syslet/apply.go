package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/plan"
)

type applyOptions struct {
	diff     bool
	stdin    bool
	root     string
	output   string
	detailed bool
	quadlet  string
	timeout  time.Duration
	path     string
	maxInput int64
	// allowRemovals lifts the mass-removal guard (plan.GuardRemovals).
	allowRemovals bool
	// force overwrites managed files that were edited by hand (drift).
	force bool
}

func parseApply(args []string, stderr io.Writer) (applyOptions, error) {
	var o applyOptions
	fs := newFlagSet("syslet", stderr)
	fs.BoolVar(&o.diff, "diff", false, "")
	fs.BoolVar(&o.stdin, "stdin", false, "")
	fs.StringVar(&o.root, "root", "/", "")
	fs.StringVar(&o.output, "output", "text", "")
	fs.BoolVar(&o.detailed, "detailed-exitcode", false, "")
	fs.StringVar(&o.quadlet, "quadlet", "/usr/libexec/podman/quadlet", "")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "")
	fs.Int64Var(&o.maxInput, "max-input", spec.DefaultMaxInput, "")
	fs.BoolVar(&o.allowRemovals, "allow-removals", false, "")
	fs.BoolVar(&o.force, "force", false, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return o, fmt.Errorf("%w: %v", errUsage, err)
	}
	if o.path, err = oneSource(pos, o.stdin); err != nil {
		return o, err
	}
	o.stdin = o.path == "-"
	if o.output != "text" && o.output != "json" {
		return o, fmt.Errorf("%w: --output must be text or json, got %q", errUsage, o.output)
	}
	if o.detailed && !o.diff {
		return o, fmt.Errorf("%w: --detailed-exitcode only applies with --diff", errUsage)
	}
	// Abs cleans: "/.", "//" and "/etc/.." all name the live host, and
	// are treated exactly like "/".
	if o.root, err = filepath.Abs(o.root); err != nil {
		return o, err
	}
	return o, nil
}

// hostless reports whether syslet manages a directory rather than the
// running system: then neither systemd nor podman is read or changed.
func (o applyOptions) hostless() bool { return o.root != "/" }

func cmdApply(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseApply(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "syslet:", err)
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	l, err := load(o.path, o.root, stdin, o.maxInput)
	if err != nil {
		fmt.Fprintln(stderr, "syslet:", err)
		return exitError
	}
	if l.report.HasErrors() {
		printFindings(stderr, l.report)
		return exitInvalid
	}
	printFindings(stderr, l.report) // warnings only

	h, err := openHost(o)
	if err != nil {
		fmt.Fprintln(stderr, "syslet:", err)
		return exitError
	}
	defer h.Close()

	if !o.diff {
		unlock, err := lockApply(o.root, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "syslet:", err)
			return exitError
		}
		defer unlock()
	}

	obs, err := plan.Observe(ctx, h.sources(), l.out)
	if err != nil {
		fmt.Fprintln(stderr, "syslet:", err)
		return exitError
	}
	p := plan.BuildWith(l.out, obs, plan.Options{Force: o.force})
	if !o.allowRemovals {
		p.GuardRemovals()
	}
	if err := h.stage(ctx, p, l.out); err != nil {
		printPlan(stdout, o, l, p)
		fmt.Fprintln(stderr, "syslet: staging failed, nothing was changed:")
		fmt.Fprintln(stderr, err)
		return exitError
	}
	printPlan(stdout, o, l, p)
	if !p.Appliable() {
		fmt.Fprintf(stderr, "syslet: the plan has %d refusal(s); nothing was changed\n", len(p.Refusals))
		return exitError
	}
	if o.diff {
		if o.detailed && (!p.Empty() || p.Drifted()) {
			return exitPending
		}
		return exitOK
	}
	if o.stdin {
		if err := storeStdin(o.root, l.srcs); err != nil {
			fmt.Fprintln(stderr, "syslet:", err)
			return exitError
		}
	}
	return execute(ctx, o, h, p, stdout, stderr)
}

func printPlan(w io.Writer, o applyOptions, l *loaded, p *plan.Plan) {
	if o.output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(p)
		return
	}
	what := "host"
	if o.hostless() {
		what = o.root + " (no host: systemd and podman are not read; installed units are assumed to run as declared)"
	}
	fmt.Fprintf(w, "syslet plan: %d spec(s) from %d source(s) against %s\n\n", len(l.specs), len(l.srcs), what)
	p.Format(w)
}

// storeStdin keeps the validated stream of an apply from stdin, so a
// later plain `syslet` re-applies the same specs.
func storeStdin(root string, srcs []spec.Source) error {
	var data []byte
	for _, s := range srcs {
		data = append(data, s.Data...)
		data = append(data, '\n')
	}
	r := fsroot.New(root)
	if err := r.WriteFile(spec.DefaultSource, data, 0o600); err != nil {
		return fmt.Errorf("storing specs from stdin: %w", err)
	}
	return nil
}

// lockApply takes the apply lock: one apply at a time per host. A second
// apply waits and says so; --diff and validate never take it.
func lockApply(root string, stderr io.Writer) (func(), error) {
	dir := filepath.Join(root, "run", "syslet")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating lock directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "apply.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening apply lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("taking apply lock: %w", err)
		}
		fmt.Fprintln(stderr, "syslet: another apply is running; waiting for it to finish")
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("taking apply lock: %w", err)
		}
	}
	return func() { f.Close() }, nil
}
