package executor

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/plan"
)

// Switcher moves a start-first container's traffic from its live slot to
// the new one (plan.Switch), through syslet's proxy.
type Switcher interface {
	// AwaitReady returns once the new slot answers as ready, or an error
	// saying what it answered last when ctx ends first or the slot's
	// service is no longer running.
	AwaitReady(ctx context.Context, sw plan.Switch) error
	// Switch readies the new slot's server, drains the old one's (when
	// there is one) and saves the proxy's server state.
	Switch(ctx context.Context, sw plan.Switch) error
	// Drain waits until the old slot's server holds no session, at most
	// sw.Drain, then puts it in maintenance and saves the server state.
	Drain(ctx context.Context, sw plan.Switch) error
}

// isSwitchOp reports whether op is one of a start-first switch's, which
// step 9 runs after its starts, site by site (switches).
func isSwitchOp(op plan.Op) bool {
	for _, o := range plan.SwitchOps {
		if o == op {
			return true
		}
	}
	return false
}

// switches runs the switch ops of step 9 (idx, in plan order) once the
// starts are done, one site after another, each op after the one before
// has landed. A new slot not ready in time is discarded (discardSlot) and
// the rest of its site's switch is not reached: the old slot never
// stopped and keeps every request. Other sites still switch; the failure
// fails the run, whose rollback finds the site as it was.
func (e *run) switches(ctx context.Context, idx []int, startFailed map[string]error) error {
	abandoned := map[string]bool{}
	for _, i := range idx {
		a := e.p.Actions[i]
		sw := a.Data().Switch
		if sw == nil {
			return fmt.Errorf("%s %s carries no switch", a.Op, a.Target)
		}
		if abandoned[sw.Site] {
			continue
		}
		if err := e.interrupted(ctx); err != nil {
			return err
		}
		t0 := time.Now()
		err := e.switchOp(ctx, a, *sw, startFailed[sw.NewService])
		if err != nil && a.Op == plan.OpAwaitReady {
			abandoned[sw.Site] = true
			if derr := e.discardSlot(ctx, *sw); derr != nil {
				err = fmt.Errorf("%w; discarding it: %w", err, derr)
			}
		}
		jerr := e.land(Landed{Index: i, Action: a, Err: err, Took: time.Since(t0)})
		var log []string
		if err != nil && a.Op == plan.OpAwaitReady {
			log, _ = e.h.Systemd.LastLog(context.WithoutCancel(ctx), sw.NewService, e.began, e.opts.LogLines)
		}
		e.result(i, err, log)
		if jerr != nil {
			return jerr
		}
		if err != nil && a.Op != plan.OpAwaitReady {
			// A proxy that does not answer, or a stop or removal that
			// failed, leaves nothing safe to do after it.
			return err
		}
	}
	return nil
}

// switchOp carries out one switch op. started is the new slot's start
// error, if its start failed: it is then not awaited.
func (e *run) switchOp(ctx context.Context, a plan.Action, sw plan.Switch, started error) error {
	if e.h.Proxy == nil && a.Op != plan.OpStopSlot && a.Op != plan.OpRemoveSlot {
		return errors.New("the plan switches a start-first container, but this host has no proxy to switch")
	}
	switch a.Op {
	case plan.OpAwaitReady:
		if started != nil {
			return fmt.Errorf("%s did not start, so it never took a request: %w", sw.NewService, started)
		}
		return deadline(ctx, e.opts.StartTimeout, sw.NewService+" becoming ready", func(ctx context.Context) error {
			return e.h.Proxy.AwaitReady(ctx, sw)
		})
	case plan.OpSwitch:
		return deadline(ctx, e.opts.ReloadTimeout, "switching "+sw.Site+" to "+sw.New, func(ctx context.Context) error {
			return e.h.Proxy.Switch(ctx, sw)
		})
	case plan.OpDrain:
		// The drain bounds itself (sw.Drain); the deadline only guards a
		// proxy that stops answering.
		return deadline(ctx, time.Duration(sw.Drain)+e.opts.ReloadTimeout, "draining "+sw.Old+" of "+sw.Site, func(ctx context.Context) error {
			return e.h.Proxy.Drain(ctx, sw)
		})
	case plan.OpStopSlot:
		return e.stopOne(ctx, a.Target)
	case plan.OpRemoveSlot:
		return e.h.Files.Remove(a.Target, a.Data().Root)
	}
	return fmt.Errorf("%s %s is not a switch's", a.Op, a.Target)
}

// discardSlot stops a new slot that was not ready and removes what this run
// wrote of it (sw.Discard): it never took a request, and the host is
// left serving from the old slot as before.
func (e *run) discardSlot(ctx context.Context, sw plan.Switch) error {
	if err := e.stopOne(context.WithoutCancel(ctx), sw.NewService); err != nil {
		return err
	}
	for _, p := range sw.Discard {
		if err := e.h.Files.Remove(p, path.Dir(p)); err != nil {
			return err
		}
	}
	return nil
}

// stopOne stops one unit as a batch of its own, under the stop deadline;
// a unit systemd does not know is stopped.
func (e *run) stopOne(ctx context.Context, service string) error {
	cctx, cancel := context.WithTimeout(ctx, e.opts.StopTimeout)
	defer cancel()
	var err error
	e.h.Systemd.Jobs(cctx, host.JobStop, []string{service}, func(_ int, jerr error) { err = jerr })
	if errors.Is(err, host.ErrNotFound) {
		return nil
	}
	if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("stopping %s did not finish within %s: %w", service, e.opts.StopTimeout, err)
	}
	return err
}
