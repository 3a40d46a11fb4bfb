package deploy

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/syslet/syslet/pkg/app/planfile"
	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/plan"
)

// planned is what planning a pass found: the plan, the host state it was
// derived from, and what the journal's recent runs leave to this one.
type planned struct {
	plan     *plan.Plan
	observed *plan.Observed
	// state is the host state a saved plan is made from or held against
	// (only read when one is: --out, --plan); runs the journal's recent
	// runs, read with it.
	state *planfile.State
	runs  []*runlog.RunInfo
	// pendingGate are the services of an earlier run whose changes all
	// landed but were never judged by the health gate.
	pendingGate []string
	// notFilled names, in a rollback, the volumes the failed run deleted
	// that the plan cannot fill from their backups (fillBackups).
	notFilled []string
}

// planPass observes the host and builds the plan of one pass, within the
// read deadline: with a rollback's pins, carrying forward what the last
// run left unfinished, and guarded against mass removals. The run's own
// input waits for its converter check before the host is read; the check
// is what the pass returns when it failed.
func (r *runner) planPass(ctx context.Context, in passInput) (planned, checked, error) {
	rctx, cancel := context.WithTimeout(ctx, r.req.ReadTimeout)
	pl, err := r.makePlan(rctx, in)
	cancel()
	if err != nil && errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
		err = fmt.Errorf("reading the host's state did not finish within %s: %w", r.req.ReadTimeout, err)
	}
	var c checked
	if in.kind.awaitsCheck() {
		if c = r.verdict(); c.err != nil {
			return pl, c, c.err
		}
	}
	if err != nil {
		return pl, c, err
	}
	if in.kind.guardsRemovals() && !r.req.AllowRemovals {
		pl.plan.GuardRemovals()
	}
	return pl, c, nil
}

// makePlan reads the host and the journal and builds the plan.
func (r *runner) makePlan(ctx context.Context, in passInput) (planned, error) {
	opts := plan.Options{Force: r.req.Force, InputDigest: in.set.Digest(), NoBackups: r.req.NoBackup}
	gens, err := r.gens.List()
	if err != nil {
		r.view.Warning(err.Error())
	}
	opts.KeepImages = keptImages(gens)
	if in.kind.rollback() {
		opts.Rollback, opts.Pins = true, r.pins(ctx, in.gen)
	}
	obs, runs, err := r.observe(ctx, in)
	if err != nil {
		return planned{}, err
	}
	pl := planned{observed: obs, runs: runs}
	if r.req.SavePlan != "" || r.req.Saved != nil {
		pl.state = savedState(obs, runs)
	}
	opts.Written = writtenByUnfinished(runs)
	if r.req.Update && in.kind.updates() {
		opts.HeldUpdates = heldUpdates(runs)
	}
	last := lastChange(runs)
	if in.resume && last != nil && (last.End == nil || last.Result() == runlog.ResultInterrupted) && len(last.Unfinished()) == 0 {
		// Every change of that run landed but its health gate never gave a
		// verdict (killed, or stopped during it): this run judges them.
		for _, a := range last.Intent.Actions {
			if op := plan.Op(a.Op); op == plan.OpStart || op == plan.OpRestart || op == plan.OpReload {
				pl.pendingGate = append(pl.pendingGate, a.Target)
			}
		}
	}
	if in.resume && opts.Pins == nil && last != nil && last.LeftWorkUndone() && last.Intent.Rollback != "" && last.Intent.InputDigest == opts.InputDigest {
		// A rollback that did not finish, and this run applies the
		// generation it was restoring: finish it, pins and all.
		if gen, err := r.gens.Find(last.Intent.Rollback); err == nil {
			opts.Rollback, opts.Pins = true, r.pins(ctx, gen)
		} else {
			r.view.Warning(fmt.Sprintf("finishing the rollback of run %s without its pins: %s", last.ID(), err))
		}
	}
	pl.plan = plan.Build(in.set.Out, obs, opts)
	if in.resume {
		if pl.plan.Resume, err = r.carryForward(ctx, in, pl.plan, obs, runs); err != nil {
			return planned{}, err
		}
	}
	if in.kind == handRollback {
		in.restore = lostSince(runs, in.gen, in.set.Out)
	}
	if len(in.restore) > 0 {
		pl.notFilled = r.fillBackups(ctx, in, pl.plan)
	}
	r.sizeBackups(ctx, pl.plan)
	return pl, nil
}

// sizeBackups tells the plan how much each volume it deletes after an
// export holds, for the plan to show the size of each backup. podman is
// asked only when there is such a volume (its disk usage report reads
// every volume); a failure to ask leaves the sizes unknown, as the plan
// then says: the apply's room check asks again and stops the run if it
// must.
func (r *runner) sizeBackups(ctx context.Context, p *plan.Plan) {
	if r.h.live == nil || !slices.ContainsFunc(p.Actions, func(a plan.Action) bool { return p.BackedUp(&a) }) {
		return
	}
	sizes, err := r.h.live.Podman.VolumeSizes(ctx)
	if err != nil {
		r.view.Warning("the sizes of the volumes to back up are unknown: " + err.Error())
		return
	}
	for i := range p.Actions {
		if a := &p.Actions[i]; p.BackedUp(a) {
			if size, ok := sizes[a.Target]; ok {
				if p.VolumeSizes == nil {
					p.VolumeSizes = map[string]int64{}
				}
				p.VolumeSizes[a.Target] = size
			}
		}
	}
}

// observe reads the host's state and, beside it, the journal's tail. The
// run's own input is read only once podman's converter check of it
// passed: the check releases the specs when it is done (startCheck), so a
// big set's specs and its installed tree are never held at once; reading
// the tree uses every CPU by itself.
func (r *runner) observe(ctx context.Context, in passInput) (*plan.Observed, []*runlog.RunInfo, error) {
	type recent struct {
		runs []*runlog.RunInfo
		err  error
	}
	journal := make(chan recent, 1)
	go func() {
		runs, err := r.jr.Recent()
		journal <- recent{runs, err}
	}()
	if in.kind.awaitsCheck() {
		if c := r.verdict(); c.err != nil {
			return nil, nil, c.err
		}
	}
	obs, err := plan.Observe(ctx, r.h.sources(r.req.Update && in.kind.updates(), r.req.UpdateOnly), in.set.Out)
	j := <-journal
	if err != nil {
		return nil, nil, err
	}
	if j.err != nil {
		return nil, nil, j.err
	}
	return obs, j.runs, nil
}

// carryForward is what the plan takes over from the journal's last run
// when it left work undone; nil when it did not.
func (r *runner) carryForward(ctx context.Context, in passInput, p *plan.Plan, obs *plan.Observed, runs []*runlog.RunInfo) (*plan.Resume, error) {
	u := unfinished(runs)
	if u == nil {
		return nil, nil
	}
	// When systemd last started each unit an unfinished start or restart
	// names: a oneshot it ran for that run must not run again, a
	// container it restarted for that run is not restarted again.
	var starts []string
	for _, a := range u.Actions {
		if a.Op == plan.OpStart || a.Op == plan.OpRestart {
			starts = append(starts, a.Target)
		}
	}
	started, err := r.h.lastStarted(ctx, starts)
	if err != nil {
		return nil, err
	}
	u.Managed = r.managedBefore(u)
	gone := r.goneBackups(u)
	res := plan.CarryForward(p, in.set.Out, obs, u, started)
	p.Notes = append(p.Notes, gone...)
	return res, nil
}

// goneBackups takes out of u the imports of backups the store no longer
// holds (removed by hand, say, after an import of it failed), and notes
// each: without its backup a fill cannot be finished, and keeping it
// would fail every run after.
//
// An import carrying a volume's data over whose export the journal does
// not name (the earlier run was killed after the export, before its
// delete landed) takes that run's export when the store holds it (saved
// whole or not at all): the volume may be gone already, and this run's
// delete would then have nothing to export. Otherwise it takes the
// export this run's delete takes.
func (r *runner) goneBackups(u *plan.Unfinished) []plan.Note {
	for i := range u.Actions {
		if a := &u.Actions[i]; a.Op == plan.OpImportVolume && a.Data().Backup == "" {
			if f, _, err := r.h.backups.Open(backup.Name(u.Run, a.Target)); err == nil {
				f.Close()
				a.Payload = &plan.Payload{Backup: backup.Name(u.Run, a.Target)}
			}
		}
	}
	var notes []plan.Note
	u.Actions = slices.DeleteFunc(u.Actions, func(a plan.Action) bool {
		if a.Op != plan.OpImportVolume || a.Data().Backup == "" {
			return false
		}
		f, _, err := r.h.backups.Open(a.Data().Backup)
		if err == nil {
			f.Close()
			return false
		}
		notes = append(notes, plan.Note{Unit: "volume " + a.Target, Message: fmt.Sprintf("previous run %s meant to fill it from backup %s, which is gone (%v): not filled", u.Run, a.Data().Backup, err)})
		return true
	})
	return notes
}

// managedBefore is the evidence that the objects an unfinished run meant
// to delete, whose units it already removed, were syslet's: what the
// units of the last good generation managed (plan.KnownResources). It is
// read only when the run left such a delete; without a generation there
// is no evidence, and nothing is deleted on the journal's word.
func (r *runner) managedBefore(u *plan.Unfinished) map[string]plan.Managed {
	if !slices.ContainsFunc(u.Actions, func(a plan.Action) bool {
		return a.Op == plan.OpDeleteVolume || a.Op == plan.OpDeleteNetwork || a.Op == plan.OpDeleteImage
	}) {
		return nil
	}
	gen, err := r.gens.Latest()
	if err != nil || gen == nil {
		return nil
	}
	return plan.KnownResources(load.Bytes("generation "+gen.Run, gen.Input).Out)
}

// heldUpdates are the digests an update does not try again: for each
// image, the digest of its newest update in the journal's recent runs
// when that run failed its health gate. An update that ended ok, or a
// newer one to another digest, releases the image; the plan tries a held
// digest again only once the tag names another (plan.Options.HeldUpdates).
func heldUpdates(runs []*runlog.RunInfo) map[string]plan.HeldUpdate {
	held := map[string]plan.HeldUpdate{}
	for _, ri := range runs { // oldest first
		for _, u := range ri.Intent.Updates {
			if ri.End != nil && ri.End.GateFailed > 0 {
				held[u.Image] = plan.HeldUpdate{Digest: u.To, Run: ri.ID()}
				continue
			}
			if ri.Result() == runlog.ResultOK {
				delete(held, u.Image)
			}
		}
	}
	return held
}
