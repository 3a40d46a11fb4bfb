package main

import (
	"fmt"
	"io"
	"os"
	"os/user"
	"time"

	"github.com/syslet/syslet/pkg/calendar"
	"github.com/syslet/syslet/webhookd/config"
	"github.com/syslet/syslet/webhookd/queue"
)

// openWindow is `webhookd --open-window REPO`: it writes the override
// that lets the running daemon apply the repository's commits outside its
// windows until --for from now, with who asked and why; the daemon reads
// it within seconds, and the deploy it lets through carries the record in
// its trigger. --for 0s removes it: the windows rule again. A file in the
// state directory, not a request to the daemon: it needs root on the host
// and no token, works whether or not the daemon runs, and survives a
// restart until it runs out.
func openWindow(cfg *config.Config, o options, stdout, stderr io.Writer) int {
	var repo *config.Repo
	for i := range cfg.Repos {
		if cfg.Repos[i].Name == o.openWindow {
			repo = &cfg.Repos[i]
		}
	}
	switch {
	case repo == nil:
		fmt.Fprintf(stderr, "webhookd: --open-window: no repository %q in %s\n", o.openWindow, o.config)
		return exitConfig
	case len(repo.MaintenanceWindows) == 0:
		fmt.Fprintf(stderr, "webhookd: --open-window: repository %q has no windows: its commits are applied as they come\n", repo.Name)
		return exitConfig
	case o.windowFor < 0:
		fmt.Fprintf(stderr, "webhookd: --for: must not be negative, got %s\n", o.windowFor)
		return exitConfig
	case o.windowFor > 0 && o.reason == "":
		fmt.Fprintln(stderr, "webhookd: --open-window: give --reason: the record says why the windows were opened")
		return exitConfig
	}
	now := time.Now().UTC().Truncate(time.Second)
	ov := queue.Override{Until: now.Add(o.windowFor), By: operator(), At: now, Reason: o.reason}
	if err := queue.WriteOverride(queue.OverrideFile(cfg.StateDir, repo.Name), ov); err != nil {
		fmt.Fprintln(stderr, "webhookd: --open-window:", err)
		return exitError
	}
	if o.windowFor == 0 {
		st := calendar.At(repo.MaintenanceWindows, now)
		fmt.Fprintf(stdout, "%s: override removed; the windows rule again (open now: %v, next opening %s)\n", repo.Name, st.Open, st.Next.Format("Mon 2006-01-02 15:04 MST"))
		return exitOK
	}
	fmt.Fprintf(stdout, "%s: windows open until %s, by %s: %s\n", repo.Name, ov.Until.Format(time.RFC3339), ov.By, ov.Reason)
	return exitOK
}

// operator is who runs the command: sudo's user when run through sudo,
// else the login name, else the uid.
func operator() string {
	if u := os.Getenv("SUDO_USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return fmt.Sprintf("uid %d", os.Getuid())
}
