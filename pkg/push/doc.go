// Package push deploys a validated spec stream to one host or a fleet over
// SSH, with golang.org/x/crypto/ssh and no ssh binary.
//
// It owns the client side of `syslet push`:
//
//   - targets: `[user@]host[:port]` arguments, resolved through ssh_config
//     (HostName, Port, User, IdentityFile) into the endpoint to dial
//     (target.go, sshconfig.go);
//   - host keys: every server key is checked against known_hosts during the
//     key exchange, before any authentication; an unknown or changed key is
//     refused with its SHA256 fingerprint, and AcceptNew pins a first-seen
//     key by appending it to the known_hosts file (hostkey.go);
//   - authentication: key files (a passphrase asked on the terminal) and the
//     SSH agent (auth.go);
//   - fan-out: at most Parallel hosts at once, each fed the stream on the
//     remote command's stdin, its output streamed back line by line with the
//     host's name in front; cancelling the context stops starting hosts,
//     closing Options.Abort forwards SIGINT to the running ones (run.go);
//   - rollouts: the targets in batches of counts or percentages (batch.go),
//     no host started once more have failed than a budget allows, so
//     that a bad change stops at its canary and the hosts after it are
//     never even connected to; a pause after each batch, then a read-only
//     look at its hosts again (their services still up, not restarted
//     since their health gate, no drift: check.go), a host that fell over
//     counting as failed (rollout.go);
//   - how each host's turn ended: one table of endings, a row for every
//     verdict of pkg/verdict and for each of push's own (not reached,
//     unreachable, host key refused, …), with the word the table shows
//     (ending.go); push's exit code follows from the endings;
//   - the result table and the --output json document: host, batch,
//     ending, the host's verdict, plan, run IDs, durations, and why a
//     rollout stopped (table.go, document.go).
//
// A host's ending is read from data, never from its words: push runs each
// plan or apply with --output text+json (sshcommand.Report), shows the
// host's text as it comes, and reads the JSON document the host's syslet
// writes as one record at the end of stderr (verdict.WriteRecord;
// hostdoc.go): its verdict, the plan's tally, the run IDs and the
// rollback's last word. A remote command that reports no document ends
// by its exit status alone (ok, or failed). After a pause, the plan's
// document says whether the host still matches its specs and what
// differs (check.go; the plan runs with --detailed-exitcode, whose code
// is allowed, not read), and `syslet status --output json`
// (host.HealthReport) whether its services held.
//
// Loading and validating the specs is not done here: the caller validates
// them with the same code as a local apply and hands over only valid
// streams, so nothing invalid ever reaches a connection.
//
// Layer: ground (pkg/). It imports only the standard library, outside
// libraries and other ground packages; never render, plan, executor,
// pkg/load or pkg/app.
package push
