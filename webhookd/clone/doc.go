// Package clone is a repository's private git clone, as webhookd's worker
// uses it ([Checkout]): fetch the configured branch and return its tip,
// tell whether one commit is reachable from another, read a commit
// object's bytes for the signature check, check out exactly one commit
// (detached, nothing untracked left), and keep the clone's packs few.
//
// Over go-git ([New]): SSH with a deploy key and host keys checked against
// the configured known_hosts only (never ~/.ssh, never trust on first
// use), https with an optional token, local paths. Every commit object
// go-git decodes goes through a screen first (screen.go), so a hostile
// one (a signature header megabytes long) is refused rather than parsed
// for hours; and the small packs each fetch leaves are rolled up into
// one between deploys (repack.go), bounded in memory and time, the clone
// readable at every moment.
//
// Only the repository's worker uses its clone, one call at a time.
//
// Layer: webhookd. It imports ground packages, and config.
package clone
