// Package executor applies a plan.Plan to a host, exactly as planned, in
// the nine-step order (plan.Steps). The host is reached only through the
// small interfaces declared here; pkg/deploy wires the real adapters and
// tests use fakes.
//
// Failure semantics: a failing pull, stop, write, prune, delete or
// daemon-reload stops the run at once — everything after it is reported
// as not reached and nothing more changes. Reload and start act on
// independent units, so a failure there is recorded and the remaining
// units are still reloaded or started. Either way Apply returns a Result
// that lists what was applied, what failed and what was not reached, and
// a non-nil error.
//
// Every host operation runs under a deadline (Options). A Recorder hears
// each step begin and each action land before the next one starts — the
// run journal, from which the next run resumes what did not land. Closing
// Options.Stop ends the run gracefully: the action in progress finishes and
// nothing after it runs; cancelling the context aborts it.
package executor
