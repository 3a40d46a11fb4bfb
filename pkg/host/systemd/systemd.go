package systemd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	sd "github.com/coreos/go-systemd/v22/dbus"
	godbus "github.com/godbus/dbus/v5"

	"github.com/syslet/syslet/pkg/host"
)

// noSuchUnit is the D-Bus error systemd answers with when a call names a unit
// it has not loaded ("Unit x.service not loaded." / "... not found.").
const noSuchUnit = "org.freedesktop.systemd1.NoSuchUnit"

// Manager is one connection to systemd's manager on the system bus. It is
// safe for concurrent use; Close it when the run ends.
type Manager struct {
	conn *sd.Conn
	// journalctl is the program LastLog runs; tests point it at a fake.
	journalctl string
}

// Dial connects to systemd through the system bus. The connection is meant
// to be shared by every call of one run: go-systemd opens two sockets per
// connection (calls and job signals), so dialling per call would cost
// authentication twice each time.
func Dial(ctx context.Context) (*Manager, error) {
	conn, err := sd.NewSystemConnectionContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("connecting to systemd over the system bus: %w", err)
	}
	return &Manager{conn: conn, journalctl: "journalctl"}, nil
}

// Close releases the D-Bus connection.
func (m *Manager) Close() { m.conn.Close() }

// UnitStates returns the state of every named unit, keyed by the name as
// given, in one D-Bus call. A unit systemd knows nothing about is reported
// with LoadState "not-found" and ActiveState "inactive", not as an error.
func (m *Manager) UnitStates(ctx context.Context, names []string) (map[string]host.UnitState, error) {
	out := make(map[string]host.UnitState, len(names))
	if len(names) == 0 {
		return out, nil
	}
	list, err := m.conn.ListUnitsByNamesContext(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("listing units %q: %w", names, err)
	}
	// systemd answers in request order, one entry per name, under the unit's
	// primary name; keying by the requested name keeps aliases findable. It
	// skips names that are not valid unit names, so then match by name.
	positional := len(list) == len(names)
	for i, u := range list {
		name := u.Name
		if positional {
			name = names[i]
		}
		out[name] = host.UnitState{Name: name, LoadState: u.LoadState, ActiveState: u.ActiveState, SubState: u.SubState}
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("listing unit %q: systemd returned no state (not a valid unit name?)", n)
		}
	}
	return out, nil
}

// DaemonReload makes systemd re-read unit files and re-run generators (the
// quadlet generator among them). It returns once the reload has finished.
func (m *Manager) DaemonReload(ctx context.Context) error {
	if err := m.conn.ReloadContext(ctx); err != nil {
		return fmt.Errorf("reloading systemd unit files: %w", err)
	}
	return nil
}

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

type queueFunc func(ctx context.Context, name, mode string, ch chan<- string) (int, error)

// Jobs queues the same job for every named unit at once and reports each
// unit's result through landed as its job ends, with the same meaning as
// Start, Stop and Reload give it for one unit. systemd runs the jobs side
// by side and orders them itself (After=, Requires= and Wants= of the
// quadlet units), so N starts take about as long as the slowest one rather
// than the sum. Starts first reset every unit's failed state (resetAll);
// then the jobs are queued one after another in the given order, one D-Bus
// round trip each (go-systemd serialises job calls that report results),
// before any result is awaited;
// landed is called from Jobs' own goroutine, in the order the jobs end,
// once per unit. ctx bounds the wait of every unit.
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
	if op == host.JobStart {
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

// job queues one job in mode "replace" and waits for its result (Restart,
// which the executor does not batch). The result channel is buffered:
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

// checkUp turns a "done" job whose unit is not up into a *host.JobError.
func (m *Manager) checkUp(ctx context.Context, op, name string) error {
	st, err := m.state(ctx, name)
	if err != nil {
		return fmt.Errorf("checking unit %q after %s: %w", name, op, err)
	}
	return m.endState(ctx, op, name, st)
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

func (m *Manager) state(ctx context.Context, name string) (host.UnitState, error) {
	states, err := m.UnitStates(ctx, []string{name})
	if err != nil {
		return host.UnitState{}, err
	}
	return states[name], nil
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

func isNoSuchUnit(err error) bool {
	var de godbus.Error
	if errors.As(err, &de) {
		return de.Name == noSuchUnit
	}
	var dp *godbus.Error
	return errors.As(err, &dp) && dp.Name == noSuchUnit
}

// classify marks systemd's "no such unit" answer as host.ErrNotFound while
// keeping systemd's own message.
func classify(err error) error {
	if isNoSuchUnit(err) {
		return notFound{err}
	}
	return err
}

type notFound struct{ err error }

func (e notFound) Error() string   { return e.err.Error() }
func (e notFound) Unwrap() []error { return []error{host.ErrNotFound, e.err} }

// propertyWorkers bounds the D-Bus property reads in flight at once: one
// connection carries them all, and systemd answers them in order, so a few
// dozen outstanding calls keep it busy without flooding the bus.
const propertyWorkers = 32

// NeedDaemonReload returns the units whose unit files (for a quadlet
// service: its source file under /etc/containers/systemd) changed since
// systemd loaded them. Units systemd has not loaded are skipped.
func (m *Manager) NeedDaemonReload(ctx context.Context, names []string) (map[string]bool, error) {
	vals, err := m.properties(ctx, names, func(ctx context.Context, name string) (any, error) {
		p, err := m.conn.GetUnitPropertyContext(ctx, name, "NeedDaemonReload")
		if err != nil {
			return nil, err
		}
		return p.Value.Value(), nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading NeedDaemonReload: %w", err)
	}
	out := map[string]bool{}
	for n, v := range vals {
		if b, _ := v.(bool); b {
			out[n] = true
		}
	}
	return out, nil
}

// UnitsLoadedAt returns when systemd last loaded its unit files (at boot
// or the last daemon-reload): a unit file modified later may need a
// daemon-reload, none older can.
func (m *Manager) UnitsLoadedAt(ctx context.Context) (time.Time, error) {
	v, err := m.conn.GetManagerProperty("UnitsLoadTimestamp")
	if err != nil {
		return time.Time{}, fmt.Errorf("reading UnitsLoadTimestamp: %w", err)
	}
	// The variant prints as "@t <microseconds>".
	us, err := strconv.ParseUint(strings.TrimPrefix(v, "@t "), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading UnitsLoadTimestamp %q: %w", v, err)
	}
	return time.UnixMicro(int64(us)), nil
}

// LastStarted returns when systemd last started each service's main
// process (zero time: never since boot).
func (m *Manager) LastStarted(ctx context.Context, names []string) (map[string]time.Time, error) {
	vals, err := m.properties(ctx, names, func(ctx context.Context, name string) (any, error) {
		p, err := m.conn.GetServicePropertyContext(ctx, name, "ExecMainStartTimestamp")
		if err != nil {
			return nil, err
		}
		return p.Value.Value(), nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading ExecMainStartTimestamp: %w", err)
	}
	out := map[string]time.Time{}
	for n, v := range vals {
		if us, _ := v.(uint64); us > 0 {
			out[n] = time.UnixMicro(int64(us))
		} else {
			out[n] = time.Time{}
		}
	}
	return out, nil
}

// properties reads one value per unit with a bounded number of calls in
// flight. Units systemd does not know are left out of the result.
func (m *Manager) properties(ctx context.Context, names []string, get func(context.Context, string) (any, error)) (map[string]any, error) {
	type answer struct {
		name string
		v    any
		err  error
	}
	work := make(chan string)
	answers := make(chan answer, len(names))
	var wg sync.WaitGroup
	for range min(propertyWorkers, len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				v, err := get(ctx, n)
				answers <- answer{n, v, err}
			}
		}()
	}
	for _, n := range names {
		work <- n
	}
	close(work)
	wg.Wait()
	close(answers)
	out := make(map[string]any, len(names))
	for a := range answers {
		switch {
		case a.err == nil:
			out[a.name] = a.v
		case isNoSuchUnit(a.err):
		default:
			return nil, fmt.Errorf("unit %q: %w", a.name, a.err)
		}
	}
	return out, nil
}
