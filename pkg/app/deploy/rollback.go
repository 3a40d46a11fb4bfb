package deploy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/generation"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/pkg/verdict"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// The rollback after a failed health gate: it applies the last good
// generation again through the same pipeline as any run — plan, journal,
// staging, the nine steps, the health gate — with each container pinned
// to the image it ran then (generations.go), so the host returns to
// exactly what served even if a tag has moved since. It never deletes
// data: no volume is deleted or recreated, no image deleted, but for the
// volumes the failed run deleted or recreated, which its plan fills again
// from the backups the failed run took of them (plan.Fill, the path
// `syslet restore` takes: what each holds now is exported first), so
// that the health gate judges the host with its data back. What has no
// backup is said to be lost.

// rollbackResult is what the rollback after a failed gate came to: its
// report, the run's summary line, and the run's verdict.
type rollbackResult struct {
	report  *view.RollbackReport
	summary string
	verdict verdict.Verdict
}

// outcome puts the rollback into the failed run's Outcome: the Outcome
// stays the failed run's (its plan, result and gate); the rollback's go
// into its report.
func (rb rollbackResult) outcome(out *view.Outcome) *view.Outcome {
	out.Rollback = rb.report
	if rb.summary != "" {
		out.Summary = rb.summary
	}
	return out
}

// afterFailedGate decides what a failed health gate leads to: a rollback
// to the newest kept generation, unless the policy forbids it or there is
// none to return to. failed is the pass that failed its gate; cause is
// the executor's error when starts failed.
func (r *runner) afterFailedGate(ctx context.Context, failed passResult, cause error) (rollbackResult, error) {
	why := failures(failed.gate)
	// The error wraps the executor's, when starts failed, for callers
	// that read why.
	gateErr := func(format string, args ...any) error {
		err := fmt.Errorf("%w: "+format, append([]any{ErrGate}, args...)...)
		if cause != nil {
			return fmt.Errorf("%w (%w)", err, cause)
		}
		return err
	}
	if r.req.Rollback == RollbackNever {
		r.view.NoRollback(view.PolicyNever)
		return rollbackResult{verdict: verdict.GateFailed}, gateErr("%s", why)
	}
	gen, err := r.gens.Latest()
	if err != nil || gen == nil {
		r.view.NoRollback(view.NoGeneration)
		if err != nil {
			r.view.Warning(err.Error())
		}
		return rollbackResult{verdict: verdict.GateFailed}, gateErr("%s (no earlier generation to roll back to)", why)
	}
	rep := &view.RollbackReport{Run: runlog.NewRunID(time.Now()), Generation: gen.Run, Of: failed.runID, Why: why, NotRestored: lostBy(failed.result)}
	restores := backedUpDeletes(failed.result)
	l := load.Bytes("generation "+gen.Run, gen.Input)
	if l.Report.HasErrors() {
		// The generation validated when it was applied; a newer syslet may
		// judge its specs otherwise.
		r.view.Findings(l.Report)
		rep.Error = fmt.Sprintf("the specs of generation %s no longer validate (%d error(s))", gen.Run, l.Report.Errors())
		return rollbackResult{report: rep, verdict: verdict.RollbackFailed}, fmt.Errorf("%w: %s: %s", ErrRollbackFailed, why, rep.Error)
	}
	// The rollback is a run of its own, under the same lock.
	back, err := r.pass(ctx, passInput{kind: gateRollback, set: l, source: "rollback to run " + gen.Run + " after " + failed.runID,
		runID: rep.Run, gen: gen, of: failed.runID, signer: gen.Signer, restore: restores})
	rep.Result, rep.Gate = back.result, back.gate
	restored, notFilled := filled(back.result, restores)
	rep.Restored = restored
	rep.NotRestored = append(append(rep.NotRestored, back.notFilled...), notFilled...)
	if back.plan != nil {
		rep.Plan = view.PlanSummary(back.plan)
		rep.NotRestored = append(rep.NotRestored, notRestored(back.plan)...)
	}
	r.view.RolledBack(view.Rollback{Failed: failed.runID, Run: rep.Run, Generation: gen.Run, Why: why, Restored: rep.Restored, NotRestored: rep.NotRestored, Err: err, Untouched: rep.Untouched()})
	if err != nil {
		rep.Error = err.Error()
		if !errors.Is(err, ErrRollbackFailed) {
			err = fmt.Errorf("%w: %w", ErrRollbackFailed, err)
		}
		v := verdict.RollbackFailed
		if errors.Is(err, ErrInterrupted) {
			v = verdict.Interrupted
		}
		return rollbackResult{report: rep, summary: "rollback failed: " + why + "; " + rep.Error, verdict: v}, err
	}
	rep.Passed = true
	return rollbackResult{report: rep, summary: "rolled back to run " + gen.Run + ": " + why, verdict: verdict.RolledBack},
		fmt.Errorf("%w to run %s: %s", ErrRolledBack, gen.Run, why)
}

// lostBy names what the failed run deleted for good: what it deleted
// without a backup (a volume with one is restored: backedUpDeletes).
func lostBy(res *executor.Result) []string {
	var out []string
	if res == nil {
		return nil
	}
	backedUp := map[string]bool{}
	for _, b := range backedUpDeletes(res) {
		backedUp[b.Volume] = true
	}
	for _, a := range res.Applied {
		if a.Irreversible && !(a.Op == plan.OpDeleteVolume && backedUp[a.Target]) {
			out = append(out, fmt.Sprintf("%s %s (deleted by the failed run; irreversible)", strings.TrimPrefix(string(a.Op), "delete-"), a.Target))
		}
	}
	return out
}

// backedUpDeletes are the backups the failed run took of the volumes it
// then deleted (to recreate them, or because their specs left): what its
// rollback brings back.
func backedUpDeletes(res *executor.Result) []backup.Entry {
	if res == nil {
		return nil
	}
	deleted := map[string]bool{}
	for _, a := range res.Applied {
		if a.Op == plan.OpDeleteVolume {
			deleted[a.Target] = true
		}
	}
	var out []backup.Entry
	for _, b := range res.Backups {
		if deleted[b.Volume] {
			out = append(out, b)
		}
	}
	return out
}

// lostSince are the backups a rollback by hand to gen fills the volumes
// it declares from, as the rollback after a failed gate does: of each, the
// first backup the runs after gen took when they deleted it (to recreate
// it, or because its spec left) — what it held under gen — unless a later
// import brought that backup back (a volume recreated with its data
// carried over, a restore, an earlier rollback): live data is never
// replaced by older data. What the volume holds now is exported first.
func lostSince(runs []*runlog.RunInfo, gen *generation.Generation, out *render.Output) []backup.Entry {
	declared := map[string]bool{}
	for _, u := range out.Units {
		if u.Kind == spec.Volume {
			declared[u.Resource] = true
		}
	}
	after := slices.IndexFunc(runs, func(r *runlog.RunInfo) bool { return r.ID() == gen.Run })
	lost := map[string]backup.Entry{}
	var order []string
	for i, r := range runs {
		if i <= after || after < 0 && !r.Intent.Time.After(gen.Time) {
			continue
		}
		for _, a := range r.Actions {
			switch {
			case a.Result != runlog.ResultOK || a.Backup == nil || !declared[a.Target]:
			case plan.Op(a.Op) == plan.OpDeleteVolume:
				if _, ok := lost[a.Target]; !ok {
					lost[a.Target] = *a.Backup
					order = append(order, a.Target)
				}
			case plan.Op(a.Op) == plan.OpImportVolume && lost[a.Target].File == a.Backup.File:
				delete(lost, a.Target)
				order = slices.DeleteFunc(order, func(v string) bool { return v == a.Target })
			}
		}
	}
	var backups []backup.Entry
	for _, v := range order {
		backups = append(backups, lost[v])
	}
	return backups
}

// notRestored names what a rollback plan keeps as the failed run left it.
func notRestored(p *plan.Plan) []string {
	var out []string
	for _, n := range p.Notes {
		if n.Kept {
			out = append(out, n.Unit+": "+n.Message)
		}
	}
	return out
}

// fillBackups adds to a rollback's plan the filling of each volume the
// failed run deleted from the backup it took of it first (plan.Fill):
// created again under the generation's unit, once the rollback's units
// are loaded, and filled before the containers that mount it start. It
// names what it cannot plan; the backup stays.
func (r *runner) fillBackups(ctx context.Context, in passInput, p *plan.Plan) (notFilled []string) {
	if r.h.live == nil {
		return nil
	}
	for _, b := range in.restore {
		// The unit the generation declares for it; one it does not is
		// used only if systemd has it now.
		unitFile, declared := b.Volume+spec.Volume.Ext(), false
		svc := unit.DefaultService(unitFile)
		for _, u := range in.set.Out.Units {
			if u.Kind == spec.Volume && u.Resource == b.Volume {
				unitFile, svc, declared = u.FileName, u.Service, true
			}
		}
		f, err := r.h.fill(ctx, b.Volume, b, unitFile, svc, !declared)
		if err != nil {
			notFilled = append(notFilled, notFilledLine(b, err))
			continue
		}
		p.AddFill(f)
	}
	return notFilled
}

// filled says, of the volumes the rollback's run res filled from the
// backups, which it restored, with where it kept what each held after the
// failed run, and which it did not.
func filled(res *executor.Result, backups []backup.Entry) (restored, not []string) {
	if res == nil {
		return nil, nil
	}
	for _, b := range backups {
		if i := slices.IndexFunc(res.Restored, func(e backup.Entry) bool { return e.File == b.File }); i >= 0 {
			line := fmt.Sprintf("volume %s from backup %s (%d bytes, sha256 %s)", b.Volume, b.File, res.Restored[i].Size, res.Restored[i].SHA256)
			if k := slices.IndexFunc(res.Backups, func(e backup.Entry) bool { return e.Volume == b.Volume }); k >= 0 {
				line += fmt.Sprintf("; what it held after the failed run is in backup %s", res.Backups[k].File)
			}
			restored = append(restored, line)
			continue
		}
		fills := func(a plan.Action) bool { return a.Op.Fills() && a.Target == b.Volume }
		if k := slices.IndexFunc(res.Failed, func(f executor.Failure) bool { return fills(f.Action) }); k >= 0 {
			not = append(not, notFilledLine(b, errors.New(res.Failed[k].Error)))
		} else if slices.ContainsFunc(res.NotReached, fills) {
			not = append(not, notFilledLine(b, errors.New("the rollback stopped before it")))
		}
	}
	return restored, not
}

// notFilledLine names a volume the rollback did not fill, why, and how to
// fill it by hand.
func notFilledLine(b backup.Entry, err error) string {
	return fmt.Sprintf("volume %s (deleted by the run rolled back; restoring backup %s failed: %v; the backup is kept: syslet restore %s %s)", b.Volume, b.File, err, b.Volume, b.File)
}
