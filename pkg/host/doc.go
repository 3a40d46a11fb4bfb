// Package host holds the plain value types that cross the boundary between
// syslet and the machine it manages: unit states reported by systemd, secrets
// listed by podman, files read from disk, and the typed errors adapters return.
//
// It holds no interfaces and performs no I/O. Each consumer (plan, executor,
// the staging step) declares the small interface it needs in its own package,
// in terms of these types; the adapters under pkg/host/... implement them.
//
// Layer: ground. It imports only the standard library, pkg/digest and
// pkg/probe (a probe's answer is a value that crosses the boundary too).
package host
