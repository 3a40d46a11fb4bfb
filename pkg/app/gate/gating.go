package gate

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/syslet/syslet/pkg/host"
)

// gating is one gate as it runs: what it reads and waits on, and the
// report it fills.
type gating struct {
	ctx    context.Context
	live   deadlineHost
	lim    Limits
	stop   <-chan struct{}
	wake   chan struct{}
	probes map[string]*prober
	g      *Report
}

// fail records a unit's failure with its last log lines.
func (r *gating) fail(u Unit, why string) {
	f := Failure{Service: u.service, Reason: why}
	f.Log, _ = r.live.LastLog(context.WithoutCancel(r.ctx), u.service, r.lim.Since, logLines)
	r.g.Failures = append(r.g.Failures, f)
}

// unread fails the gate when the units' state could not be read: it
// cannot judge them, but names none of them (nor reads a log over the
// bus that just did not answer).
func (r *gating) unread(err error) {
	r.g.Failures = append(r.g.Failures, Failure{Reason: "the gated units' state could not be read: " + err.Error()})
}

// wait sleeps d, or until a probe wakes it; false when the gate was
// stopped or its context ended (interrupted).
func (r *gating) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.wake:
		return true
	case <-r.stop:
	case <-r.ctx.Done():
	}
	r.g.Interrupted = true
	return false
}

// up waits until every unit is up by deadline: active and running
// (healthy where podman judges), a oneshot finished with exit status 0, a
// probed one ready. It returns each unit's state when it came up, the
// base the soak compares with; false when the gate ended there.
func (r *gating) up(units []Unit, deadline time.Time) (map[string]host.UnitHealth, bool) {
	base := map[string]host.UnitHealth{}
	pending := slices.Clone(units)
	for len(pending) > 0 {
		health, err := r.live.Health(r.ctx, services(pending))
		if err != nil {
			r.unread(err)
			return nil, false
		}
		var still []Unit
		for _, u := range pending {
			h := health[u.service]
			why, up := upYet(u, h)
			if why == "" && up && u.health {
				why, up = healthYet(r.ctx, r.live, u)
			}
			p := r.probes[u.service]
			switch {
			case why != "":
				r.fail(u, why)
			case up && p != nil && !p.ready() && time.Now().After(p.deadline()):
				r.fail(u, p.notReady())
			case up && p != nil && !p.ready():
				still = append(still, u)
			case up:
				base[u.service] = h
			case time.Now().After(deadline):
				r.fail(u, fmt.Sprintf("not up within %s (%s/%s)", r.lim.Start, h.ActiveState, h.SubState))
			default:
				still = append(still, u)
			}
		}
		if len(r.g.Failures) > 0 {
			return nil, false
		}
		if pending = still; len(pending) > 0 && !r.wait(gatePoll) {
			return nil, false
		}
	}
	return base, true
}

// soak holds the services to the state they came up in for one window:
// not restarted, their probes passing, healthy where podman judges.
func (r *gating) soak(units []Unit, base map[string]host.UnitHealth) {
	var soaking []Unit
	for _, u := range units {
		if !u.oneshot {
			soaking = append(soaking, u)
		}
	}
	soakStart := time.Now()
	end := soakStart.Add(r.lim.Soak)
	for len(soaking) > 0 {
		last := !time.Now().Before(end)
		health, err := r.live.Health(r.ctx, services(soaking))
		if err != nil {
			r.unread(err)
			return
		}
		for _, u := range soaking {
			if why := stillUp(base[u.service], health[u.service], time.Since(soakStart), r.lim.Soak); why != "" {
				r.fail(u, why)
			} else if p := r.probes[u.service]; p != nil && p.failed() != "" {
				r.fail(u, p.failed())
			} else if u.health {
				if why, _ := healthYet(r.ctx, r.live, u); why != "" {
					r.fail(u, why)
				}
			}
		}
		if last && len(r.g.Failures) == 0 {
			// systemd learns that a container ended only when conmon
			// exits, and conmon waits for podman's cleanup of it first:
			// seconds with podman 5.8 on a busy host, so a container that
			// exited within the window can still show as up. podman knows
			// at once: one list of its containers, at the window's end.
			all, err := r.live.Containers(r.ctx)
			if err != nil {
				r.unread(err)
				return
			}
			for _, u := range soaking {
				if why := containerUp(u, all); why != "" {
					r.fail(u, why)
				}
			}
		}
		if len(r.g.Failures) > 0 || last || !r.wait(min(gatePoll, time.Until(end))) {
			return
		}
	}
}
