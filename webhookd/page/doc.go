// Package page is webhookd's status page for people: GET / (every
// repository at a glance: what is applied, the last deploys and how each
// ended, the health gate's last verdict, drift, what is queued, the
// delivery counters) and GET /runs/{run} (one deploy: its attempt, its
// run in the journal as `syslet history RUN` shows it, its plan).
//
// Read-only: it serves GET only and offers no action. Plain HTML from
// html/template and one stylesheet, all embedded; the
// Content-Security-Policy allows that stylesheet and nothing else. It is
// drawn from the same status GET /status serves (package queue), the run
// journal and the metrics registry, by pure functions (view.go), so the
// page, /status and `syslet history` never disagree; every string from a
// host or a repository is escaped. Beyond a loopback listen address it is
// served only with the configured token.
//
// Layer: webhookd. It imports ground packages, config and queue.
package page
