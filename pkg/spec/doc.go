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
// Input is bounded: at most DefaultMaxInput bytes (configurable), JSON
// nested at most MaxDepth levels, regular files only (a FIFO, device or
// socket is refused by name, unopened), and input holding no JSON value
// at all is refused (CheckInput) rather than read as "no specs".
// Validation mirrors every limit a host write has, so a spec that
// validates always renders and writes.
//
// The package does no host I/O beyond reading the given sources.
package spec
