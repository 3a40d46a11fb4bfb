package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
	"github.com/coreos/go-systemd/v22/journal"
	"github.com/rs/zerolog"

	"github.com/syslet/syslet/pkg/app/deploy"
	"github.com/syslet/syslet/webhookd"
	"github.com/syslet/syslet/webhookd/config"
)

// Exit codes (webhookd(8) lists them from these comments).
const (
	exitOK     = 0 // stopped by SIGTERM or SIGINT after a clean shutdown, or --check found the configuration valid
	exitError  = 1 // it could not start or serve (listening, the state directory)
	exitConfig = 2 // a usage or configuration error (each names its field)
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// Stamped by a release build (package release) with -ldflags -X.
var (
	version = "dev"
	commit  = "unknown"
)

type options struct {
	config      string
	check       bool
	notifyTest  bool
	logLevel    string
	lockTimeout time.Duration
	version     bool
	// openWindow names the repository whose windows --open-window opens
	// for windowFor (0: closes them again), because of reason.
	openWindow string
	windowFor  time.Duration
	reason     string
}

// flagSet defines webhookd's flags on o: the one home of their names,
// defaults and meanings (webhookd(8) is generated from it).
func flagSet(o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("webhookd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.config, "config", config.DefaultPath, "read the configuration (YAML) from `FILE`")
	fs.BoolVar(&o.check, "check", false, "validate the configuration (its secret, key and known_hosts files, and that a local repository exists) and exit; a remote repository is not contacted")
	fs.BoolVar(&o.notifyTest, "notify-test", false, "send a test event to every notification target of the configuration, print what came of each and exit (1 when one failed)")
	fs.StringVar(&o.logLevel, "log-level", "info", "log at `LEVEL`: debug, info, warn or error")
	fs.DurationVar(&o.lockTimeout, "lock-timeout", deploy.Defaults.LockTimeout, "let a deploy wait at most `D` for another apply on this host")
	fs.BoolVar(&o.version, "version", false, "print the version and commit, and exit")
	fs.StringVar(&o.openWindow, "open-window", "", "for an emergency: let the running daemon apply `REPO`'s commits outside its maintenance windows, from now for --for (0s closes it again), recording who and --reason; then exit")
	fs.DurationVar(&o.windowFor, "for", time.Hour, "with --open-window: keep the windows open for `D`")
	fs.StringVar(&o.reason, "reason", "", "with --open-window: why, as `TEXT` in the record (required unless --for 0s)")
	return fs
}

func parseArgs(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flagSet(&o, stderr)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if (f.Name == "for" || f.Name == "reason") && o.openWindow == "" {
			err = fmt.Errorf("--%s only applies with --open-window", f.Name)
		}
	})
	return o, err
}

// inJournal reports whether stderr is the systemd journal (webhookd runs
// as its unit, --check too as its ExecStartPre): then what it would say
// to a person is logged as JSON objects, like every other line of its
// journal.
func inJournal(stderr io.Writer) bool {
	ok, err := journal.StderrIsJournalStream()
	return stderr == io.Writer(os.Stderr) && err == nil && ok
}

// checked says that --check found the configuration file valid, with
// its notes.
func checked(file string, cfg *config.Config, notes []string, stdout io.Writer, log zerolog.Logger, json bool) {
	if json {
		log.Info().Str("config", file).Int("repos", len(cfg.Repos)).Str("listen", cfg.Listen).Msg("configuration OK")
		for _, n := range notes {
			log.Info().Str("config", file).Msg(n)
		}
		return
	}
	fmt.Fprintf(stdout, "%s: OK (%d repositories, listen %s)\n", file, len(cfg.Repos), cfg.Listen)
	for _, n := range notes {
		fmt.Fprintln(stdout, n)
	}
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintln(stderr, "webhookd:", err)
		return exitConfig
	}
	if o.version {
		fmt.Fprintf(stdout, "webhookd %s (commit %s)\n", version, commit)
		return exitOK
	}
	level, err := zerolog.ParseLevel(o.logLevel)
	if err != nil {
		fmt.Fprintln(stderr, "webhookd: --log-level:", err)
		return exitConfig
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano
	log := zerolog.New(stderr).Level(level).With().Timestamp().Logger()

	hostname, err := os.Hostname()
	if err != nil {
		fmt.Fprintln(stderr, "webhookd: hostname:", err)
		return exitError
	}
	cfg, err := config.Load(o.config, hostname)
	if err == nil && o.check {
		var notes []string
		if notes, err = cfg.CheckRemotes(o.config); err == nil {
			checked(o.config, cfg, notes, stdout, log, inJournal(stderr))
			return exitOK
		}
	}
	if err != nil {
		if inJournal(stderr) {
			log.Error().Err(err).Str("config", o.config).Msg("invalid configuration")
		} else {
			fmt.Fprintln(stderr, "webhookd:", err)
		}
		return exitConfig
	}
	if o.notifyTest {
		return notifyTest(cfg, hostname, stdout, stderr)
	}
	if o.openWindow != "" {
		return openWindow(cfg, o, stdout, stderr)
	}

	d, err := webhookd.New(cfg, webhookd.Options{
		Deployer: deployer{log: log, lockTimeout: o.lockTimeout, rollback: deploy.RollbackPolicy(cfg.Rollback), soak: cfg.Soak},
		Log:      log,
	})
	if err != nil {
		log.Error().Err(err).Msg("starting")
		return exitError
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		log.Error().Err(err).Msg("listening")
		return exitError
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		daemon.SdNotify(false, daemon.SdNotifyStopping)
	}()
	stopWatchdog := watchdog(d, log)
	defer stopWatchdog()

	err = d.Serve(ctx, ln, func() {
		if _, err := daemon.SdNotify(false, daemon.SdNotifyReady); err != nil {
			log.Warn().Err(err).Msg("notifying systemd")
		}
	})
	if err != nil {
		log.Error().Err(err).Msg("serving")
		return exitError
	}
	return exitOK
}

// watchdog pings systemd's watchdog while the daemon answers its own
// health check, including during a graceful stop that waits for a deploy.
// A daemon whose HTTP handlers or status locks hang stops pinging, and
// systemd restarts it.
func watchdog(d *webhookd.Daemon, log zerolog.Logger) func() {
	interval, err := daemon.SdWatchdogEnabled(false)
	if err != nil || interval <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(interval / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if healthy(d) {
				daemon.SdNotify(false, daemon.SdNotifyWatchdog)
			} else {
				log.Error().Msg("health check failed: not pinging the watchdog")
			}
		}
	}()
	return func() { close(done) }
}

// healthy reports whether the daemon's status, which every request and
// deploy updates under its locks, can still be read in time.
func healthy(d *webhookd.Daemon) bool {
	ok := make(chan struct{}, 1)
	go func() {
		d.Status()
		ok <- struct{}{}
	}()
	select {
	case <-ok:
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}
