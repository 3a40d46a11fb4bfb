// Package digest is the one home of how syslet names a content's sha256.
// Two spellings exist on hosts and both are kept: the [X-Syslet] marker
// and a config dir's manifest record "sha256:<hex>" (Tagged), the plan's
// actions and the run journal record the bare "<hex>" (Hex). A Sum is
// computed once and spelled either way, so no caller hashes the same bytes
// twice to compare with both.
//
// Layer: ground. It imports nothing from syslet.
package digest
