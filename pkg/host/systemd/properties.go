package systemd

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/syslet/syslet/pkg/host"
)

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

// LastStarted returns when systemd last began to start each service
// (zero time: not that systemd can tell): the moment it left "inactive",
// which a start job passes before its first Exec line runs — so a oneshot
// that is still running, or that ran and ended, counts as started — or,
// for a service systemd has unloaded since (an inactive oneshot nothing
// refers to is collected, its timestamps with it), the last "Starting"
// message PID 1 wrote for it to the journal. A service with a start job
// still queued in systemd (waiting for its dependencies) counts as
// starting now: that job will run it. A run resuming one killed in step 9
// reads this so that it never runs a oneshot a second time.
func (m *Manager) LastStarted(ctx context.Context, names []string) (map[string]time.Time, error) {
	vals, err := m.properties(ctx, names, func(ctx context.Context, name string) (any, error) {
		p, err := m.conn.GetUnitPropertyContext(ctx, name, "InactiveExitTimestamp")
		if err != nil {
			return nil, err
		}
		return p.Value.Value(), nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading InactiveExitTimestamp: %w", err)
	}
	out := map[string]time.Time{}
	for n, v := range vals {
		if us, _ := v.(uint64); us > 0 {
			out[n] = time.UnixMicro(int64(us))
		} else {
			out[n] = time.Time{}
		}
	}
	logged, err := m.startsLogged(ctx, names)
	if err != nil {
		return nil, err
	}
	for n, t := range logged {
		if t.After(out[n]) {
			out[n] = t
		}
	}
	jobs, err := m.conn.ListJobsContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing systemd's jobs: %w", err)
	}
	for _, j := range jobs {
		if slices.Contains(names, j.Unit) && (j.JobType == "start" || j.JobType == "restart") {
			out[j.Unit] = time.Now()
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

// Health reads what the health gate judges each service by: its states,
// its last result, how its main process ended, and systemd's restart
// counters. Two calls a unit (the Unit and the Service interface).
func (m *Manager) Health(ctx context.Context, names []string) (map[string]host.UnitHealth, error) {
	vals, err := m.properties(ctx, names, func(ctx context.Context, name string) (any, error) {
		u, err := m.conn.GetUnitPropertiesContext(ctx, name)
		if err != nil {
			return nil, err
		}
		s, err := m.conn.GetUnitTypePropertiesContext(ctx, name, "Service")
		if err != nil {
			return nil, err
		}
		h := host.UnitHealth{
			ActiveState: str(u["ActiveState"]), SubState: str(u["SubState"]),
			InvocationID: invocation(u["InvocationID"]),
			Result:       str(s["Result"]),
		}
		h.NRestarts, _ = s["NRestarts"].(uint32)
		h.ExecMainCode, _ = s["ExecMainCode"].(int32)
		h.ExecMainStatus, _ = s["ExecMainStatus"].(int32)
		return h, nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading unit health: %w", err)
	}
	out := make(map[string]host.UnitHealth, len(vals))
	for n, v := range vals {
		out[n], _ = v.(host.UnitHealth)
	}
	return out, nil
}

func str(v any) string { s, _ := v.(string); return s }

// invocation formats systemd's InvocationID (128 bits as a byte array)
// as the hex systemctl shows.
func invocation(v any) string {
	b, ok := v.([]byte)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%x", b)
}
