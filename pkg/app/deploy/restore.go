package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
)

// Restoring a volume from its backup (`syslet restore VOLUME [BACKUP]`).
// The restore is a plan of its own (plan.Fill): the services of the
// containers that mount the volume stop; what the volume holds now, if
// anything, is backed up in its turn (nothing is lost by a restore either)
// and the volume removed; it is created again — by its quadlet service
// when systemd has one, so it gets its unit's options, else with podman's
// defaults — and the backup imported into it; the services that were
// running start again. The executor runs it under the apply lock with the
// run journal, as any apply: a restore stopped anywhere is finished by the
// next run (plan.CarryForward), and `syslet history` lists it.

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
	// View hears the wait for the lock, and the restore's actions as they
	// land.
	View view.Operation
	// Host opens the running system (nil: OpenLive).
	Host func(ctx context.Context, req *Request) (*Live, error)
	// Diff only plans the restore: Restored.Plan says what it would do,
	// and nothing changes.
	Diff bool
	// Planned, when set, hears the plan before anything changes.
	Planned func(steps []string)
}

// Restored is what a restore did. Its document opens with its verdict,
// as every document of a run does (verdict.Report).
type Restored struct {
	// Verdict is how the restore ended: planned (--diff), applied, or
	// failed, refused or interrupted once its plan was made.
	Verdict verdict.Verdict `json:"-"`
	Run     string          `json:"run"`
	Volume  string          `json:"volume"`
	From    backup.Entry    `json:"from"`
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
	// Result is what became of each of its actions.
	Result *executor.Result `json:"result,omitempty"`
}

// restoredFields are Restored's own fields, without its methods.
type restoredFields Restored

// restoredDocument is Restored as its document reads: the verdict first.
type restoredDocument struct {
	verdict.Report
	*restoredFields
}

// MarshalJSON writes the document: the verdict's report, then the restore.
func (r Restored) MarshalJSON() ([]byte, error) {
	return json.Marshal(restoredDocument{r.Verdict.Report(), (*restoredFields)(&r)})
}

// UnmarshalJSON reads a document back, its verdict included.
func (r *Restored) UnmarshalJSON(b []byte) error {
	d := restoredDocument{restoredFields: (*restoredFields)(r)}
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	r.Verdict = d.Report.Verdict
	return nil
}

// Restore brings a volume's backup back into it.
func Restore(ctx context.Context, rr RestoreRequest) (*Restored, error) {
	if rr.Root == "" {
		rr.Root = Defaults.Root
	}
	store := backup.For(rr.Root)
	name, err := pick(store, rr.Volume, rr.Backup)
	if err != nil {
		return nil, err
	}
	req := &Request{Root: rr.Root, Host: rr.Host, View: rr.View, Stop: rr.Stop, StopTimeout: rr.StopTimeout, StartTimeout: rr.StartTimeout}
	req.defaults()
	if req.hostless() {
		return nil, errors.New("a restore needs the running host: --root is for listing backups only")
	}
	h, err := openHost(ctx, req)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	out := &Restored{Run: runlog.NewRunID(time.Now()), Volume: rr.Volume}
	lk, err := acquire(ctx, rr.Stop, rr.Root, rr.LockTimeout, Holder{PID: os.Getpid(), Since: time.Now(), Source: "restore " + rr.Volume, Run: out.Run}, req.View)
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
	// Checked under the lock (no apply writes the directory meanwhile):
	// only a regular file is a backup.
	f, from, err := store.Open(name)
	if err != nil {
		return nil, err
	}
	f.Close()
	out.From = from

	// The volume's unit, as syslet names it, when systemd has it.
	unitFile := rr.Volume + spec.Volume.Ext()
	svc := unit.DefaultService(unitFile)
	fill, err := h.fill(ctx, rr.Volume, from, unitFile, svc, true)
	if err != nil {
		return nil, err
	}
	p := &plan.Plan{}
	p.AddFill(fill)
	out.Plan = restoreSteps(out, fill.Users, svc)
	if rr.Planned != nil {
		rr.Planned(out.Plan)
	}
	if rr.Diff {
		out.Verdict = verdict.Planned
		return out, nil
	}
	return out, runRestore(ctx, h, req, jr, p, fill, out)
}

// runRestore runs a restore's plan with the journal, and says in out what
// it did.
func runRestore(ctx context.Context, h *hostConn, req *Request, jr *runlog.Journal, p *plan.Plan, fill plan.Fill, out *Restored) error {
	run, err := jr.Begin(runlog.Record{Run: out.Run, PID: pid(), Source: "restore volume " + out.Volume + " from " + out.From.File,
		PlanDigest: p.Digest(), Actions: journalActions(p)})
	if err != nil {
		return fmt.Errorf("%w: nothing was changed: %w", executor.ErrJournal, err)
	}
	eh, err := h.executor(nil, out.Run, p)
	if err != nil {
		return err
	}
	res, err := executor.Apply(ctx, p, eh, req.executorOptions(req.View, out.Run, run))
	out.landed(res, fill)
	out.Verdict = verdict.Applied
	if err != nil {
		out.Verdict = failed(err)
	}
	if jerr := run.End(endRecord(res, out.Verdict, nil)); jerr != nil {
		req.View.Warning("the restore's end is not in the journal: " + jerr.Error())
	}
	return err
}

// landed puts into out what the restore's run did: the backup it took of
// what the volume held, the backup it imported (its size and sha256 as
// read), the users of the volume it stopped and started.
func (out *Restored) landed(res *executor.Result, fill plan.Fill) {
	out.Result = res
	for _, b := range res.Backups {
		if b.Volume == out.Volume {
			out.Kept = &b
		}
	}
	for _, b := range res.Restored {
		out.From.Size, out.From.SHA256 = b.Size, b.SHA256
	}
	for _, a := range res.Applied {
		switch {
		case a.Op == plan.OpStop && slices.Contains(fill.Users, a.Target):
			out.Stopped = append(out.Stopped, a.Target)
		case a.Op == plan.OpStart && slices.Contains(fill.Running, a.Target):
			out.Started = append(out.Started, a.Target)
		}
	}
}

// fill reads what filling volume from backup b takes of the host (plan.Fill):
// the services of the containers that mount it, and whether they run;
// whether it exists; and the quadlet unit whose service creates it
// (unitFile, service) — when ifLoaded, only if systemd has it loaded now.
// A container no service runs is not stopped behind systemd's back: the
// volume is then left unchanged.
func (h *hostConn) fill(ctx context.Context, volume string, b backup.Entry, unitFile, service string, ifLoaded bool) (plan.Fill, error) {
	f := plan.Fill{Volume: volume, Backup: b.File, Digest: b.SHA256}
	services, others, err := h.live.Podman.VolumeUsers(ctx, volume)
	if err != nil {
		return f, err
	}
	if len(others) > 0 {
		return f, fmt.Errorf("volume %s is mounted by %s, which no systemd service runs: stop and remove it first; nothing changed", volume, strings.Join(others, ", "))
	}
	slices.Sort(services)
	f.Users = slices.Compact(services)
	states, err := h.live.Systemd.UnitStates(ctx, append(slices.Clone(f.Users), service))
	if err != nil {
		return f, err
	}
	for _, s := range f.Users {
		if up(states[s].ActiveState) {
			f.Running = append(f.Running, s)
		}
	}
	if st, ok := states[service]; !ifLoaded || ok && st.LoadState == "loaded" {
		f.Unit, f.Service, f.ServiceActive = unitFile, service, up(st.ActiveState)
	}
	sizes, err := h.live.Podman.VolumeSizes(ctx)
	if err != nil {
		return f, err
	}
	_, f.Exists = sizes[volume]
	return f, nil
}

// up reports whether a unit in that active state runs, or is on its way.
func up(state string) bool { return state == "active" || state == "activating" || state == "reloading" }

// restoreSteps is the plan of a restore, for people.
func restoreSteps(out *Restored, services []string, svc string) []string {
	var steps []string
	if len(services) > 0 {
		steps = append(steps, "stop "+strings.Join(services, ", ")+" (the containers mounting volume "+out.Volume+")")
	}
	return append(steps,
		"back up what volume "+out.Volume+" holds now, if it exists, and remove it",
		"create volume "+out.Volume+" again (through "+svc+" when systemd has it, else with podman's defaults)",
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
