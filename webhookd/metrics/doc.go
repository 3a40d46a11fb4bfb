// Package metrics is webhookd's Prometheus series, in a registry of their
// own, each created at zero when the daemon starts: one home for their
// names, help texts and label values (webhookd(8) lists the series and
// the delivery outcomes from metrics.go). Label values come from the
// configuration and fixed vocabularies only, so no request can grow the
// set of series.
//
// Layer: webhookd. It imports ground packages, and config.
package metrics
