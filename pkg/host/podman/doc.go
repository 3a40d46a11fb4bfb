// Package podman is syslet's live adapter to rootful podman through its REST
// socket: it checks for, pulls and removes images, removes volumes and
// networks, and reads and writes the secret store with labels.
//
// It also runs one try of a container's readiness probe from the host
// (probe.go): podman's inspect says where the host reaches the container's
// port — the port it publishes, its address on its network, or only
// inside its network namespace (netns.go, entered on a locked OS thread
// for the socket's creation alone) — and an exec probe's command runs in
// the container through the exec API, killed when it outlives its try.
//
// The connection is made on the first call, not in New: opening it pings the
// service, which costs time on every host and fails where podman.socket is
// not enabled, and a dry run or validation that needs nothing from podman
// must never depend on it.
//
// Absence is answered by the Exists calls (false, not an error) and is
// success for every Remove call; any other podman error is returned. Secret
// data is sent to podman and nowhere else: it never appears in errors.
//
// A volume's data goes out and in as a tar stream (volumes.go), never
// whole in memory: through podman's volume export and import endpoints,
// or, on a podman without them (5.4 answers 404, as for an absent
// volume), from and to the local data directory podman's inspect names
// (volumetar.go), never writing outside it or through a symlink.
//
// Layer: adapter (a ground package only pkg/app may import). It imports
// pkg/host and podman's bindings; never plan, render or executor, whose
// interfaces it implements.
package podman
