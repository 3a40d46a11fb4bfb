// Package release builds what a syslet release ships, the same way every
// time: static binaries of syslet and webhookd per architecture (stamped
// with version and commit), a .deb and an .rpm of them made with nfpm,
// one CycloneDX SBOM per binary and a SHA256SUMS over all of it. Every
// timestamp is the commit's (SOURCE_DATE_EPOCH), so two builds of one
// commit are byte-identical. `go tool task release` (cmd/release) runs
// All; the integration tests build their binaries and the .deb they
// install with Binary and Package, so the tests install what ships.
//
// The package's contents are data here (contents, scripts): paths of
// syslet's own files come from pkg/layout, the files that are not
// programs from packaging/ (the unit, the example webhookd config, the
// man pages and shell completions cmd/syslet generates).
//
// Layer: release, beside cmd. It imports ground packages only (pkg/layout)
// and runs the go command, git and the pinned tools (go tool nfpm, go
// tool cyclonedx-gomod); nothing in syslet or webhookd imports it.
package release
