package systemd

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/syslet/syslet/pkg/host"
)

type queueFunc func(ctx context.Context, name, mode string, ch chan<- string) (int, error)

// Jobs queues the same job for every named unit at once and reports each
// unit's result through landed as its job ends. A start must leave the unit
// active, or, for a Type=oneshot service without RemainAfterExit, finished
// without failing, and so must a restart; a reload runs ExecReload= and
// must leave it active, its main process keeping its PID; a stop must leave
// it down, "failed" counting as stopped (quadlet containers exit 143 on
// SIGTERM and systemd records that as a failure), and stopping a unit
// systemd has not loaded lands an error wrapping host.ErrNotFound, which a
// caller removing the unit may ignore (endState). systemd runs the jobs
// side by side and orders them itself (After=, Requires= and Wants= of the
// quadlet units), so N starts take about as long as the slowest one rather
// than the sum. Starts and restarts first reset every unit's failed state
// (resetAll); then the jobs are queued one after another in the given
// order, one D-Bus round trip each (go-systemd serialises job calls that
// report results), before any result is awaited; landed is called from
// Jobs' own goroutine, in the order the jobs end, once per unit. ctx bounds
// the wait of every unit.
//
// Only the waits run side by side. The D-Bus calls (queueing, and the
// state check after each job) are made one at a time from this goroutine:
// the bus refuses more than a bounded number of pending calls per
// connection ("maximum number of pending replies"), which a few hundred
// concurrent checks exceed. Jobs that end together are checked together,
// with one ListUnitsByNames call.
func (m *Manager) Jobs(ctx context.Context, op host.JobOp, names []string, landed func(i int, err error)) {
	var queue queueFunc
	switch op {
	case host.JobStart:
		queue = m.conn.StartUnitContext
	case host.JobStop:
		queue = m.conn.StopUnitContext
	case host.JobReload:
		queue = m.conn.ReloadUnitContext
	case host.JobRestart:
		queue = m.conn.RestartUnitContext
	default:
		for i, name := range names {
			landed(i, fmt.Errorf("unknown job %q for unit %q", op, name))
		}
		return
	}
	type ended struct {
		i      int
		result string // the job's result, "" when the wait ended first
		err    error
	}
	results := make(chan ended, len(names))
	pending := 0
	var resetErrs []error
	if op == host.JobStart || op == host.JobRestart {
		resetErrs = m.resetAll(ctx, names)
	}
	for i, name := range names {
		if resetErrs != nil && resetErrs[i] != nil {
			landed(i, resetErrs[i])
			continue
		}
		// Buffered: the result may arrive before its waiter runs, and an
		// unread channel would stall go-systemd's signal loop.
		ch := make(chan string, 1)
		if _, err := queue(ctx, name, "replace", ch); err != nil {
			landed(i, fmt.Errorf("%s unit %q: %w", gerund(string(op)), name, classify(err)))
			continue
		}
		pending++
		go func() {
			select {
			case res := <-ch:
				results <- ended{i: i, result: res}
			case <-ctx.Done():
				// The job keeps running in systemd; only the wait is abandoned.
				results <- ended{i: i, err: fmt.Errorf("waiting for %s job of unit %q: %w", op, name, ctx.Err())}
			}
		}()
	}
	for pending > 0 {
		// Take every job that has ended by now, so they share one check.
		batch := []ended{<-results}
		for more := true; more && len(batch) < pending; {
			select {
			case e := <-results:
				batch = append(batch, e)
			default:
				more = false
			}
		}
		pending -= len(batch)
		var done []string
		for _, e := range batch {
			if e.err == nil && e.result == "done" {
				done = append(done, names[e.i])
			}
		}
		states, serr := m.UnitStates(ctx, done)
		for _, e := range batch {
			name := names[e.i]
			switch {
			case e.err != nil:
				landed(e.i, e.err)
			case e.result != "done":
				landed(e.i, &host.JobError{Unit: name, Op: string(op), Result: e.result})
			case serr != nil:
				landed(e.i, fmt.Errorf("checking unit %q after %s: %w", name, op, serr))
			default:
				landed(e.i, m.endState(ctx, string(op), name, states[name]))
			}
		}
	}
}

// endState turns a "done" job whose unit is not where the job should have
// left it into a *host.JobError: down after a stop ("failed" counts, as
// quadlet containers exit 143 on SIGTERM); up after a start or reload, or
// finished for a Type=oneshot service without RemainAfterExit.
func (m *Manager) endState(ctx context.Context, op, name string, st host.UnitState) error {
	if op == string(host.JobStop) {
		if !isDown(st) {
			return &host.JobError{Unit: name, Op: op, Result: stateResult(st)}
		}
		// A quadlet container exits 143 on SIGTERM and systemd records that
		// as a failure; a stop syslet asked for is not one, and must not
		// leave the host "degraded" (nor count towards the start-rate limit).
		if st.Failed() {
			return m.resetFailed(ctx, name)
		}
		return nil
	}
	if st.Active() {
		return nil
	}
	if st.ActiveState == "inactive" && strings.HasSuffix(name, ".service") {
		once, err := m.runsOnce(ctx, name)
		if err != nil {
			return fmt.Errorf("checking unit %q after %s: %w", name, op, err)
		}
		if once {
			return nil
		}
	}
	return &host.JobError{Unit: name, Op: op, Result: stateResult(st)}
}

// resetWorkers bounds the reset-failed calls in flight at once, well below
// the bus's limit of pending calls per connection.
const resetWorkers = 16

// resetAll clears the failed state and start-rate counter of every unit
// before any start is queued: systemd answers these quickly while it is
// still idle, so the queueing that follows costs one round trip per unit,
// as systemctl start does, rather than two while systemd is busy starting
// the first units. The result is nil when every reset succeeded.
func (m *Manager) resetAll(ctx context.Context, names []string) []error {
	errs := make([]error, len(names))
	failed := false
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range min(resetWorkers, len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := m.resetFailed(ctx, names[i]); err != nil {
					mu.Lock()
					errs[i], failed = err, true
					mu.Unlock()
				}
			}
		}()
	}
	for i := range names {
		work <- i
	}
	close(work)
	wg.Wait()
	if !failed {
		return nil
	}
	return errs
}

// resetFailed clears the unit's failed state and its start-rate counter, so
// a unit restarted often by deploys is not refused with "start request
// repeated too quickly" and left failed.
func (m *Manager) resetFailed(ctx context.Context, name string) error {
	err := m.conn.ResetFailedUnitContext(ctx, name)
	if err == nil || isNoSuchUnit(err) {
		return nil
	}
	return fmt.Errorf("resetting failed state of unit %q: %w", name, err)
}

// runsOnce reports whether the service is Type=oneshot without
// RemainAfterExit, i.e. one for which "inactive" after a start means done.
func (m *Manager) runsOnce(ctx context.Context, name string) (bool, error) {
	t, err := m.conn.GetServicePropertyContext(ctx, name, "Type")
	if err != nil {
		return false, fmt.Errorf("reading Type of unit %q: %w", name, err)
	}
	if typ, _ := t.Value.Value().(string); typ != "oneshot" {
		return false, nil
	}
	r, err := m.conn.GetServicePropertyContext(ctx, name, "RemainAfterExit")
	if err != nil {
		return false, fmt.Errorf("reading RemainAfterExit of unit %q: %w", name, err)
	}
	remain, _ := r.Value.Value().(bool)
	return !remain, nil
}

// isDown reports whether a stopped unit reached a resting state.
func isDown(st host.UnitState) bool {
	return st.ActiveState == "inactive" || st.ActiveState == "failed"
}

func stateResult(st host.UnitState) string {
	return "state " + st.ActiveState + "/" + st.SubState
}

func gerund(op string) string {
	if op == "stop" {
		return "stopping"
	}
	return op + "ing"
}
