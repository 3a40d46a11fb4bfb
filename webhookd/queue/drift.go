package queue

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/syslet/syslet/pkg/drift"
	"github.com/syslet/syslet/pkg/notify"
)

// checkDrift plans the applied commit's specs read-only against the host
// (no lock, no change) and records what differs: /status, the gauges, and
// one drift notification when a unit first differs. With reconcile, a
// difference queues a deploy of the applied commit that replaces hand
// edits; without it, the check never changes the host.
func (w *Worker) checkDrift() {
	st := w.board.read()
	applied, prev := st.LastApplied, st.Drift
	f := w.driftCheck(applied, prev)
	if f.busy != "" {
		w.log.Info().Str("busy", f.busy).Msg("drift check skipped: another apply is in progress")
		return
	}
	w.m.DriftChecks.WithLabelValues(w.cfg.Name, resultOf(f.err)).Inc()
	ds := f.status
	switch {
	case f.err != nil:
		if prev == nil || prev.Error != ds.Error {
			w.log.Warn().Err(f.err).Msg("drift check failed")
		}
	case len(f.appeared) > 0:
		var names []string
		for _, u := range f.appeared {
			names = append(names, u.Unit+" ("+u.Kind+")")
		}
		w.log.Warn().Str("commit", applied).Strs("units", names).Int("drift", ds.Drift).Int("change", ds.Change).Int("start", ds.Start).Int("probe", ds.Probe).
			Msg("drift: the host differs from the applied commit")
		if f.event != nil {
			ev := *f.event
			ev.Source = notify.Source{Kind: "git", Text: fmt.Sprintf("git %s@%s", w.cfg.Name, applied), Repo: w.cfg.Name, Commit: applied, Trigger: "drift check"}
			if ev.Host == "" {
				ev.Host = w.hostname
			}
			w.notify(ev)
		}
	case prev != nil && len(prev.Units) > 0 && len(ds.Units) == 0:
		w.log.Info().Str("commit", applied).Msg("drift: the host is what the applied commit says again")
	}
	saveErr := w.board.drifted(ds)
	w.driftGauges(ds)
	if saveErr != nil {
		w.log.Error().Err(saveErr).Msg("saving status")
	}
	if f.err == nil && w.cfg.Reconcile && ds.Drift+ds.Change+ds.Start > 0 {
		// A failing probe alone is not reconciled: applying the same
		// commit again changes nothing the service needs.
		w.log.Warn().Str("commit", applied).Msg("reconcile: deploying the applied commit again, replacing hand edits")
		w.push(push{commit: applied, trigger: "reconcile", force: true})
	}
}

// driftFinding is what one drift check came to.
type driftFinding struct {
	status *DriftStatus
	// appeared are the units that differ now and did not at the check
	// before; event is the drift notification for them.
	appeared []notify.DriftUnit
	event    *notify.Event
	// busy names another apply that held the lock: the check counts for
	// nothing.
	busy string
	err  error
}

// driftCheck checks the host against applied, the commit last applied;
// prev is what the check before found (nil: none yet). A check that
// fails keeps what was found before, with the error saying why it was not
// checked again.
func (w *Worker) driftCheck(applied string, prev *DriftStatus) driftFinding {
	now := time.Now().UTC()
	ds := &DriftStatus{CheckedAt: &now, Commit: applied}
	var prevUnits []notify.DriftUnit
	if prev != nil {
		ds.Since, prevUnits = prev.Since, prev.Units
	}
	var rep CheckReport
	var err error
	if applied == "" {
		err = fmt.Errorf("no commit is applied yet: nothing to compare the host with")
	} else {
		rep, err = w.check(applied)
	}
	if err == nil && rep.Busy != "" {
		return driftFinding{busy: rep.Busy}
	}
	if err != nil {
		if prev != nil {
			ds.Drift, ds.Change, ds.Start, ds.Probe, ds.Units, ds.Probes = prev.Drift, prev.Change, prev.Start, prev.Probe, prev.Units, prev.Probes
		}
		ds.Error = err.Error()
		return driftFinding{status: ds, err: err}
	}
	ds.Units, ds.Probes = rep.Units, rep.Probes
	c := drift.Count(ds.Units)
	ds.Drift, ds.Change, ds.Start, ds.Probe = c[notify.DriftEdited], c[notify.DriftChange], c[notify.DriftStart], c[notify.DriftProbe]
	switch {
	case len(ds.Units) == 0:
		ds.Since = nil
	case ds.Since == nil:
		ds.Since = &now
	}
	return driftFinding{status: ds, appeared: drift.Appeared(prevUnits, ds.Units), event: rep.Event}
}

// check checks out the applied commit and plans its spec directory.
func (w *Worker) check(commit string) (CheckReport, error) {
	ctx, cancel := context.WithTimeout(context.Background(), deployTimeout)
	defer cancel()
	dir, err := w.co.Checkout(commit)
	if err != nil {
		return CheckReport{}, err
	}
	specDir := filepath.Join(dir, filepath.FromSlash(w.cfg.SpecPath))
	if fi, err := os.Stat(specDir); err != nil || !fi.IsDir() {
		return CheckReport{}, fmt.Errorf("commit %s has no directory %q (repos[].path)", short(commit), w.cfg.SpecPath)
	}
	return w.dep.Check(ctx, DeployRequest{Repo: w.cfg.Name, Commit: commit, Dir: specDir, Source: fmt.Sprintf("git %s@%s", w.cfg.Name, commit)})
}

func (w *Worker) driftGauges(d *DriftStatus) {
	w.m.DriftUnits.WithLabelValues(w.cfg.Name, notify.DriftEdited).Set(float64(d.Drift))
	w.m.DriftUnits.WithLabelValues(w.cfg.Name, notify.DriftChange).Set(float64(d.Change))
	w.m.DriftUnits.WithLabelValues(w.cfg.Name, notify.DriftStart).Set(float64(d.Start))
	w.m.DriftUnits.WithLabelValues(w.cfg.Name, notify.DriftProbe).Set(float64(d.Probe))
	// The probes of this check only: a container gone since has no series.
	w.m.ProbeSuccess.DeletePartialMatch(prometheus.Labels{"repo": w.cfg.Name})
	w.m.ProbeLatency.DeletePartialMatch(prometheus.Labels{"repo": w.cfg.Name})
	for _, p := range d.Probes {
		if p.Answer == nil {
			continue // not asked: the service is not up, which start counts
		}
		ok := 0.0
		if p.Answer.OK {
			ok = 1
		}
		w.m.ProbeSuccess.WithLabelValues(w.cfg.Name, p.Service).Set(ok)
		w.m.ProbeLatency.WithLabelValues(w.cfg.Name, p.Service).Set(p.Answer.Took.Seconds())
	}
	if d.CheckedAt != nil {
		w.m.DriftChecked.WithLabelValues(w.cfg.Name).Set(float64(d.CheckedAt.UnixMilli()) / 1000)
	}
}
