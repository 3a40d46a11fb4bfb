// Package status reads, and only reads, how systemd sees the services a
// spec set runs: for every container that should be running, its active
// and sub state, its last result, its InvocationID (a new one with every
// start, Restart='s included) and its NRestarts. It is what `syslet
// status` prints, and what `syslet push` reads on a host right after its
// change and again after a pause, to tell a host that fell over or was
// restarted in between from one that held (pkg/push).
//
// It also asks, once, each up container's readiness probe as its
// installed unit's marker records it (probe.go), from the host, with the
// podman adapter: what it answered and how long it took. The drift check
// asks the same way (pkg/app/deploy), so between deploys a container that
// runs but no longer serves is seen.
//
// It takes no lock and writes nothing: a status read never waits for an
// apply, nor delays one.
//
// Layer: app. It reads systemd through the small Host interface it
// declares (the systemd adapter, dialled by Dial) and probes through
// Prober (the podman adapter, Podman); it imports render and the ground
// packages for their values, never pkg/app/deploy or view.
package status
