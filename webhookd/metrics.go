package webhookd

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/pkg/notify"
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

// metrics are webhookd's Prometheus series, in their own registry. Label
// values come from the configuration only (an unknown repository is
// counted as ""), so a flood of junk requests cannot grow the series set.
type metrics struct {
	reg         *prometheus.Registry
	deliveries  *prometheus.CounterVec
	deploys     *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	lastSuccess *prometheus.GaugeVec
	fetches     *prometheus.CounterVec
	inProgress  *prometheus.GaugeVec
	// What a fleet dashboard shows per host: the applied commit and how
	// the last attempt ended.
	applied    *prometheus.GaugeVec
	lastResult *prometheus.GaugeVec
	// Drift checks, notifications and commit statuses.
	driftUnits    *prometheus.GaugeVec
	driftChecked  *prometheus.GaugeVec
	driftChecks   *prometheus.CounterVec
	notifications *prometheus.CounterVec
	statuses      *prometheus.CounterVec
	refusals      *prometheus.CounterVec
	// The clone's packs and their repacks.
	packs   *prometheus.GaugeVec
	repacks *prometheus.CounterVec
}

// Repack results, the "result" label of webhookd_git_repacks_total.
const (
	RepackMerged  = "merged"  // small packs rolled up into one
	RepackFailed  = "failed"  // an error or the time bound; the clone is as it was
	RepackStopped = "stopped" // a push or a shutdown came first; the clone is as it was
)

func newMetrics(repos []Repo, targets []string) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_deliveries_total",
			Help: "Webhook deliveries received, by repository and outcome.",
		}, []string{"repo", "outcome"}),
		deploys: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_deploys_total",
			Help: "Deploy attempts, by repository and result (success, failed, skipped).",
		}, []string{"repo", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "webhookd_deploy_duration_seconds",
			Help:    "Duration of deploy attempts (fetch, checkout and apply), by repository and result.",
			Buckets: []float64{0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800},
		}, []string{"repo", "result"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_last_success_timestamp_seconds",
			Help: "Unix time the last successful deploy of the repository finished.",
		}, []string{"repo"}),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_git_fetches_total",
			Help: "Fetches from the repository's remote, by result (ok, error).",
		}, []string{"repo", "result"}),
		inProgress: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_deploy_in_progress",
			Help: "1 while a deploy of the repository runs.",
		}, []string{"repo"}),
		applied: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_applied_commit_info",
			Help: "1 for the commit applied last from the repository (one series per repository: the previous commit's is deleted).",
		}, []string{"repo", "commit"}),
		lastResult: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_last_deploy_result",
			Help: "1 for how the repository's last deploy attempt ended (success, failed, skipped, rolled-back), 0 for the others.",
		}, []string{"repo", "result"}),
		driftUnits: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_drift_units",
			Help: "Units that differ from the applied commit at the last drift check, by repository and kind: drift (edited by hand), change (an apply would change them), start (not running).",
		}, []string{"repo", "kind"}),
		driftChecked: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_drift_last_check_timestamp_seconds",
			Help: "Unix time of the repository's last drift check.",
		}, []string{"repo"}),
		driftChecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_drift_checks_total",
			Help: "Drift checks, by repository and result (ok, error).",
		}, []string{"repo", "result"}),
		notifications: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_notifications_total",
			Help: "Notifications, by target and result (sent, failed, dropped).",
		}, []string{"target", "result"}),
		statuses: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_commit_statuses_total",
			Help: "Commit statuses set on the forge, by repository and result (sent, failed, dropped).",
		}, []string{"repo", "result"}),
		packs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "webhookd_git_packs",
			Help: "Pack files in the repository's private clone after its last repack check (they stay few: small packs are rolled up between deploys).",
		}, []string{"repo"}),
		repacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_git_repacks_total",
			Help: "Repacks of the repository's clone that merged packs, by result (merged, failed, stopped).",
		}, []string{"repo", "result"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhookd_signature_refusals_total",
			Help: "Commits refused before checkout by the signature check, by repository and reason (unsigned, unknown-key, bad-signature, key-not-yet-valid, key-expired).",
		}, []string{"repo", "reason"}),
	}
	m.reg.MustRegister(m.deliveries, m.deploys, m.duration, m.lastSuccess, m.fetches, m.inProgress, m.applied, m.lastResult,
		m.driftUnits, m.driftChecked, m.driftChecks, m.notifications, m.statuses, m.packs, m.repacks, m.refusals,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Every series exists from the start, at zero: a dashboard or an alert
	// on "failed" works before the first failure.
	for _, r := range repos {
		for _, o := range []string{OutcomeAccepted, OutcomeIgnored, OutcomePing, OutcomeUnauthorized, OutcomeReplayed, OutcomeTooLarge, OutcomeBadRequest} {
			m.deliveries.WithLabelValues(r.Name, o)
		}
		for _, res := range deployResults {
			m.deploys.WithLabelValues(r.Name, res)
			m.lastResult.WithLabelValues(r.Name, res)
		}
		if r.DriftInterval > 0 {
			for _, k := range []string{notify.DriftEdited, notify.DriftChange, notify.DriftStart} {
				m.driftUnits.WithLabelValues(r.Name, k)
			}
			m.driftChecks.WithLabelValues(r.Name, "ok")
			m.driftChecks.WithLabelValues(r.Name, "error")
		}
		if r.Verify != nil {
			for _, reason := range commitsig.Reasons {
				m.refusals.WithLabelValues(r.Name, string(reason))
			}
		}
		if r.Status != nil {
			for _, res := range outcomes {
				m.statuses.WithLabelValues(r.Name, res)
			}
		}
		for _, res := range []string{RepackMerged, RepackFailed, RepackStopped} {
			m.repacks.WithLabelValues(r.Name, res)
		}
		m.packs.WithLabelValues(r.Name)
		m.fetches.WithLabelValues(r.Name, "ok")
		m.fetches.WithLabelValues(r.Name, "error")
		m.inProgress.WithLabelValues(r.Name)
	}
	m.deliveries.WithLabelValues("", OutcomeUnknownRepo)
	for _, t := range targets {
		for _, res := range outcomes {
			m.notifications.WithLabelValues(t, res)
		}
	}
	return m
}

// deployResults are the results of a deploy attempt.
var deployResults = []string{ResultSuccess, ResultFailed, ResultSkipped, ResultRolledBack}

// setApplied makes commit the repository's one applied-commit series.
func (m *metrics) setApplied(repo, commit string) {
	m.applied.DeletePartialMatch(prometheus.Labels{"repo": repo})
	m.applied.WithLabelValues(repo, commit).Set(1)
}

// setLastResult marks how the repository's last attempt ended.
func (m *metrics) setLastResult(repo, result string) {
	for _, res := range deployResults {
		v := 0.0
		if res == result {
			v = 1
		}
		m.lastResult.WithLabelValues(repo, res).Set(v)
	}
}

// outcomes are the results of a notification or status delivery.
var outcomes = []string{notify.OutcomeSent, notify.OutcomeFailed, notify.OutcomeDropped}
