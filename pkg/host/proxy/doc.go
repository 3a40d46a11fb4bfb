// Package proxy is syslet's live adapter to the reverse proxy it runs for
// start-first containers: HAProxy's runtime API over its unix socket
// (level admin, layout.ProxySocket). It sets a slot's server ready,
// draining or in maintenance, reads how many sessions each server of a
// backend holds (`show stat`), and saves the server state (`show servers
// state`) into the file HAProxy reads at its next start or reload,
// atomically: the old file or the new one, never a mix.
//
// One command per connection, as HAProxy's non-interactive mode serves
// them: it answers and closes. A command HAProxy refuses answers with
// its own words, which come back as the error; a runtime API that does
// not answer within the context's deadline is an error naming the
// socket.
//
// What the proxy is (its sites, configuration, unit and state file) is
// package pkg/proxy's, a ground package render and plan read too.
//
// Layer: adapter (a ground package only pkg/app may import). It imports
// pkg/proxy and pkg/bounded; never plan, render or executor, whose
// interfaces it implements.
package proxy
