// Package probe is a container's readiness probe as a value: what syslet
// asks a service, from the host, to learn that it serves and not only that
// it runs (an HTTP request, a TCP connect, or a command run in the
// container), how often, and how many answers in a row make it ready or
// fail it. It holds no I/O: pkg/spec reads a probe from a spec, render
// writes it into the unit's [X-Syslet] marker (Marker, read back by
// Parse), the podman adapter runs one try of it (pkg/host/podman) and the
// health gate, status and the drift check judge the answers.
//
// One home for its words: Name ("GET :8080/up") and String ("GET
// :8080/up → 200-399 every 1s") are how the plan, the gate's verdicts and
// the status table name a probe, and Answer.String ("answered 503 \"db
// unreachable\"", "connection refused", "timed out after 2s") how they
// say what it got.
//
// Layer: ground. It imports nothing of syslet's.
package probe
