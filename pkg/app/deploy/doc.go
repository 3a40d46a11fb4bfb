// Package deploy is the one apply entry point: read and validate specs,
// check the rendered units with podman's quadlet converter for the podman
// the host runs (pkg/load; the release comes from podman's API),
// take the host's apply lock, observe the host, plan (carrying forward what
// an interrupted run left undone), stage, show the plan, execute it with
// a run journal, and hold what it started to the health gate. `syslet`,
// `syslet --diff`, `syslet --stdin`, `syslet rollback` and webhookd all
// run exactly this sequence through Run; only the Request differs.
//
// A run is one or two passes (pass.go): the pass of its own input, or of
// a generation a rollback by hand asks for, and after a failed health gate
// the rollback's pass. A pass is a function of its input (passInput, whose
// kind says what that pass does besides plan and apply) that returns what
// it found (passResult, with its verdict); Run composes the Outcome from
// them. How the run ended is its Outcome's Verdict (pkg/verdict), decided
// here once.
//
// A run holds no writer: everything a person or a machine hears of it
// goes through Request.View (pkg/app/view's Operation).
//
// A saved plan (saved.go, its file in pkg/app/planfile) is the same
// sequence with a check before execute: `syslet --diff --out FILE` writes
// the plan with the digest of its input and the fingerprint of the host
// state it was derived from; `syslet --plan FILE` reads the host again
// under the lock, refuses (ErrStale) if any of it or the input changed,
// and otherwise runs the plan only when it is the saved one, digest for
// digest.
//
// Restore (restore.go, `syslet restore`) brings a volume's backup back
// under the same apply lock: a plan of its own (plan.Fill) the executor
// runs with the run journal, so the next run finishes a restore stopped
// half-way; the rollback after a failed gate fills the volumes its failed
// run deleted the same way (rollback.go). The backups themselves are
// taken by the executor in step 6 (pkg/backup holds them).
//
// It is the composition root for the host: the live adapters (systemd over
// D-Bus, podman over its REST socket, the quadlet generator) are built
// here, so both programs use the same ones.
//
// Layer: app, the top of pkg/. It may import executor, plan, pkg/load,
// render, the host adapters (pkg/host/...) and ground packages; it must
// not import cmd or webhookd. It is the only package that builds the live
// adapters (OpenLive); tests hand it in-memory ones through Request.Host.
package deploy
