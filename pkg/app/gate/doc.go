// Package gate is the health gate: it judges a run by what its containers
// do after step 9, not by the start jobs' results. A start job ends "done"
// as soon as conmon reports the container started, and a container whose
// entrypoint exits at once then crash-loops under Restart=always until
// systemd gives up. So every container a run started, restarted or
// reloaded must be up (and healthy, where it declares a health check that
// systemd does not wait for) within its start timeout, and then stay up
// for one soak window, judged by systemd's own counters: the unit's
// InvocationID and NRestarts must not move, and it must stay
// active/running; at the window's end its container must be running as
// podman lists it (systemd hears of a container's end only once podman's
// cleanup of it is done). Oneshots must have exited 0. All gated units soak at
// once, so the gate costs one window, not one per unit.
//
// A container with a readiness probe (probe.go) must also serve: its
// probe, run from the host at its own interval from the gate's start to
// its verdict, must be ready within the probe's deadline, and then not
// fail its failures in a row; the verdict names the probe and its last
// answer. A container the run did not start is not probed, so a
// converged run asks no service anything.
//
// Layer: app. It reads the host through the small Host interface it
// declares (implemented by the systemd and podman adapters, wired by
// pkg/app/deploy); it imports executor, plan and render for their values,
// never a host adapter or pkg/app/deploy.
package gate
