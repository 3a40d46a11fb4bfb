// Package planfile is the saved plan's file format: what `syslet --diff
// --out FILE` writes and `syslet --plan FILE`, `syslet show` and `syslet
// push --plan` read (terraform's planfile, for a host). A file holds the
// plan with the digest of its input, the fingerprint of the host state it
// was derived from and the options that shaped it; its own digest makes
// an edit after syslet wrote it visible. It holds no secret value and no
// file content: the plan's JSON form leaves contents out, the fingerprint
// is digests, modes, states, names and labels, and the specs themselves
// are not in it.
//
// Whether a saved plan still holds is Stale's question: the host, input
// and podman release it was made against, compared with now.
//
// Layer: app. It reads plan's types and draws through pkg/app/view; it
// knows nothing of how a run uses it (pkg/app/deploy).
package planfile
