// Package systemd is syslet's live adapter to the host's systemd: it reads
// unit states and drives jobs (start, stop, restart, reload, daemon-reload)
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
package systemd
