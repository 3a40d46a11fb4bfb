// Package fleetsim runs a fleet of simulated pulling hosts in one process,
// for the 10,000-host benchmark (integration/bench_fleet10k_test.go,
// BENCHMARKS.md): each host is webhookd's own repository worker
// (webhookd/queue: its poll loop and spread rule, its queue, its status
// and metrics), fetching over webhookd's own clone code (webhookd/clone:
// go-git, the real wire protocol) from a real forge. Two things are
// modelled: the checkout is a prepared directory holding only the host's
// labels file (a local disk write, no load on the forge), and the apply is
// a sleep drawn from a distribution measured on real hosts.
//
// The hosts serve their metrics (webhookd/metrics, the same names and
// labels) on one listener, one path per host, so that a real Prometheus
// scrapes them as distinct targets. A Recorder keeps every fetch the
// fleet made, for the forge's load: fetches per second, latency, errors.
package fleetsim
