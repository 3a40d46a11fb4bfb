package deploy

import (
	"context"
	"fmt"

	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/plan"
)

// makePlan observes the host, builds the plan, and carries forward what
// the last run left unfinished.
func makePlan(ctx context.Context, r *runner, l *load.Set, resume bool, opts plan.Options) (*plan.Plan, error) {
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
	obs, err := plan.Observe(ctx, r.h.sources(), l.Out)
	j := <-journal
	if err != nil {
		return nil, err
	}
	runs, err := j.runs, j.err
	if err != nil {
		return nil, err
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
			fmt.Fprintln(r.req.Stderr, "syslet: warning: finishing the rollback of run", last.ID(), "without its pins:", err)
		}
	}
	p := plan.Build(l.Out, obs, opts)
	if !resume {
		return p, nil
	}
	u := unfinished(runs)
	if u == nil {
		return p, nil
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
		return nil, err
	}
	p.Resume = plan.CarryForward(p, l.Out, obs, u, started)
	return p, nil
}
