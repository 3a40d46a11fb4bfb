// Package webhookd turns a signed git push into a deploy of exactly the pushed commit.
//
// Input: HTTP requests from a forge (GitHub, Gitea, Forgejo, GitLab) on POST /hooks/{repo}, a
// container registry's push notifications on POST /registry (registry.go: each pushed tag queued as
// an update of every repository's applied commit, through the same workers), and
// optionally a poll timer per repository (its first poll after a start at a random moment within
// repos[].pollSpread, so a fleet's polls spread over the interval). Output: calls to a [Deployer] with a directory of specs
// checked out at one commit, plus what an operator reads back: GET /status (JSON per repository),
// GET /healthz and GET /metrics (Prometheus text), and the status page for people: GET / and GET
// /runs/{run} (page.go: read-only HTML and one embedded stylesheet under a strict
// Content-Security-Policy, built from the same status, the run journal `syslet history` reads and
// the metrics; beyond a loopback listen address only with the pageTokenFile token).
//
// The package owns, and only owns:
//   - the configuration file ([LoadConfig]): every field validated at start, errors naming the field;
//   - verification of deliveries: HMAC-SHA256 of the raw body (GitHub X-Hub-Signature-256,
//     Gitea X-Gitea-Signature, Forgejo X-Forgejo-Signature) or GitLab's X-Gitlab-Token, compared in
//     constant time; a body over 1 MiB, an unsigned or wrongly signed request, or a delivery id seen
//     before is refused before any git traffic happens;
//   - a private go-git checkout per repository, fetched from the remote (SSH with known_hosts
//     verification, never trust on first use), checked out at exactly the pushed commit, which must
//     be reachable from the configured branch, and kept to a few packs (repack.go: the small packs
//     fetches leave are rolled up between deploys, bounded in memory and time);
//   - provenance, when a repository sets verify.allowedSigners: the commit to deploy must carry
//     a good SSH signature by a key that file lists (pkg/commitsig); it is read as an object and
//     checked before checkout, and a refusal (stage "signature", its reason in Attempt.Refusal)
//     reaches /status, metrics, the notification and the forge's commit status like any failure;
//   - scheduling: one deploy per repository at a time; pushes that arrive meanwhile coalesce into a
//     single follow-up deploy of the newest of them, and a commit older than the one already applied
//     is never deployed over it;
//   - telling people, off the deploy's path (pkg/notify's queues): the run's events to the
//     notification targets, the commit's status on the forge (status.go: GitHub's, Gitea/Forgejo's
//     and GitLab's statuses APIs), and a drift check per repository on an interval (drift.go: a
//     read-only plan of the applied commit through the Deployer's Check; one drift notification
//     when a unit first differs; it deploys only when the repository opts in to reconcile).
//
// It does not render, plan or apply anything itself: the [Deployer] (in cmd/webhookd, the same
// apply entry point the syslet CLI uses, under the host's apply lock) does that, so a deploy from a
// push and a deploy from a shell are the same code path and land in the same run journal.
//
// Layer: webhookd. It may import ground packages only: it knows the
// apply only as its Deployer.
package webhookd
