package deploy

import (
	"context"

	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/plan"
)

// makePlan observes the host, builds the plan, and carries forward what
// the last run left unfinished.
func makePlan(ctx context.Context, h *hostConn, jr *runlog.Journal, l *load.Set, resume bool, opts plan.Options) (*plan.Plan, error) {
	// The journal's tail is read while the host is.
	type recent struct {
		runs []*runlog.RunInfo
		err  error
	}
	journal := make(chan recent, 1)
	go func() {
		runs, err := jr.Recent()
		journal <- recent{runs, err}
	}()
	obs, err := plan.Observe(ctx, h.sources(), l.Out)
	j := <-journal
	if err != nil {
		return nil, err
	}
	runs, err := j.runs, j.err
	if err != nil {
		return nil, err
	}
	opts.Written = writtenByUnfinished(runs)
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
	started, err := h.lastStarted(ctx, starts)
	if err != nil {
		return nil, err
	}
	p.Resume = plan.CarryForward(p, l.Out, obs, u, started)
	return p, nil
}
