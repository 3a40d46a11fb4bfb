package systemd

import (
	"context"
	"fmt"
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
