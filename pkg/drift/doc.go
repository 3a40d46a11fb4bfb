// Package drift keeps what a drift check needs between checks: which
// units differed last time (so that a drift is told once, when it first
// appears, not on every check) and, for syslet's own notifications, how
// many deliveries each target made, failed or dropped; and it writes a
// check's result as a Prometheus textfile for node_exporter's textfile
// collector (gauges of differing units by kind, each running container's
// readiness probe as the check asked it, the time of the check, whether
// it could plan, and the delivery counters).
//
// The check itself is a read-only plan made by pkg/app/deploy; this
// package only compares, remembers and writes.
//
// Layer: ground. It imports pkg/notify, pkg/layout, pkg/host (a probe's
// answer) and the Prometheus client libraries.
package drift
