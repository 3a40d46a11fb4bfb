// Package report collects validation findings. A finding names the spec
// source, the JSON path inside that source, a stable rule identifier and a
// message, so that a person reads "web.json: [0].unit.Container.Image: ..."
// and a CI job can branch on the rule. Validation collects every finding
// rather than stopping at the first.
//
// Layer: ground (pkg/). It imports only the standard library, outside
// libraries and other ground packages; never render, plan, executor,
// pkg/load or pkg/app.
package report
