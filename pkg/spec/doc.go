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
//
// Where each idea lives:
//
//   - load.go: reading sources (bounds, regular files only), CheckInput,
//     Load and Decode, which split a stream's specs over the CPUs.
//   - stream.go: joining sources into one stream (Join), and the stream
//     syslet push sends, whose first line names the files it was joined
//     from, read back into those files on the host (NamedStream).
//   - internal/jsontree: the JSON reader — the value tree with document
//     order and JSON paths, duplicate keys, the depth limit, and the fast
//     one-pass reader with the token reader behind it. It is internal: its
//     API follows this package's needs and is nobody else's to import.
//   - decode.go: the decoder and its findings, the kinds of spec (their
//     top-level fields and decoders: everything else about a quadlet kind
//     is its row in pkg/unit's table of kinds), one spec's top-level
//     fields, and the field readers every kind shares (strings, modes,
//     file contents, lists of objects).
//   - owned.go: the one list of the keys syslet sets in a unit itself
//     (Spec.Owned), which spec warns about, render writes and adopt
//     leaves out.
//   - unit.go: the unit object: sections, keys, list and map values, and
//     the quoting that keeps one Environment assignment one word.
//   - container.go, build.go, pod.go, secret.go: what only that kind has
//     (config files and dirs and their mount paths; the containerfile,
//     context files and image tags; an image unit's or artifact's required
//     key, a kube unit's YAML; ciphertext or external), with sops.go for
//     reading a SOPS document's keys without decrypting it.
//   - probe.go: a container's readiness probe (the "probe" object, read
//     into a pkg/probe value with its defaults; unknown fields refused).
//   - names.go: name checks shared by every kind: spec and secret names,
//     word shapes, control characters, host path limits.
//   - validate.go: checks that need every spec at once (CheckSet).
//   - types.go, rules.go, schema.go: the decoded types, the stable rule
//     identifiers, and the embedded JSON Schema.
//
// From syslet it imports only pkg/report, pkg/unit (section and key
// names), pkg/probe (the probe as a value) and pkg/parallel. It must not import render, plan, executor or
// anything under pkg/host: they read specs, and a spec is checked without
// knowing how it will be rendered or what the host holds.
package spec
