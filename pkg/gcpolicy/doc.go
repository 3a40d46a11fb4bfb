// Package gcpolicy is how the syslet command sets Go's garbage collector.
//
// A syslet run is a short process whose heap is, almost entirely, what it
// is working on: the spec set, its rendering, the host's files and units,
// all live until the plan is made. With Go's default (a collection each
// time the heap doubles) a big spec set is collected several times while
// none of it is garbage yet; collecting when the heap has grown five-fold
// instead cuts that work by about a fifth of the pipeline's time
// (BENCHMARKS.md). A soft memory limit keeps that growth to what the run
// works on: it starts low (BaseLimit), so a run over little input whose
// host holds something hostile in shape stays small, and grows with the
// spec input and host files the run reads (Expect, ExpectHost), so a hundred thousand
// specs get the room they need. The daemon (webhookd) keeps Go's defaults:
// it lives long and runs many applies.
//
// Layer: ground (pkg/). It imports only the standard library, outside
// libraries and other ground packages; never render, plan, executor,
// pkg/load or pkg/app.
package gcpolicy
