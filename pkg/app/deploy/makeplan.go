package deploy

import (
	"context"
	"slices"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/plan"
)

// makePlan observes the host, builds the plan, and carries forward what
// the last run left unfinished; it returns the plan and what it observed.
// When checked, the host is read only once podman's converter check of l
// passed.
func makePlan(ctx context.Context, r *runner, l *load.Set, resume, checked bool, opts plan.Options) (*plan.Plan, *plan.Observed, error) {
	// The journal's tail is read while the host is.
	type recent struct {
		runs []*runlog.RunInfo
		err  error
	}
	journal := make(chan recent, 1)
	go func() {
		runs, err := r.jr.Recent()
		journal <- recent{runs, err}
	}()
	if checked {
		// The check releases the specs when it is done (startCheck):
		// the host is read after it, not beside it, so that a big set's
		// specs and its installed tree are never held at once. Reading
		// the tree uses every CPU by itself.
		if err := r.verdict(); err != nil {
			return nil, nil, err
		}
	}
	obs, err := plan.Observe(ctx, r.h.sources(), l.Out)
	j := <-journal
	if err != nil {
		return nil, nil, err
	}
	runs, err := j.runs, j.err
	if err != nil {
		return nil, nil, err
	}
	r.observed(obs, runs)
	opts.Written = writtenByUnfinished(runs)
	last := lastChange(runs)
	r.pendingGate = nil
	if resume && last != nil && (last.End == nil || last.Result() == runlog.ResultInterrupted) && len(last.Unfinished()) == 0 {
		// Every change of that run landed but its health gate never gave a
		// verdict (killed, or stopped during it): this run judges them.
		for _, a := range last.Intent.Actions {
			if plan.Op(a.Op) == plan.OpStart || plan.Op(a.Op) == plan.OpReload {
				r.pendingGate = append(r.pendingGate, a.Target)
			}
		}
	}
	if resume && opts.Pins == nil && last != nil && last.LeftWorkUndone() && last.Intent.Rollback != "" && last.Intent.InputDigest == opts.InputDigest {
		// A rollback that did not finish, and this run applies the
		// generation it was restoring: finish it, pins and all.
		if gen, err := r.gens.Find(last.Intent.Rollback); err == nil {
			opts.Rollback, opts.Pins = true, r.pins(ctx, gen)
		} else {
			view.Printf(r.req.Stderr, "syslet: warning: finishing the rollback of run %s without its pins: %s\n", last.ID(), err)
		}
	}
	p := plan.Build(l.Out, obs, opts)
	if !resume {
		return p, obs, nil
	}
	u := unfinished(runs)
	if u == nil {
		return p, obs, nil
	}
	// When systemd last started each unit an unfinished start names: a
	// oneshot it ran for that run must not run again.
	var starts []string
	for _, a := range u.Actions {
		if a.Op == plan.OpStart {
			starts = append(starts, a.Target)
		}
	}
	started, err := r.h.lastStarted(ctx, starts)
	if err != nil {
		return nil, nil, err
	}
	u.Managed = r.managedBefore(u)
	p.Resume = plan.CarryForward(p, l.Out, obs, u, started)
	return p, obs, nil
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
