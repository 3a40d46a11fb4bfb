// Package parallel splits work made of independent items over the
// machine's CPUs, in consecutive ranges, so that results kept per range
// join back in the order of the input: the outcome is exactly the
// sequential one, only sooner. Decoding and rendering a big spec set use
// it; everything else in syslet stays sequential.
//
// Layer: ground (pkg/). It imports only the standard library, outside
// libraries and other ground packages; never render, plan, executor,
// pkg/load or pkg/app.
package parallel
