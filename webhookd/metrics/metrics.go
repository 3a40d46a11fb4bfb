package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/webhookd/config"
)

// Delivery outcomes, the "outcome" label of webhookd_deliveries_total.
const (
	OutcomeAccepted     = "accepted"     // a push of the branch, queued for deploy (202)
	OutcomeIgnored      = "ignored"      // verified, but not a push of the branch (202)
	OutcomePing         = "ping"         // GitHub's ping (200)
	OutcomeUnauthorized = "unauthorized" // unsigned or wrongly signed (401)
	OutcomeReplayed     = "replayed"     // delivery id seen before (409)
	OutcomeTooLarge     = "too_large"    // body over 1 MiB (413)
	OutcomeBadRequest   = "bad_request"  // verified, but the payload is unreadable (400)
	OutcomeUnknownRepo  = "unknown_repo" // no such repository configured (404)
)

// Set is webhookd's Prometheus series, in their own registry. Label
// values come from the configuration only (an unknown repository is
// counted as ""), so a flood of junk requests cannot grow the series set.
type Set struct {
	Reg         *prometheus.Registry
	Deliveries  *prometheus.CounterVec
	Deploys     *prometheus.CounterVec
	Duration    *prometheus.HistogramVec
	LastSuccess *prometheus.GaugeVec
	Fetches     *prometheus.CounterVec
	InProgress  *prometheus.GaugeVec
	// What a fleet dashboard shows per host: the applied commit and how
	// the last attempt ended.
	Applied    *prometheus.GaugeVec
	LastResult *prometheus.GaugeVec
	// The fleet's view (fleet.go): the commit of the last attempt, and
	// the host's name and labels.
	LastCommit *prometheus.GaugeVec
	hostInfo   *hostInfo
	// Drift checks, notifications and commit statuses.
	DriftUnits   *prometheus.GaugeVec
	DriftChecked *prometheus.GaugeVec
	DriftChecks  *prometheus.CounterVec
	// The running containers' readiness probes, as the last drift check
	// asked them: one series per service.
	ProbeSuccess  *prometheus.GaugeVec
	ProbeLatency  *prometheus.GaugeVec
	Notifications *prometheus.CounterVec
	Statuses      *prometheus.CounterVec
	Refusals      *prometheus.CounterVec
	// The clone's packs and their repacks.
	Packs   *prometheus.GaugeVec
	Repacks *prometheus.CounterVec

	// results are the results a deploy attempt can end with (the queue's).
	results []string
}

// Repack results, the "result" label of webhookd_git_repacks_total.
const (
	RepackMerged  = "merged"  // small packs rolled up into one
	RepackFailed  = "failed"  // an error or the time bound; the clone is as it was
	RepackStopped = "stopped" // a push or a shutdown came first; the clone is as it was
)

// New makes the series of the repositories, the notification targets
// (their names) and the results a deploy attempt can end with, each at
// zero.
func New(repos []config.Repo, targets, results []string) *Set {
	m := &Set{
		results: results,
		Reg:     prometheus.NewRegistry(),
		Deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_deliveries_total",
			Help: "Webhook deliveries received, by repository and outcome.",
		}, []string{"repo", "outcome"}),
		Deploys: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_deploys_total",
			Help: "Deploy attempts, by repository and result (success, failed, skipped).",
		}, []string{"repo", "result"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "webhookd_deploy_duration_seconds",
			Help:    "Duration of deploy attempts (fetch, checkout and apply), by repository and result.",
			Buckets: []float64{0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800},
		}, []string{"repo", "result"}),
		LastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_last_success_timestamp_seconds",
			Help: "Unix time the last successful deploy of the repository finished.",
		}, []string{"repo"}),
		Fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_git_fetches_total",
			Help: "Fetches from the repository's remote, by result (ok, error).",
		}, []string{"repo", "result"}),
		InProgress: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_deploy_in_progress",
			Help: "1 while a deploy of the repository runs.",
		}, []string{"repo"}),
		Applied: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_applied_commit_info",
			Help: "1 for the commit applied last from the repository (one series per repository: the previous commit's is deleted).",
		}, []string{"repo", "commit"}),
		LastResult: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_last_deploy_result",
			Help: "1 for how the repository's last deploy attempt ended (success, failed, skipped, rolled-back), 0 for the others.",
		}, []string{"repo", "result"}),
		DriftUnits: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_drift_units",
			Help: "Units that differ from the applied commit at the last drift check, by repository and kind: drift (edited by hand), change (an apply would change them), start (not running), probe (running, but its readiness probe fails).",
		}, []string{"repo", "kind"}),
		DriftChecked: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_drift_last_check_timestamp_seconds",
			Help: "Unix time of the repository's last drift check.",
		}, []string{"repo"}),
		DriftChecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_drift_checks_total",
			Help: "Drift checks, by repository and result (ok, error).",
		}, []string{"repo", "result"}),
		ProbeSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_probe_success",
			Help: "1 when the service's readiness probe passed at the repository's last drift check, 0 when it failed (no series for a service that was not up).",
		}, []string{"repo", "service"}),
		ProbeLatency: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_probe_duration_seconds",
			Help: "How long the service's readiness probe took at the repository's last drift check.",
		}, []string{"repo", "service"}),
		Notifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_notifications_total",
			Help: "Notifications, by target and result (sent, failed, dropped).",
		}, []string{"target", "result"}),
		Statuses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_commit_statuses_total",
			Help: "Commit statuses set on the forge, by repository and result (sent, failed, dropped).",
		}, []string{"repo", "result"}),
		Packs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_git_packs",
			Help: "Pack files in the repository's private clone after its last repack check (they stay few: small packs are rolled up between deploys).",
		}, []string{"repo"}),
		Repacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_git_repacks_total",
			Help: "Repacks of the repository's clone that merged packs, by result (merged, failed, stopped).",
		}, []string{"repo", "result"}),
		Refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_signature_refusals_total",
			Help: "Commits refused before checkout by the signature check, by repository and reason (unsigned, unknown-key, bad-signature, key-not-yet-valid, key-expired).",
		}, []string{"repo", "reason"}),
	}
	m.Reg.MustRegister(m.Deliveries, m.Deploys, m.Duration, m.LastSuccess, m.Fetches, m.InProgress, m.Applied, m.LastResult,
		m.DriftUnits, m.DriftChecked, m.DriftChecks, m.ProbeSuccess, m.ProbeLatency, m.Notifications, m.Statuses, m.Packs, m.Repacks, m.Refusals,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.newFleet()
	m.zero(repos, targets)
	return m
}

// zero makes every series exist from the start, at zero: a dashboard or
// an alert on "failed" works before the first failure.
func (m *Set) zero(repos []config.Repo, targets []string) {
	for _, r := range repos {
		for _, o := range []string{OutcomeAccepted, OutcomeIgnored, OutcomePing, OutcomeUnauthorized, OutcomeReplayed, OutcomeTooLarge, OutcomeBadRequest} {
			m.Deliveries.WithLabelValues(r.Name, o)
		}
		for _, res := range m.results {
			m.Deploys.WithLabelValues(r.Name, res)
			m.LastResult.WithLabelValues(r.Name, res)
		}
		if r.DriftInterval > 0 {
			for _, k := range []string{notify.DriftEdited, notify.DriftChange, notify.DriftStart, notify.DriftProbe} {
				m.DriftUnits.WithLabelValues(r.Name, k)
			}
			m.DriftChecks.WithLabelValues(r.Name, "ok")
			m.DriftChecks.WithLabelValues(r.Name, "error")
		}
		if r.Verify != nil {
			for _, reason := range commitsig.Reasons {
				m.Refusals.WithLabelValues(r.Name, string(reason))
			}
		}
		if r.Status != nil {
			for _, res := range outcomes {
				m.Statuses.WithLabelValues(r.Name, res)
			}
		}
		for _, res := range []string{RepackMerged, RepackFailed, RepackStopped} {
			m.Repacks.WithLabelValues(r.Name, res)
		}
		m.Packs.WithLabelValues(r.Name)
		m.Fetches.WithLabelValues(r.Name, "ok")
		m.Fetches.WithLabelValues(r.Name, "error")
		m.InProgress.WithLabelValues(r.Name)
	}
	m.Deliveries.WithLabelValues("", OutcomeUnknownRepo)
	for _, t := range targets {
		for _, res := range outcomes {
			m.Notifications.WithLabelValues(t, res)
		}
	}
}

// SetApplied makes commit the repository's one applied-commit series.
func (m *Set) SetApplied(repo, commit string) {
	m.Applied.DeletePartialMatch(prometheus.Labels{"repo": repo})
	m.Applied.WithLabelValues(repo, commit).Set(1)
}

// SetLastResult marks how the repository's last attempt ended.
func (m *Set) SetLastResult(repo, result string) {
	for _, res := range m.results {
		v := 0.0
		if res == result {
			v = 1
		}
		m.LastResult.WithLabelValues(repo, res).Set(v)
	}
}

// outcomes are the results of a notification or status delivery.
var outcomes = []string{notify.OutcomeSent, notify.OutcomeFailed, notify.OutcomeDropped}
