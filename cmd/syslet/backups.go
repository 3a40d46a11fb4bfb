package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/syslet/syslet/pkg/app/deploy"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/redact"
)

// backupsOptions are the flags of syslet backups.
type backupsOptions struct{ output, root string }

func (o *backupsOptions) define(f *flags) {
	f.String(&o.output, "output", "text", "print as `FORMAT`: text or json")
	f.String(&o.root, "root", "/", "read the backups under `DIR` as if it were /")
}

// cmdBackups is `syslet backups [VOLUME]`: the volume backups kept, oldest
// first. It only reads, and never waits for the apply lock.
func cmdBackups(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var o backupsOptions
	f := commandFlags("backups")
	o.define(f)
	pos, err := parseInterspersed(f.FlagSet, args)
	if err == nil && len(pos) > 1 {
		err = fmt.Errorf("%w: one VOLUME at most, got %s", errUsage, strings.Join(pos, " "))
	}
	if err == nil && o.output != "text" && o.output != "json" {
		err = fmt.Errorf("%w: --output must be text or json, got %q", errUsage, o.output)
	}
	if err != nil {
		return usage(stdout, stderr, "backups", err)
	}
	root, err := filepath.Abs(o.root)
	if err != nil {
		view.Error(stderr, "syslet backups", err)
		return exitUsage
	}
	if needsRoot(lookup("backups"), root, args, stderr) {
		return exitError
	}
	volume := ""
	if len(pos) == 1 {
		volume = pos[0]
	}
	store := backup.For(root)
	es, refused, err := store.List(volume)
	if err != nil {
		view.Error(stderr, "syslet backups", err)
		return exitError
	}
	for _, r := range refused {
		fmt.Fprintf(stderr, "syslet backups: warning: %s in %s is not a backup syslet wrote: ignored\n", redact.Escape(r), store.Dir)
	}
	if o.output == "json" {
		if es == nil {
			es = []backup.Entry{}
		}
		return writeJSON(stdout, es)
	}
	if len(es) == 0 {
		fmt.Fprintf(stdout, "no backups in %s\n", store.Dir)
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VOLUME\tRUN\tTIME\tSIZE\tBACKUP")
	for _, e := range es {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", redact.Escape(e.Volume), redact.Escape(e.Run), e.Time.Local().Format("2006-01-02 15:04:05"), e.Size, redact.Escape(e.File))
	}
	tw.Flush()
	return exitOK
}

// restoreOptions are the flags of syslet restore.
type restoreOptions struct {
	req    deploy.RestoreRequest
	output string
}

func (o *restoreOptions) define(f *flags) {
	d := &deploy.Defaults
	f.String(&o.output, "output", "text", "print as `FORMAT`: text or json")
	f.Duration(&o.req.LockTimeout, "lock-timeout", d.LockTimeout, "wait at most `D` for an apply to finish (0: for ever)")
	f.Duration(&o.req.StartTimeout, "timeout", d.StartTimeout, "give each stopped and started unit `D`")
	f.Bool(&o.req.Diff, "diff", false, "only show the restore's plan; nothing changes")
}

// cmdRestore is `syslet restore VOLUME [BACKUP]`.
func cmdRestore(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var o restoreOptions
	f := commandFlags("restore")
	o.define(f)
	pos, err := parseInterspersed(f.FlagSet, args)
	if err == nil && (len(pos) < 1 || len(pos) > 2) {
		err = fmt.Errorf("%w: VOLUME and at most one BACKUP", errUsage)
	}
	if err == nil && o.output != "text" && o.output != "json" {
		err = fmt.Errorf("%w: --output must be text or json, got %q", errUsage, o.output)
	}
	if err != nil {
		return usage(stdout, stderr, "restore", err)
	}
	if needsRoot(lookup("restore"), "/", args, stderr) {
		return exitError
	}
	o.req.Volume = pos[0]
	if len(pos) == 2 {
		o.req.Backup = pos[1]
	}
	o.req.StopTimeout = o.req.StartTimeout
	ctx, stop, release := signals(stderr)
	defer release()
	o.req.Stop = stop
	o.req.View = view.NewHuman(stdout, stderr)
	if o.output == "text" {
		o.req.Planned = func(steps []string) { printRestorePlan(stdout, o.req.Volume, steps, o.req.Diff) }
	}
	res, err := deploy.Restore(ctx, o.req)
	if o.output == "json" && res != nil {
		writeJSON(stdout, res)
	} else if res != nil {
		printRestored(stdout, res)
	}
	if err != nil {
		view.Error(stderr, "syslet restore", err)
	}
	switch {
	case res != nil && res.Verdict != 0:
		return res.Verdict.Exit()
	case err != nil:
		return exitError // before the restore had a plan
	}
	return exitOK
}

// printRestorePlan writes what a restore will do, before it does it.
func printRestorePlan(w io.Writer, volume string, steps []string, diff bool) {
	fmt.Fprintf(w, "Restore plan for volume %s:\n", redact.Escape(volume))
	for i, s := range steps {
		fmt.Fprintf(w, "  %d. %s\n", i+1, redact.Escape(s))
	}
	if diff {
		fmt.Fprintln(w, "(--diff: nothing was changed)")
	}
	fmt.Fprintln(w)
}

func printRestored(w io.Writer, r *deploy.Restored) {
	if r.Kept != nil {
		fmt.Fprintf(w, "kept what volume %s held before as %s (%d bytes, sha256 %s)\n", redact.Escape(r.Volume), redact.Escape(r.Kept.File), r.Kept.Size, r.Kept.SHA256)
	}
	if r.From.SHA256 != "" {
		fmt.Fprintf(w, "restored volume %s from %s (%d bytes, sha256 %s)\n", redact.Escape(r.Volume), redact.Escape(r.From.File), r.From.Size, r.From.SHA256)
	}
	if len(r.Stopped) > 0 {
		fmt.Fprintf(w, "stopped around it: %s; started again: %s\n", strings.Join(r.Stopped, ", "), noneIfEmpty(r.Started))
	}
}

func noneIfEmpty(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
