package deploy

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/verdict"
)

// Restoring a volume from its backup (`syslet restore VOLUME [BACKUP]`).
// Under the apply lock, the services of the containers that mount the
// volume are stopped; what the volume holds now, if anything, is backed
// up in its turn (nothing is lost by a restore either) and the volume
// removed; it is created again — by its quadlet service when systemd has
// one, so it gets its unit's options, else with podman's defaults — and
// the backup's tar imported into it; the services that were running are
// started again.

// Volumes is what a restore asks of podman besides an apply's needs.
type Volumes interface {
	ImportVolume(ctx context.Context, name string, r io.Reader) error
	CreateVolume(ctx context.Context, name string) error
	// VolumeUsers lists the services of the containers mounting the
	// volume, and the containers no service runs.
	VolumeUsers(ctx context.Context, name string) (services, others []string, err error)
}

// RestoreRequest is one restore.
type RestoreRequest struct {
	// Root is the host's root ("/"; tests use a scratch tree with Host).
	Root   string
	Volume string
	// Backup is a backup's file name as `syslet backups` lists it; ""
	// takes the newest backup of Volume.
	Backup string
	// LockTimeout, StopTimeout and StartTimeout are an apply's.
	LockTimeout, StopTimeout, StartTimeout time.Duration
	Stop                                   <-chan struct{}
	// View hears the wait for the lock.
	View view.Operation
	// Host opens the running system (nil: OpenLive).
	Host func(ctx context.Context, req *Request) (*Live, error)
	// Diff only plans the restore: Restored.Plan says what it would do,
	// and nothing changes.
	Diff bool
	// Planned, when set, hears the plan before anything changes.
	Planned func(steps []string)
}

// Restored is what a restore did.
type Restored struct {
	Run    string       `json:"run"`
	Volume string       `json:"volume"`
	From   backup.Entry `json:"from"`
	// Kept is the backup taken of what the volume held before (nil: it
	// was absent or empty).
	Kept *backup.Entry `json:"kept,omitempty"`
	// Plan is what the restore does, step by step, as it was planned
	// before anything changed.
	Plan []string `json:"plan,omitempty"`
	// Stopped are the services stopped around the import; Started those
	// of them started again (the ones that were running).
	Stopped []string `json:"stopped,omitempty"`
	Started []string `json:"started,omitempty"`
}

// Restore brings a volume's backup back into it.
func Restore(ctx context.Context, rr RestoreRequest) (*Restored, error) {
	if rr.Root == "" {
		rr.Root = Defaults.Root
	}
	if rr.View == nil {
		rr.View = view.NewHuman(io.Discard, io.Discard)
	}
	for _, d := range []*time.Duration{&rr.StopTimeout, &rr.StartTimeout} {
		if *d == 0 {
			*d = executor.DefaultStopTimeout
		}
	}
	store := backup.For(rr.Root)
	name, err := pick(store, rr.Volume, rr.Backup)
	if err != nil {
		return nil, err
	}
	req := &Request{Root: rr.Root, Host: rr.Host}
	req.defaults()
	if req.hostless() {
		return nil, errors.New("a restore needs the running host: --root is for listing backups only")
	}
	open := req.Host
	if open == nil {
		open = OpenLive
	}
	live, err := open(ctx, req)
	if err != nil {
		return nil, err
	}
	defer live.Systemd.Close()
	vols, ok := live.Podman.(Volumes)
	if !ok {
		return nil, errors.New("this podman adapter cannot import volumes")
	}
	out := &Restored{Run: runlog.NewRunID(time.Now()), Volume: rr.Volume}
	lk, err := acquire(ctx, rr.Stop, rr.Root, rr.LockTimeout, Holder{PID: os.Getpid(), Since: time.Now(), Source: "restore " + rr.Volume, Run: out.Run}, rr.View)
	if err != nil {
		return nil, err
	}
	defer lk.unlock()

	// A run that left work undone is finished first: a restore journalled
	// after it would hide it from the next run, which resumes it.
	jr := runlog.Open(rr.Root)
	runs, err := jr.Recent()
	if err != nil {
		return nil, err
	}
	if u := unfinished(runs); u != nil {
		return nil, fmt.Errorf("run %s did not finish: run syslet (it resumes it) before restoring a volume; nothing changed", u.Run)
	}

	// Opened under the lock: no apply writes the directory meanwhile.
	f, from, err := store.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out.From = from

	planned := func(steps []string) bool {
		out.Plan = steps
		if rr.Planned != nil {
			rr.Planned(steps)
		}
		return !rr.Diff
	}
	res, err := restoreInto(ctx, live, vols, store, out, f, rr.StopTimeout, rr.StartTimeout, planned)
	if rr.Diff || res == nil && err != nil && out.Plan == nil {
		return res, err
	}
	// Journalled like a run, once it is over: `syslet history` lists it,
	// with the backup it brought back.
	end := runlog.Record{Result: verdict.Applied.Journal()}
	if err != nil {
		end = runlog.Record{Result: verdict.Failed.Journal(), Error: err.Error()}
	} else {
		end.Restored = []backup.Entry{out.From}
	}
	if _, jerr := jr.Record(runlog.Record{Run: out.Run, PID: os.Getpid(), Source: "restore volume " + out.Volume + " from " + out.From.File}, end); jerr != nil {
		rr.View.Warning("the restore is not in the journal: " + jerr.Error())
	}
	return res, err
}

// restoreInto brings the backup read from f (out.From) into out.Volume
// under a held lock: the services of the containers mounting it are
// stopped, the volume replaced (what it held kept in a backup of its
// own), and the services that were running started again. A container
// no service runs is not stopped behind systemd's back: the volume is
// then left unchanged.
//
// planned, when set, hears the plan once the host is read and before
// anything changes; it returns false to change nothing (a --diff).
func restoreInto(ctx context.Context, live *Live, vols Volumes, store backup.Store, out *Restored, f io.Reader, stopTimeout, startTimeout time.Duration, planned func([]string) bool) (*Restored, error) {
	services, others, err := vols.VolumeUsers(ctx, out.Volume)
	if err != nil {
		return nil, err
	}
	if len(others) > 0 {
		return nil, fmt.Errorf("volume %s is mounted by %s, which no systemd service runs: stop and remove it first; nothing changed", out.Volume, strings.Join(others, ", "))
	}
	slices.Sort(services)
	services = slices.Compact(services)
	before, err := live.Systemd.Health(ctx, services)
	if err != nil {
		return nil, err
	}
	if planned != nil && !planned(restoreSteps(out, services)) {
		return out, nil
	}
	if err := jobs(ctx, live.Systemd, host.JobStop, services, stopTimeout); err != nil {
		return out, fmt.Errorf("stopping the users of volume %s: %w; the volume is unchanged", out.Volume, err)
	}
	out.Stopped = services
	restoreErr := replace(ctx, live, vols, store, out, f, startTimeout)
	var again []string
	for _, s := range services {
		if h := before[s]; h.ActiveState == "active" || h.ActiveState == "activating" || h.ActiveState == "reloading" {
			again = append(again, s)
		}
	}
	startErr := jobs(ctx, live.Systemd, host.JobStart, again, startTimeout)
	if startErr == nil {
		out.Started = again
	}
	return out, errors.Join(restoreErr, startErr)
}

// restoreSteps is the plan of a restore, for people.
func restoreSteps(out *Restored, services []string) []string {
	var steps []string
	if len(services) > 0 {
		steps = append(steps, "stop "+strings.Join(services, ", ")+" (the containers mounting volume "+out.Volume+")")
	}
	return append(steps,
		"back up what volume "+out.Volume+" holds now, if it exists, and remove it",
		"create volume "+out.Volume+" again (through "+out.Volume+"-volume.service when systemd has it, else with podman's defaults)",
		fmt.Sprintf("import backup %s (%s) into it", out.From.File, backup.Size(out.From.Size)),
		"start again those of the stopped services that were running")
}

// pick is the file name of the backup to restore: the one named, which
// must be volume's, or volume's newest.
func pick(store backup.Store, volume, name string) (string, error) {
	if name != "" {
		if !strings.HasSuffix(strings.TrimSuffix(name, ".tar"), "_"+volume) {
			return "", fmt.Errorf("backup %s is not one of volume %s (see syslet backups)", name, volume)
		}
		return name, nil
	}
	es, _, err := store.List(volume)
	if err != nil {
		return "", err
	}
	if len(es) == 0 {
		return "", fmt.Errorf("no backup of volume %s in %s", volume, store.Dir)
	}
	return es[len(es)-1].File, nil
}

// replace backs up what the volume holds, creates it anew and imports
// the backup read from r into it.
func replace(ctx context.Context, live *Live, vols Volumes, store backup.Store, out *Restored, r io.Reader, timeout time.Duration) error {
	sizes, err := live.Podman.VolumeSizes(ctx)
	if err != nil {
		return err
	}
	if _, exists := sizes[out.Volume]; exists {
		kept, err := store.Save(out.Run, out.Volume, func(w io.Writer) error { return live.Podman.ExportVolume(ctx, out.Volume, w) })
		if err != nil {
			return fmt.Errorf("keeping what volume %s holds before the restore: %w; the volume is unchanged", out.Volume, err)
		}
		out.Kept = &kept
		if err := live.Podman.RemoveVolume(ctx, out.Volume); err != nil {
			return err
		}
	}
	if err := create(ctx, live, vols, out.Volume, timeout); err != nil {
		return err
	}
	h := sha256.New()
	if err := vols.ImportVolume(ctx, out.Volume, io.TeeReader(r, h)); err != nil {
		return err
	}
	out.From.SHA256 = fmt.Sprintf("%x", h.Sum(nil))
	return nil
}

// create makes the volume again: through its quadlet service (NAME.volume
// → NAME-volume.service) when systemd has one, which gives it its unit's
// options, else with podman's defaults.
func create(ctx context.Context, live *Live, vols Volumes, volume string, timeout time.Duration) error {
	svc := volume + "-volume.service"
	st, err := live.Systemd.UnitStates(ctx, []string{svc})
	if err != nil {
		return err
	}
	if s, ok := st[svc]; !ok || s.LoadState != "loaded" {
		return vols.CreateVolume(ctx, volume)
	}
	if err := jobs(ctx, live.Systemd, host.JobStop, []string{svc}, timeout); err != nil {
		return err
	}
	return jobs(ctx, live.Systemd, host.JobStart, []string{svc}, timeout)
}

// jobs runs one batch of unit jobs and joins their errors.
func jobs(ctx context.Context, sd Systemd, op host.JobOp, names []string, timeout time.Duration) error {
	if len(names) == 0 {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	errs := make([]error, len(names))
	sd.Jobs(cctx, op, names, func(i int, err error) {
		if err != nil && !(op == host.JobStop && errors.Is(err, host.ErrNotFound)) {
			errs[i] = fmt.Errorf("%s %s: %w", op, names[i], err)
		}
	})
	return errors.Join(errs...)
}
