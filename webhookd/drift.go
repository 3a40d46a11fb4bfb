package webhookd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/syslet/syslet/pkg/drift"
	"github.com/syslet/syslet/pkg/notify"
)

// checkDrift plans the applied commit's specs read-only against the host
// (no lock, no change) and records what differs: /status, the gauges, and
// one drift notification when a unit first differs. With reconcile, a
// difference queues a deploy of the applied commit that replaces hand
// edits; without it, the check never changes the host.
func (w *worker) checkDrift() {
	w.mu.Lock()
	applied, prev := w.st.LastApplied, w.st.Drift
	w.mu.Unlock()
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
		w.log.Info().Str("busy", rep.Busy).Msg("drift check skipped: another apply is in progress")
		return
	}
	w.m.driftChecks.WithLabelValues(w.cfg.Name, resultOf(err)).Inc()
	if err != nil {
		// What was found before still stands; the error says why it was
		// not checked again.
		if prev != nil {
			ds.Drift, ds.Change, ds.Start, ds.Units = prev.Drift, prev.Change, prev.Start, prev.Units
		}
		ds.Error = err.Error()
		if prev == nil || prev.Error != ds.Error {
			w.log.Warn().Err(err).Msg("drift check failed")
		}
	} else {
		ds.Units = rep.Units
		c := drift.Count(ds.Units)
		ds.Drift, ds.Change, ds.Start = c[notify.DriftEdited], c[notify.DriftChange], c[notify.DriftStart]
		switch {
		case len(ds.Units) == 0:
			ds.Since = nil
		case ds.Since == nil:
			ds.Since = &now
		}
		news := drift.Appeared(prevUnits, ds.Units)
		switch {
		case len(news) > 0:
			var names []string
			for _, u := range news {
				names = append(names, u.Unit+" ("+u.Kind+")")
			}
			w.log.Warn().Str("commit", applied).Strs("units", names).Int("drift", ds.Drift).Int("change", ds.Change).Int("start", ds.Start).
				Msg("drift: the host differs from the applied commit")
			if rep.Event != nil {
				ev := *rep.Event
				ev.Source = notify.Source{Kind: "git", Text: fmt.Sprintf("git %s@%s", w.cfg.Name, applied), Repo: w.cfg.Name, Commit: applied, Trigger: "drift check"}
				if ev.Host == "" {
					ev.Host = w.hostname
				}
				w.notify(ev)
			}
		case len(prevUnits) > 0 && len(ds.Units) == 0:
			w.log.Info().Str("commit", applied).Msg("drift: the host is what the applied commit says again")
		}
	}
	w.saveMu.Lock()
	w.mu.Lock()
	w.st.Drift = ds
	p := w.st.persisted
	w.mu.Unlock()
	saveErr := w.save(p)
	w.saveMu.Unlock()
	w.driftGauges(ds)
	if saveErr != nil {
		w.log.Error().Err(saveErr).Msg("saving status")
	}
	if err == nil && w.cfg.Reconcile && len(ds.Units) > 0 {
		w.log.Warn().Str("commit", applied).Msg("reconcile: deploying the applied commit again, replacing hand edits")
		w.queue(push{commit: applied, trigger: "reconcile", force: true})
	}
}

// check checks out the applied commit and plans its spec directory.
func (w *worker) check(commit string) (CheckReport, error) {
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

func (w *worker) driftGauges(d *DriftStatus) {
	w.m.driftUnits.WithLabelValues(w.cfg.Name, notify.DriftEdited).Set(float64(d.Drift))
	w.m.driftUnits.WithLabelValues(w.cfg.Name, notify.DriftChange).Set(float64(d.Change))
	w.m.driftUnits.WithLabelValues(w.cfg.Name, notify.DriftStart).Set(float64(d.Start))
	if d.CheckedAt != nil {
		w.m.driftChecked.WithLabelValues(w.cfg.Name).Set(float64(d.CheckedAt.UnixMilli()) / 1000)
	}
}
