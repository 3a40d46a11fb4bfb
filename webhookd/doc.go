// Package webhookd turns a signed git push into a deploy of exactly the pushed commit.
//
// Input: HTTP requests from a forge (GitHub, Gitea, Forgejo, GitLab) on POST /hooks/{repo}, a
// container registry's push notifications on POST /registry (registry.go: each pushed tag queued as
// an update of every repository's applied commit, through the same workers), and
// optionally a poll timer per repository (its first poll after a start at a random moment within
// repos[].pollSpread, so a fleet's polls spread over the interval). Output: calls to a
// [queue.Deployer] with a directory of specs checked out at one commit, plus what an operator reads
// back: GET /status (JSON per repository), GET /healthz and GET /metrics (Prometheus text), and the
// status page for people: GET / and GET /runs/{run} (package page).
//
// This package is the daemon itself: the HTTP server, its hooks, and the wiring of the rooms below.
// It owns, and only owns:
//   - verification of deliveries: HMAC-SHA256 of the raw body (GitHub X-Hub-Signature-256,
//     Gitea X-Gitea-Signature, Forgejo X-Forgejo-Signature) or GitLab's X-Gitlab-Token, compared in
//     constant time; a registry's bearer token; a body over 1 MiB, an unsigned or wrongly signed
//     request, or a delivery id seen before (replay.go: remembered across restarts) is refused
//     before any git traffic happens;
//   - the HTTP server's bounds: bodies read under deadlines of their own and a minimum rate, a few
//     deliveries handled at once and a bounded backlog, a graceful stop that lets a running deploy
//     finish and delivers what is queued to be told.
//
// Each other job has a package of its own, so a line's room is its folder:
//   - config: the configuration file, its shape (the reference webhookd(8) is generated from)
//     and the checks of each part, every secret read at start;
//   - clone: a repository's private go-git clone: fetch (SSH with known_hosts verification,
//     never trust on first use), reachability, checkout of exactly one commit, the screen that
//     keeps hostile commit objects from go-git's parser, and the repacking that keeps its packs few;
//   - queue: one worker per repository: the pushes queued and coalesced, each deploy attempt and
//     how it ended (the run's verdict, or a reason of webhookd's own), the status it keeps, polls,
//     drift checks, the signature check, and telling people (notifications, commit statuses);
//   - page: the read-only status page, drawn from the same status, the run journal and the metrics;
//   - metrics: the Prometheus series, one home for their names (webhookd(8) lists them from it).
//
// Imports flow one way: config ← clone ← queue ← page ← webhookd, and metrics beside them
// (config ← metrics ← queue).
//
// It does not render, plan or apply anything itself: the Deployer (in cmd/webhookd, the same
// apply entry point the syslet CLI uses, under the host's apply lock) does that, so a deploy from a
// push and a deploy from a shell are the same code path and land in the same run journal.
//
// Layer: webhookd, with every package under it. It may import ground packages only: it knows the
// apply only as its Deployer.
package webhookd
