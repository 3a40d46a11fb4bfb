// Package view draws what a person reads, and the JSON documents machines
// read, from syslet's values: validation findings, the plan, an apply's
// summary, the run history, a saved plan and why it no longer holds. The
// values themselves (plan.Plan, executor.Result, runlog.RunInfo,
// report.Report) know nothing of how they are shown; every text syslet
// prints about them is drawn here, so one change of wording has one home
// and the golden files pin it.
//
// A run (pkg/app/deploy) is shown through Operation, the interface it
// calls as it goes: Human draws today's text for people, JSON the same
// text on stderr and the run's Outcome as one document on stdout,
// Reported today's text with the Outcome as one record at the end of
// stderr (what syslet push reads of each host), Log structured lines for
// a daemon (webhookd). The Outcome — what a run came
// to — and the notifications drawn from it live here too.
//
// Every string that came from outside — host file names, spec paths,
// journal fields, error texts — passes redact.Escape before it reaches a
// terminal; JSON keeps the exact value.
//
// Layer: app. It may import plan, executor, pkg/app/gate and the ground
// packages; it
// must not import pkg/app/deploy (deploy draws through it) nor any host
// adapter: a view reads values, never the host.
package view
