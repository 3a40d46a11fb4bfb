// Package systemd is syslet's live adapter to the host's systemd: it reads
// unit states and drives jobs (start, stop, reload, daemon-reload)
// over one D-Bus connection to the system bus, held for a whole run.
//
// Every job is waited for, and a job that systemd reports as "done" is still
// checked against the unit's state afterwards, because "done" only means the
// job ran: a service that exits at once after a successful start, or sits in
// auto-restart, is not up. Failures come back as *host.JobError; a unit that
// systemd has not loaded comes back wrapping host.ErrNotFound.
//
// The journal is read by running journalctl, since the native journal reader
// needs cgo and syslet is built without it.
//
// Files: manager.go holds the connection and unit states (Dial, Close,
// UnitStates, DaemonReload, and how systemd's "no such unit" answer becomes
// host.ErrNotFound); jobs.go holds the batched jobs (Jobs, the end-state
// check after a "done" job, resetting failed state before starts);
// properties.go holds the property reads (the planner asks whether a
// daemon-reload is due, deploy when services last started:
// NeedDaemonReload, UnitsLoadedAt, LastStarted); journal.go reads a unit's
// journal. Single-unit Start, Stop, Reload, Restart and MainPID exist only
// for the guest tests, in helpers_guest_test.go (build tag guest).
//
// Layer: a host adapter. It may import only ground packages of pkg/ (it
// uses pkg/host's states and errors), never another adapter, and never
// plan, render, executor or anything under pkg/app: those reach it through
// the interfaces they declare, and pkg/app/deploy wires it in.
package systemd
