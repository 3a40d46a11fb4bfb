// Package layout owns the host layout syslet writes and reads: where unit
// files, config files, config directories and build contexts live, how a
// template's instances are named, and how a config directory's "..data"
// link and numbered version directories fit together. Which unit file
// types there are, and which service quadlet generates for each, is
// pkg/unit's table of kinds (kinds.go).
//
// It is pure (strings in, strings out) so that render and plan, which must
// not touch the host, and the fsroot adapter, which does, share one
// definition of each path instead of two that could drift apart.
//
// It also names syslet's own files (state.go): the stored specs, the
// settings, the run journal, the identity cache, the lock, webhookd's
// configuration and state, all as host paths placed under a root by Under.
//
// Layer: ground. It imports only the standard library.
package layout
