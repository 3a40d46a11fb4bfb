// Package specgen generates spec sets of any size in spec format v1, for
// benchmarks: N containers sharing a few images, grouped onto shared
// volumes and networks, each with config files and a config dir. The same
// generator feeds the pure-pipeline benchmarks (load, validate, render,
// plan in memory) and the real-host benchmark (whole syslet processes on a
// test host), so both measure the same shape of input.
//
// Output is deterministic: the same Options give the same bytes. It is
// pure (no I/O) and imports nothing from syslet, so a generated set is
// ordinary input that syslet must validate like any other.
//
// Layer: ground (pkg/). It imports only the standard library, outside
// libraries and other ground packages; never render, plan, executor,
// pkg/load or pkg/app.
package specgen
