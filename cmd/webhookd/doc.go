// Command webhookd deploys this host from signed git pushes: it serves the
// HTTP API of package webhookd, applies through pkg/app/deploy (the same entry
// point as the syslet CLI), tells systemd when it is ready (Type=notify)
// and pings its watchdog, and on SIGTERM lets a running deploy finish
// before it exits. See pkg/release/packaging/webhookd.service (the unit the package installs) and docs/how-to/webhookd.md; webhookd(8) is generated from this package and package webhookd.
//
// Layer: cmd. It wires webhookd to pkg/app/deploy and imports nothing
// else of syslet's pipeline.
package main
