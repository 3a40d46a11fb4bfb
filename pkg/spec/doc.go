// Package spec reads spec format v1 — the JSON a user writes to describe a
// host's containers, volumes, networks, builds and secrets — and checks each
// spec on its own (pre-render validation).
//
// Input is a stream: one object, an array, NDJSON or concatenated objects,
// mixed freely, from files, a directory of *.json files or stdin. Every
// problem is collected into a report.Report with the source name and the
// JSON path inside that source ("[2].unit.Container.Volume[1]"); nothing
// stops at the first error. Unknown fields, duplicate keys, control
// characters and names systemd or podman would refuse are all errors.
//
// The package does no host I/O beyond reading the given sources.
package spec
