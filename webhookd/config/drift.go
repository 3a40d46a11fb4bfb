package config

import "time"

// validateDrift sets how often the host is checked for drift, and
// whether a difference is reconciled.
func (r *Repo) validateDrift(f func(string) string, add func(field, format string, args ...any)) {
	r.DriftInterval = DefaultDriftInterval
	if r.Drift == nil {
		return
	}
	r.Reconcile = r.Drift.Reconcile
	switch iv := r.Drift.Interval; iv {
	case "":
	case "off":
		r.DriftInterval = 0
		if r.Reconcile {
			add(f("drift.reconcile"), "needs a drift check (interval is off)")
		}
	default:
		d, err := time.ParseDuration(iv)
		switch {
		case err != nil:
			add(f("drift.interval"), "%q is not a duration like 30s or 10m (or off)", iv)
		case d < MinDriftInterval:
			add(f("drift.interval"), "%s is shorter than the minimum %s", d, MinDriftInterval)
		default:
			r.DriftInterval = d
		}
	}
}
