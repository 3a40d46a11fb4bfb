//go:build guest

// Single-unit jobs and the main PID, for the guest tests only: production
// drives every job through Jobs, in batches, and never restarts a unit, so
// these live here rather than in the adapter, where nothing would call them.
package systemd

import (
	"context"
	"fmt"
	"testing"

	"github.com/syslet/syslet/pkg/host"
)

// Start starts the unit and waits for the job. The unit must then be active,
// or, for a Type=oneshot service without RemainAfterExit, have finished
// without failing.
func (m *Manager) Start(ctx context.Context, name string) error {
	return m.one(ctx, host.JobStart, name)
}

// Restart restarts the unit (starting it if it was stopped), with the same
// end-state check as Start.
func (m *Manager) Restart(ctx context.Context, name string) error {
	if err := m.resetFailed(ctx, name); err != nil {
		return err
	}
	if err := m.job(ctx, "restart", name, m.conn.RestartUnitContext); err != nil {
		return err
	}
	return m.checkUp(ctx, "restart", name)
}

// Reload runs the unit's ExecReload= and checks the unit is still active.
// The main process keeps its PID.
func (m *Manager) Reload(ctx context.Context, name string) error {
	return m.one(ctx, host.JobReload, name)
}

// Stop stops the unit and waits for it to be down. Ending "failed" counts as
// stopped: quadlet containers exit 143 on SIGTERM and systemd records that as
// a failure. Stopping a unit systemd has not loaded returns an error wrapping
// host.ErrNotFound, which a caller removing the unit may ignore.
func (m *Manager) Stop(ctx context.Context, name string) error {
	return m.one(ctx, host.JobStop, name)
}

// one is Jobs for a single unit.
func (m *Manager) one(ctx context.Context, op host.JobOp, name string) (err error) {
	m.Jobs(ctx, op, []string{name}, func(_ int, e error) { err = e })
	return err
}

// MainPID returns the PID of the unit's main process, 0 when none runs.
// Comparing it before and after an operation proves a service was not
// restarted.
func (m *Manager) MainPID(ctx context.Context, name string) (uint32, error) {
	p, err := m.conn.GetServicePropertyContext(ctx, name, "MainPID")
	if err != nil {
		return 0, fmt.Errorf("reading MainPID of unit %q: %w", name, classify(err))
	}
	pid, ok := p.Value.Value().(uint32)
	if !ok {
		return 0, fmt.Errorf("reading MainPID of unit %q: unexpected type %s", name, p.Value.Signature())
	}
	return pid, nil
}

// monotonic reads one of a unit's ...TimestampMonotonic properties (µs
// since boot).
func (m *Manager) monotonic(t *testing.T, name, prop string) uint64 {
	t.Helper()
	p, err := m.conn.GetUnitPropertyContext(context.Background(), name, prop)
	if err != nil {
		t.Fatalf("reading %s of unit %q: %v", prop, name, err)
	}
	v, ok := p.Value.Value().(uint64)
	if !ok || v == 0 {
		t.Fatalf("%s of unit %q: %v", prop, name, p.Value)
	}
	return v
}

// job queues one job in mode "replace" and waits for its result (Restart,
// which Jobs does not offer). The result channel is buffered:
// go-systemd delivers results from its single signal loop, and an unread
// unbuffered channel would stall every later job on the connection (for
// instance after ctx is cancelled here).
func (m *Manager) job(ctx context.Context, op, name string, queue queueFunc) error {
	ch := make(chan string, 1)
	if _, err := queue(ctx, name, "replace", ch); err != nil {
		return fmt.Errorf("%s unit %q: %w", gerund(op), name, classify(err))
	}
	select {
	case res := <-ch:
		if res != "done" {
			return &host.JobError{Unit: name, Op: op, Result: res}
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for %s job of unit %q: %w", op, name, ctx.Err())
	}
}

// checkUp turns a "done" job whose unit is not up into a *host.JobError.
func (m *Manager) checkUp(ctx context.Context, op, name string) error {
	st, err := m.state(ctx, name)
	if err != nil {
		return fmt.Errorf("checking unit %q after %s: %w", name, op, err)
	}
	return m.endState(ctx, op, name, st)
}

func (m *Manager) state(ctx context.Context, name string) (host.UnitState, error) {
	states, err := m.UnitStates(ctx, []string{name})
	if err != nil {
		return host.UnitState{}, err
	}
	return states[name], nil
}
