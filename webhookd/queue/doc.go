// Package queue deploys each repository, one attempt at a time: a
// [Worker] per repository takes the pushes queued for it (a forge's
// push, a registry's, a poll that found the branch moved, a reconcile),
// coalesces them into one attempt of the newest commit on the branch,
// checks its signature, checks it out and has the [Deployer] apply it.
// A commit older than the applied one is never deployed over it.
//
// An attempt returns what it came to (attempt.go), and the worker records
// it in one place (Worker.finish): the status, the metrics, the log, and
// the people told (tell.go: the run's notification and the commit's
// status on the forge, queued off the attempt's path). How the attempt
// ended is data (ending.go): the run's verdict (pkg/verdict) when syslet
// ran, else one of webhookd's own reasons (skipped, fetch-failed,
// signature-refused, checkout-failed); the result and stage /status
// shows, the page's words and the forge's state are derived from it,
// never from the words a run printed.
//
// The status (status.go) is written only by the board's transitions,
// under one lock, and published whole; what must survive a restart (the
// applied commit, the deploy in flight, the last attempts, the last drift
// check) is saved to the status file first, so a deploy a kill cut short
// is deployed again at the next start. Between deploys the worker polls
// (poll.go), checks the host for drift (drift.go) and repacks its clone.
//
// Layer: webhookd. It imports ground packages, config, clone and metrics.
package queue
