// Command receiver stands in, on a test host's loopback, for everything
// syslet and webhookd notify: it records every request it gets as a JSON
// line, and answers the commit-status calls of GitHub (/github/…),
// Gitea and Forgejo (/gitea/…) and GitLab (/gitlab/…) the way those forges
// document them — the path, the auth header with the expected token, the
// JSON fields and their states — with 201, or 401/404/422 and the reason
// in its record. It serves the statuses it accepted back as each of those
// forges does (statuses.go: the latest of every context, a page at a
// time), for syslet wait-status. It also takes mail over SMTP (no TLS, no
// AUTH).
//
// What it answers otherwise comes from the mode file, read per request:
// "ok" (the default), "fail" (503) or "hang" (no answer until the client
// gives up).
//
// Layer: integration (test support); the integration tests build it for
// the guest and run it there with systemd-run.
package main
