// Package layout owns the host layout syslet writes and reads: where unit
// files, config files, config directories and build contexts live, which
// systemd service quadlet generates for a unit file, and how a config
// directory's "..data" link and numbered version directories fit together.
//
// It is pure (strings in, strings out) so that render and plan, which must
// not touch the host, and the fsroot adapter, which does, share one
// definition of each path instead of two that could drift apart.
package layout
