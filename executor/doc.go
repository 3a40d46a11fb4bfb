// Package executor applies a plan.Plan to a host, exactly as planned, in
// the nine-step order (plan.Steps). The host is reached only through the
// small interfaces declared here; pkg/app/deploy wires the real adapters and
// tests use fakes.
//
// Batches: the stops of step 2, the reloads of step 8 and the starts of
// step 9 each go to systemd at once (Systemd.Jobs) — systemd orders them by
// the units' After=/Requires= — and each unit lands, with its own result,
// as its job ends; the deadline of a batch counts from its queueing. The
// file writes of a step (each to its own path) are swapped in side by
// side, up to eight at once, after the step's podman secrets (created one
// by one). Everything else runs one action after another.
//
// Failure semantics: a failing pull, stop, write, prune, delete,
// daemon-reload or filling of a volume stops the run — nothing is started after it (stops of its
// batch, and writes already in flight beside it, finish), everything after
// it is reported as not reached and nothing more changes. Reload and start
// act on independent units, so a failure there is recorded and the other
// units of the batch are still reloaded or started. An image build whose
// start failed is tried once more after its batch, alone but for what
// failed because it requires the build (buildRetry: podman's storage is
// not safe for a build beside other podman commands); so is a start that
// failed on what it requires when the plan holds a build, which runs again
// before every start of its container. Either way Apply
// returns a Result that lists what was applied, what failed and what was
// not reached, and a non-nil error. A plan with an action outside its own
// step is refused before anything changes.
//
// Every host operation runs under a deadline (Options). A Recorder hears
// each step begin and actions land — the run journal, from which the
// next run resumes what did not land. Every landed action takes one path
// (run.land): logged, and journalled in one record — an action as it
// ends, or the file writes of a step together once they have all landed
// (one fsync). Closing Options.Stop ends the run gracefully: the action
// in progress finishes and nothing after it runs; cancelling the context
// aborts it.
//
// Words: a file write is prepared (written next to its target and
// fsynced, before anything stops), swapped (renamed into place), then
// settled (what it replaced let go) or undone. "Staging" is the
// generator's check before the apply (pkg/host/stage), not a part of it.
//
// Volumes step 6 deletes are exported first (Host.Backups, backups.go):
// whether the exports fit is checked before anything changes (ErrNoRoom),
// an export that fails keeps its volume and ends the run, and each
// export lands with its delete (Landed.Backup) in the journal. A volume
// the plan fills from a backup (plan/fill.go) is created again and the
// backup imported into it by the first row of step 9, one action after
// another, before its starts: the steps table has two rows for step 9,
// one step to the journal. Each import lands with the backup it read
// (its size and sha256), which Result.Restored lists. An import that
// names no backup carries a recreated volume's data over: it reads the
// export this run took of the volume in step 6, checked against its size
// and sha256.
//
// Files: executor.go holds the API — the host interfaces, Host, Options,
// Recorder, Landed, Failure, Result, the errors, the default deadlines —
// and Apply; steps.go holds the table of the nine steps, each with how
// its actions run (one by one, as one batch of unit jobs, or as file
// writes swapped side by side) and what a failure in it leaves behind,
// and the walk through it; prepare.go the preparing of file writes, the
// settling and the undo; engine.go the run itself (one action, its
// deadline, landing and the result, the check before any change).
//
// Layer: executor may import plan, render and the ground packages of pkg/
// (pkg/host for states, job kinds and errors), but no host adapter
// (pkg/host/fsroot, systemd, podman, stage) and nothing under pkg/app: it
// reaches the host only through the interfaces above, so it runs against
// fakes in tests, and pkg/app/deploy, which wires the adapters in, imports
// it.
package executor
