package systemd

import (
	"context"
	"errors"
	"fmt"
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

// DialWithin is Dial with a bound on the wait. The connection lives as
// long as ctx (go-systemd closes it when its dial context ends), so the
// timeout is raced here instead of put on the dial's context; a dial that
// answers after the timeout is closed.
func DialWithin(ctx context.Context, timeout time.Duration) (*Manager, error) {
	type dialed struct {
		m   *Manager
		err error
	}
	ch := make(chan dialed, 1)
	go func() {
		m, err := Dial(ctx)
		ch <- dialed{m, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case d := <-ch:
		return d.m, d.err
	case <-t.C:
		go func() {
			if d := <-ch; d.m != nil {
				d.m.Close()
			}
		}()
		return nil, fmt.Errorf("connecting to systemd did not finish within %s", timeout)
	}
}

// Close closes the D-Bus connection.
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
