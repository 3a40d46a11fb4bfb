// Package docs holds syslet's documentation, in four kinds: a tutorial,
// how-to guides, reference and explanation (docs/README.md is the map).
// It has no code: its test fails on a broken relative link or anchor in
// any Markdown file of the repository. The generated pages are checked by
// their generators' tests (cmd/syslet, cmd/webhookd, pkg/spec), which
// `go tool task golden` rewrites.
//
// Layer: docs. It imports nothing of syslet's.
package docs
