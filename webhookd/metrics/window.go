package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// WindowState is where a repository's maintenance windows stand at a
// scrape: open (a window or an override lets a commit be applied now),
// a commit waiting for the next opening, and that opening (zero: none).
type WindowState struct {
	Open, Waiting bool
	Next          time.Time
}

// The windows' series, one each per repository with windows; they are
// read at each scrape, so a dashboard sees a window open on time.
var (
	windowOpenOpts = prometheus.GaugeOpts{
		Name: "webhookd_window_open",
		Help: "1 while the repository's new commits are applied (a maintenance window is open, or webhookd --open-window holds it open), 0 outside its windows; only repositories with windows.",
	}
	windowWaitingOpts = prometheus.GaugeOpts{
		Name: "webhookd_window_waiting",
		Help: "1 while a commit of the repository is queued outside its windows, waiting for the next opening.",
	}
	windowNextOpts = prometheus.GaugeOpts{
		Name: "webhookd_window_next_open_timestamp_seconds",
		Help: "Unix time the repository's next maintenance window opens (0 when none opens again).",
	}
)

// WatchWindow exports the repository's windows as state says at each
// scrape.
func (m *Set) WatchWindow(repo string, state func() WindowState) {
	labels := prometheus.Labels{"repo": repo}
	gauge := func(opts prometheus.GaugeOpts, value func(WindowState) float64) prometheus.Collector {
		opts.ConstLabels = labels
		return prometheus.NewGaugeFunc(opts, func() float64 { return value(state()) })
	}
	m.Reg.MustRegister(
		gauge(windowOpenOpts, func(s WindowState) float64 { return boolValue(s.Open) }),
		gauge(windowWaitingOpts, func(s WindowState) float64 { return boolValue(s.Waiting) }),
		gauge(windowNextOpts, func(s WindowState) float64 {
			if s.Next.IsZero() {
				return 0
			}
			return float64(s.Next.Unix())
		}),
	)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
