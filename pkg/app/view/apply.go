package view

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/syslet/syslet/executor"
	"github.com/syslet/syslet/pkg/app/gate"
	"github.com/syslet/syslet/pkg/redact"
	"github.com/syslet/syslet/plan"
)

// Against says what a plan was made against, for its header.
type Against struct {
	Specs, Sources int
	// Root is the managed root; NoHost says it is a tree without a
	// running system (--root).
	Root   string
	NoHost bool
	// Stored is set when the specs are the stream the last apply from
	// stdin stored (a plain `syslet`): which file, and when it was stored.
	Stored *Stored
	// Now is when the plan is shown (zero: now), for the stored
	// stream's age.
	Now time.Time
}

// Stored is the stream a plain run reads: what the last apply from stdin,
// or the last rollback (the generation it restored), stored for later
// plain runs.
type Stored struct {
	Path string
	At   time.Time
}

// Label names the stored stream, who stores it and its age, for a header:
// a plain `syslet` may apply what was stored long ago, and not always by
// an apply from stdin.
func (s Stored) Label(now time.Time) string {
	return fmt.Sprintf("%s (stored by the last apply from stdin or rollback, at %s, %s)", redact.Escape(s.Path), s.At.UTC().Format("2006-01-02 15:04 UTC"), Ago(now.Sub(s.At)))
}

// PlanWithHeader writes the plan for people, with what it was made
// against and, when it resumes an unfinished run, which one.
func PlanWithHeader(w io.Writer, a Against, p *plan.Plan) {
	what := "host"
	if a.NoHost {
		what = redact.Escape(a.Root) + " (no host: systemd and podman are not read, secrets are not decrypted; installed units are assumed to run as declared)"
	}
	from := fmt.Sprintf("%d source(s)", a.Sources)
	if s := a.Stored; s != nil {
		now := a.Now
		if now.IsZero() {
			now = time.Now()
		}
		from = s.Label(now)
	}
	fmt.Fprintf(w, "syslet plan: %d spec(s) from %s against %s\n\n", a.Specs, from, what)
	if r := p.Resume; r != nil {
		fmt.Fprintln(w, Resuming(r))
		fmt.Fprintln(w)
	}
	Plan(w, p)
}

// Ago says how long ago, in a word a person reads at a glance: "just
// now", "12 minutes ago", "3 hours ago", "5 days ago".
func Ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d minute(s) ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d hour(s) ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%d day(s) ago", int(d/(24*time.Hour)))
}

// Resuming is the header line of a plan that carries an unfinished run
// forward. When nothing of that run is left to do (each unfinished action
// landed after all, or was left alone), it says so rather than "resuming 0";
// after a run that put the host back, this plan makes its change again.
func Resuming(r *plan.Resume) string {
	what := "did not finish"
	if r.PutBack {
		what = "failed and put the host back"
	}
	switch {
	case r.Resumed == 0:
		return fmt.Sprintf("previous run %s %s; none of its %d unfinished action(s) is left to do", redact.Escape(r.Run), what, r.Unfinished)
	case r.PutBack:
		return fmt.Sprintf("previous run %s %s; this plan makes its change again (%d of its action(s))", redact.Escape(r.Run), what, r.Resumed)
	}
	return fmt.Sprintf("previous run %s %s; resuming %d action(s)", redact.Escape(r.Run), what, r.Resumed)
}

// Applying is the line an apply starts its actions with.
func Applying(w io.Writer, runID string) {
	fmt.Fprintf(w, "\nApplying (run %s):\n", redact.Escape(runID))
}

// ApplySummary writes the exit summary: applied, failed (with the unit's
// last log lines) and not reached.
func ApplySummary(w io.Writer, runID string, r *executor.Result) {
	verb := ""
	if r.Interrupted {
		verb = " — interrupted"
	}
	fmt.Fprintf(w, "\nSummary%s: %d applied, %d failed, %d not reached (%s, run %s)\n", verb, len(r.Applied), len(r.Failed), len(r.NotReached), r.Duration.Round(1e6), redact.Escape(runID))
	for _, rp := range r.Replaced {
		fmt.Fprintf(w, "  replaced %s\n", redact.Escape(ReplacedLine(rp)))
	}
	for _, f := range r.Failed {
		fmt.Fprintf(w, "  FAILED %d. %s %s: %s\n", f.Action.Step, f.Action.Op, redact.Escape(f.Action.Target), redact.Escape(f.Error))
		for _, l := range f.Log {
			fmt.Fprintf(w, "      | %s\n", redact.Escape(l))
		}
	}
	if u := r.Undo; u != nil {
		fmt.Fprintf(w, "  %s\n", UndoLine(u))
		for _, e := range u.Errors {
			fmt.Fprintf(w, "  NOT PUT BACK: %s\n", redact.Escape(e))
		}
	}
	if len(r.NotReached) > 0 {
		var names []string
		for _, a := range r.NotReached {
			names = append(names, fmt.Sprintf("%s %s", a.Op, redact.Escape(a.Target)))
		}
		fmt.Fprintf(w, "  not reached: %s\n", strings.Join(names, ", "))
		if len(r.Applied) == 0 && len(r.Failed) == 0 && r.Undo == nil {
			// Refused before its first action (no room for the backups):
			// there is nothing to resume.
			fmt.Fprintln(w, "  Nothing was changed: re-run syslet once the cause is fixed.")
		} else if u := r.Undo; u != nil && len(u.Errors) == 0 {
			// Put back: nothing the run wrote stays in place to resume.
			fmt.Fprintln(w, "  Re-run syslet once the cause is fixed: the host runs what it ran before this run, so the next run plans the change again (see `syslet history`).")
		} else {
			fmt.Fprintln(w, "  Re-run syslet to resume: what was applied stays in place, the rest is planned again (see `syslet history`).")
		}
	}
	if len(r.Down) > 0 {
		fmt.Fprintf(w, "  %s\n", redact.Escape(executor.DownLine(r.Down)))
	}
}

// ReplacedLine says how a replaced container was replaced and how long
// it took: "web.service: restarted behind its socket web.socket in
// 1.2 s", "api.service: stopped and started again, down 3.4 s (no socket,
// no probe)".
func ReplacedLine(r executor.Replaced) string {
	took := Seconds(r.Took)
	if sf := r.StartFirst; sf != nil {
		return startFirstLine(r.Service, sf)
	}
	switch {
	case r.Strategy == plan.StrategySocketHeld && r.Done:
		return fmt.Sprintf("%s: restarted behind its socket %s in %s", r.Service, r.Socket, took)
	case r.Strategy == plan.StrategySocketHeld:
		return fmt.Sprintf("%s: its restart behind its socket %s did not finish", r.Service, r.Socket)
	case r.Strategy == plan.StrategyStopStart && r.Done && r.Socket != "":
		return fmt.Sprintf("%s: stopped and started again, its socket %s closed with it: down %s (%s)", r.Service, r.Socket, took, r.Reason)
	case r.Strategy == plan.StrategyStopStart && r.Done:
		return fmt.Sprintf("%s: stopped and started again, down %s (%s)", r.Service, took, r.Reason)
	case r.Strategy == plan.StrategyStopStart:
		return fmt.Sprintf("%s: stopped, and its start did not finish", r.Service)
	case r.Done:
		return fmt.Sprintf("%s: replaced %s in %s", r.Service, r.Strategy, took)
	}
	return fmt.Sprintf("%s: its %s replacement did not finish", r.Service, r.Strategy)
}

// startFirstLine says how a start-first replacement went: "web-green.service:
// start-first: ready after 0.6 s, switched from web-blue.service, which
// drained in 0.1 s".
func startFirstLine(service string, sf *executor.StartFirst) string {
	switch {
	case sf.Discarded:
		return fmt.Sprintf("%s: start-first: not ready, stopped before any switch (it never took a request; the old slot kept serving)", service)
	case !sf.Switched:
		return fmt.Sprintf("%s: start-first: its switch did not finish", service)
	case sf.Old == "":
		return fmt.Sprintf("%s: start-first: ready after %s, switched", service, Seconds(sf.Ready))
	case sf.Drained == 0:
		return fmt.Sprintf("%s: start-first: ready after %s, switched from %s, whose drain did not finish", service, Seconds(sf.Ready), sf.Old)
	}
	return fmt.Sprintf("%s: start-first: ready after %s, switched from %s, which drained in %s", service, Seconds(sf.Ready), sf.Old, Seconds(sf.Drained))
}

// Seconds is a duration as a plan's reader reads it at a glance: "1.2 s",
// "0.04 s", "12 s".
func Seconds(d time.Duration) string {
	switch s := d.Seconds(); {
	case s < 0.1:
		return fmt.Sprintf("%.2f s", s)
	case s < 10:
		return fmt.Sprintf("%.1f s", s)
	default:
		return fmt.Sprintf("%.0f s", s)
	}
}

// ResultLine is an apply's result in one line, for the JSON document,
// webhookd's status and syslet push's table.
func ResultLine(r *executor.Result) string {
	s := fmt.Sprintf("%d applied, %d failed, %d not reached", len(r.Applied), len(r.Failed), len(r.NotReached))
	if r.Interrupted {
		s = "interrupted: " + s
	}
	if u := r.Undo; u != nil {
		if len(u.Errors) == 0 {
			s += "; the host was put back as it was"
		} else {
			s += fmt.Sprintf("; %d thing(s) could not be put back", len(u.Errors))
		}
	}
	return s
}

// UndoLine says what a run that failed before step 5 did to leave the host
// as it found it.
func UndoLine(u *executor.Undo) string {
	if len(u.Files) == 0 && len(u.Started) == 0 && len(u.Errors) == 0 && len(u.Kept) == 0 {
		return fmt.Sprintf("Nothing was stopped or replaced: every file is prepared before anything stops, and the %d prepared file(s) were removed again; the host runs what it ran before.", u.Discarded)
	}
	var did []string
	if n := len(u.Files); n > 0 {
		did = append(did, fmt.Sprintf("put back %d file(s) it had swapped in", n))
	}
	if u.Discarded > 0 {
		did = append(did, fmt.Sprintf("removed %d prepared file(s) it had not swapped in yet", u.Discarded))
	}
	if len(u.Started) > 0 {
		did = append(did, "started again what step 2 had stopped ("+strings.Join(u.Started, ", ")+")")
	}
	s := "Put the host back as it was"
	if len(u.Errors) > 0 {
		s = "Tried to put the host back as it was"
	}
	if len(u.Kept) > 0 {
		s += " but for its podman secrets"
	}
	if len(did) > 0 {
		s += ": " + strings.Join(did, ", ")
	}
	if len(u.Kept) > 0 {
		s += "; the podman secret(s) step 3 had created or replaced keep their new value (" + redact.Escape(strings.Join(u.Kept, ", ")) + ")"
	}
	return s + "; nothing was daemon-reloaded, so systemd runs the unit files it ran before."
}

// gateNamed is how many units the gate's line names; a run that started
// more says how many more.
const gateNamed = 8

// someUnits names the first gateNamed units, then how many more.
func someUnits(units []string) string {
	if len(units) <= gateNamed {
		return strings.Join(units, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(units[:gateNamed], ", "), len(units)-gateNamed)
}

// Gate writes the health gate's verdict: nothing when it watched nothing,
// a line when all passed, each failure with its unit's last log lines.
func Gate(w io.Writer, g *gate.Report) {
	if g == nil || len(g.Units) == 0 {
		return
	}
	switch {
	case g.Interrupted:
		fmt.Fprintf(w, "Health gate interrupted after %s: the changes are applied but were not judged.\n", g.Took.Round(time.Millisecond))
	case g.Passed():
		fmt.Fprintf(w, "Health gate: %d unit(s) up and stayed up for %s (%s): %s.\n", len(g.Units), g.Soak, g.Took.Round(time.Millisecond), redact.Escape(someUnits(g.Units)))
	default:
		fmt.Fprintf(w, "Health gate FAILED after %s:\n", g.Took.Round(time.Millisecond))
		for _, f := range g.Failures {
			if f.Service == "" {
				fmt.Fprintf(w, "  %s\n", redact.Escape(f.Reason)) // the gate's own: no unit to name
				continue
			}
			fmt.Fprintf(w, "  %s: %s\n", redact.Escape(f.Service), redact.Escape(f.Reason))
			for _, l := range f.Log {
				fmt.Fprintf(w, "      | %s\n", redact.Escape(l))
			}
		}
	}
}

// RollbackHeader says, above its plan, that a run is a rollback.
func RollbackHeader(w io.Writer, gen, of string) {
	if of != "" {
		fmt.Fprintf(w, "\nRolling back run %s: applying again the generation of run %s, each container pinned to the image it ran then.\n\n", redact.Escape(of), redact.Escape(gen))
		return
	}
	fmt.Fprintf(w, "Rolling back to the generation of run %s, each container pinned to the image it ran then.\n\n", redact.Escape(gen))
}

// Rollback is what the summary of an automatic rollback says.
type Rollback struct {
	Failed, Run, Generation, Why string
	// Restored are the volumes filled again from their backups.
	Restored, NotRestored []string
	Err                   error
	// Untouched: the failed rollback ended before its first action, so
	// the host is as the failed run left it.
	Untouched bool
}

// words are the rollback's last word: its capitals (ROLLED BACK, ROLLBACK
// FAILED) and its sentence, each outside string passed through esc
// (redact.Escape for a terminal). The sentence is also the "message" of
// the rollback in the run's document, where strings keep their exact
// value.
func (r Rollback) words(esc func(string) string) (head, said string) {
	failed, why, gen, run := esc(r.Failed), esc(r.Why), esc(r.Generation), esc(r.Run)
	switch {
	case r.Err != nil && r.Untouched:
		return "ROLLBACK FAILED", fmt.Sprintf("run %s failed its health gate (%s), and the rollback to run %s (run %s) changed nothing, so the host is as run %s left it: %s",
			failed, why, gen, run, failed, esc(r.Err.Error()))
	case r.Err != nil:
		return "ROLLBACK FAILED", fmt.Sprintf("run %s failed its health gate (%s), and the rollback to run %s (run %s) did not restore a working host: %s",
			failed, why, gen, run, esc(r.Err.Error()))
	}
	return "ROLLED BACK", fmt.Sprintf("run %s failed its health gate (%s); run %s applied the generation of run %s again, and it passed the gate",
		failed, why, run, gen)
}

// RollbackSummary is the last word of a run whose gate failed and that
// was rolled back.
func RollbackSummary(w io.Writer, r Rollback) {
	head, said := r.words(redact.Escape)
	if r.Err == nil {
		said += "."
	}
	fmt.Fprintf(w, "\n%s: %s\n", head, said)
	RollbackVolumes(w, r)
}

// RollbackVolumes lists the volumes the rollback filled again from their
// backups and what it could not restore.
func RollbackVolumes(w io.Writer, r Rollback) {
	for _, n := range r.Restored {
		fmt.Fprintf(w, "Restored: %s\n", redact.Escape(n))
	}
	if len(r.NotRestored) > 0 {
		fmt.Fprintln(w, "Not restored:")
		for _, n := range r.NotRestored {
			fmt.Fprintf(w, "  - %s\n", redact.Escape(n))
		}
	}
}
