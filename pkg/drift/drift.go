package drift

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/notify"
)

// Kinds are the kinds of difference, in the order gauges list them.
var Kinds = []string{notify.DriftEdited, notify.DriftChange, notify.DriftStart, notify.DriftStaleImage, notify.DriftProbe}

// Count tallies units by kind; every kind is present.
func Count(units []notify.DriftUnit) map[string]int {
	out := map[string]int{}
	for _, k := range Kinds {
		out[k] = 0
	}
	for _, u := range units {
		out[u.Kind]++
	}
	return out
}

// Appeared are the units of now that were not in last, with the same
// kind: what a drift notification tells. A unit that still differs the
// same way is old news; one that differs another way now is news again.
func Appeared(last, now []notify.DriftUnit) []notify.DriftUnit {
	seen := map[string]bool{}
	for _, u := range last {
		seen[u.Unit+"\x00"+u.Kind] = true
	}
	var out []notify.DriftUnit
	for _, u := range now {
		if !seen[u.Unit+"\x00"+u.Kind] {
			out = append(out, u)
		}
	}
	return out
}

// State is what syslet's own checks and notifications remember, in
// layout.NotifyState.
type State struct {
	// Drift is what the last check found differing; Since is when the
	// oldest of it was first found (zero: nothing differs).
	Drift   []notify.DriftUnit `json:"drift,omitempty"`
	Since   time.Time          `json:"since,omitzero"`
	Checked time.Time          `json:"checked,omitzero"`
	// Deliveries counts notifications by target and outcome (sent,
	// failed, dropped).
	Deliveries map[string]map[string]int `json:"deliveries,omitempty"`
}

// stateKind is the state file as syslet reads it back: its own, a regular
// file, small.
var stateKind = bounded.Kind{What: "the notification state", Max: 4 << 20}

// Update reads the state under root, lets change modify it, and writes it
// back, under a lock shared by every syslet process on the host. A state
// file that cannot be read is started afresh (with the reason returned in
// warn); one that cannot be written is an error.
func Update(root string, change func(*State)) (warn string, err error) {
	lockPath := layout.Under(root, layout.NotifyLock)
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o700); err != nil {
		return "", err
	}
	// syslet's own state: never through a link planted at its name, never
	// blocking on a FIFO.
	lf, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return "", &bounded.NotRegularError{Path: lockPath, Mode: fs.ModeSymlink}
	}
	if err != nil {
		return "", err
	}
	defer lf.Close()
	if fi, err := lf.Stat(); err != nil {
		return "", err
	} else if !fi.Mode().IsRegular() {
		return "", &bounded.NotRegularError{Path: lockPath, Mode: fi.Mode()}
	}
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	path := layout.Under(root, layout.NotifyState)
	var st State
	switch b, err := bounded.ReadFile(path, stateKind); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		warn = fmt.Sprintf("%s: %v; starting afresh", layout.NotifyState, err)
	default:
		if err := json.Unmarshal(b, &st); err != nil {
			warn = fmt.Sprintf("%s: %v; starting afresh", layout.NotifyState, err)
			st = State{}
		}
	}
	change(&st)
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return warn, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return warn, err
	}
	return warn, bounded.WriteState(path, append(b, '\n'), 0o600)
}

// Record takes a check's differing units into the state and returns the
// ones that appeared since the last check.
func (st *State) Record(now []notify.DriftUnit, at time.Time) []notify.DriftUnit {
	news := Appeared(st.Drift, now)
	switch {
	case len(now) == 0:
		st.Since = time.Time{}
	case st.Since.IsZero():
		st.Since = at
	}
	st.Drift, st.Checked = now, at
	return news
}

// Count adds one delivery result.
func (st *State) Count(r notify.Result) {
	if st.Deliveries == nil {
		st.Deliveries = map[string]map[string]int{}
	}
	if st.Deliveries[r.Target] == nil {
		st.Deliveries[r.Target] = map[string]int{}
	}
	st.Deliveries[r.Target][r.Outcome]++
}

// Check is one check's result as the textfile shows it.
type Check struct {
	At    time.Time
	OK    bool               // the plan was made; false: invalid specs, an unreadable host
	Units []notify.DriftUnit // when OK
	// Probes are the running containers' readiness probes, each asked
	// once, with its answer (when OK).
	Probes []host.Probed
	// Deliveries are the notification counters (State.Deliveries).
	Deliveries map[string]map[string]int
}

// Textfile is a check in Prometheus's text format.
func Textfile(c Check) ([]byte, error) {
	reg := prometheus.NewRegistry()
	units := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "syslet_drift_units",
		Help: "Units that differ from the applied specs, by kind: drift (edited by hand; an apply leaves them), change (an apply would change them), start (not running; an apply would start them), stale-image (a container runs an older image than its tag names on the host; syslet update restarts it), probe (running, but its readiness probe fails; no apply mends it).",
	}, []string{"kind"})
	probeOK := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "syslet_probe_success",
		Help: "1 when the service's readiness probe passed at the last drift check, 0 when it failed (no series for a service that was not up).",
	}, []string{"service"})
	probeTook := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "syslet_probe_duration_seconds",
		Help: "How long the service's readiness probe took at the last drift check.",
	}, []string{"service"})
	last := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "syslet_drift_last_check_timestamp_seconds",
		Help: "Unix time of the last drift check.",
	})
	ok := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "syslet_drift_check_success",
		Help: "1 when the last drift check could plan, 0 when it failed (invalid specs, an unreadable host); the unit gauges are then absent.",
	})
	sent := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "syslet_notifications_total",
		Help: "Notifications of syslet's runs, by target and result (sent, failed, dropped).",
	}, []string{"target", "result"})
	reg.MustRegister(units, last, ok, sent, probeOK, probeTook)
	last.Set(float64(c.At.UnixMilli()) / 1000)
	if c.OK {
		ok.Set(1)
		for k, n := range Count(c.Units) {
			units.WithLabelValues(k).Set(float64(n))
		}
		for _, p := range c.Probes {
			if p.Answer == nil {
				continue // not asked: the service is not up
			}
			v := 0.0
			if p.Answer.OK {
				v = 1
			}
			probeOK.WithLabelValues(p.Service).Set(v)
			probeTook.WithLabelValues(p.Service).Set(p.Answer.Took.Seconds())
		}
	}
	targets := make([]string, 0, len(c.Deliveries))
	for t := range c.Deliveries {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	for _, t := range targets {
		for _, res := range []string{notify.OutcomeSent, notify.OutcomeFailed, notify.OutcomeDropped} {
			sent.WithLabelValues(t, res).Add(float64(c.Deliveries[t][res]))
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// WriteTextfile writes a check to path atomically (node_exporter never
// reads half a file), readable by everyone: node_exporter does not run as
// root, and the file holds counts and times only.
func WriteTextfile(path string, c Check) error {
	b, err := Textfile(c)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return bounded.WriteState(path, b, 0o644)
}
