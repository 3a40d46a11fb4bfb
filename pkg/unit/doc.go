// Package unit is an ordered model of systemd / quadlet unit files: sections
// in order, keys in order, repeated keys kept. Render builds a File through
// Add and never formats INI text by hand; Bytes serialises it byte-stably;
// Parse reads installed units back (comments dropped, continuation lines
// joined the way systemd joins them).
//
// Normalize and Same compare units by meaning, the way systemd and quadlet
// read them: section and key order, spacing, comments and the order of
// set-like values do not count. Managed is the one test of whether a unit
// file is syslet's.
//
// The package knows the section and key names syslet cares about, and — as
// tables of data — the quadlet kinds (Kinds, kinds.go: extension, section,
// service name, the keys naming the podman object, what a change does,
// what may refer to one), which podman release introduced each key of the
// quadlet sections (KeySince, Podman), which systemd release documented
// each key of systemd's own sections (SystemdKeySince, systemd.go) and
// which values older generators read differently (Features), but nothing
// about specs or hosts.
//
// SameMeaning and WithoutMetadata (semantic.go) are the one home of
// "what a unit means without syslet's marker and Description", for the
// plan (metadata-only changes, takeover) and adopt alike.
//
// Layer: ground (pkg/). It imports only the standard library, outside
// libraries and other ground packages; never render, plan, executor,
// pkg/load or pkg/app.
package unit
