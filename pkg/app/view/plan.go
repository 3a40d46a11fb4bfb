package view

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/probe"
	"github.com/syslet/syslet/pkg/redact"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/plan"
)

var opSign = map[plan.Effect]string{
	plan.EffectCreate: "+", plan.EffectRemove: "-", plan.EffectKeep: "=", plan.EffectIgnore: "?", plan.EffectNone: " ", plan.EffectDrift: "!",
}

func sign(e plan.Effect) string {
	if s, ok := opSign[e]; ok {
		return s
	}
	return "~"
}

// Plan writes the plan for people: unit changes with their keys, file
// diffs, secrets (names only), notes, warnings, refusals, the nine steps with what
// each will do, the unit status table and the summary line.
func Plan(w io.Writer, p *plan.Plan) {
	// One write per 64 KiB, not per line: a plan of a hundred thousand
	// units is half a million lines, each a write(2) to a terminal or pipe.
	bw := bufio.NewWriterSize(w, 64<<10)
	defer bw.Flush()
	drawPlan(bw, p)
}

func drawPlan(w io.Writer, p *plan.Plan) {
	for _, draw := range planSections {
		draw(w, p)
	}
	fmt.Fprintln(w, PlanSummary(p))
}

// planSections draw the plan's parts, in the order a person reads them;
// each draws nothing when the plan has none of its part.
var planSections = []func(io.Writer, *plan.Plan){
	drawUpdates, drawUnitChanges, drawFiles, drawSecrets, drawNotes, drawWarnings, drawRefusals,
	drawSteps, drawIrreversible, drawStatusTable, drawDrift,
}

// drawUpdates: syslet update's image tags that moved, from what to what,
// and what restarts for them.
func drawUpdates(w io.Writer, p *plan.Plan) {
	if len(p.Updates) == 0 {
		return
	}
	fmt.Fprintln(w, "Image updates:")
	for _, u := range p.Updates {
		from := strings.Join(u.From, ", ")
		if from == "" {
			from = "(no registry digest)"
		}
		fmt.Fprintf(w, "  ~ %s\n      from %s\n      to   %s\n      restarts %s\n", redact.Escape(u.Image), from, redact.Escape(u.To), redact.Escape(strings.Join(u.Restarts, ", ")))
	}
	fmt.Fprintln(w)
}

// drawUnitChanges: each unit that changes, why, and its keys (a drifted
// unit: its diff).
func drawUnitChanges(w io.Writer, p *plan.Plan) {
	// The units are pointed at, not copied: a converged plan of a hundred
	// thousand units would clone 30 MB of them to print none.
	changed := units(p, func(u *plan.UnitChange) bool { return u.Effect != plan.EffectNone })
	if len(changed) == 0 {
		return
	}
	fmt.Fprintln(w, "Unit changes:")
	for _, u := range changed {
		line := fmt.Sprintf("  %s %-28s %s", sign(u.Effect), redact.Escape(u.FileName), effect(p, u))
		if len(u.Reasons) > 0 {
			line += ": " + redact.Escape(strings.Join(u.Reasons, "; "))
		}
		fmt.Fprintln(w, line)
		switch u.Effect {
		case plan.EffectDrift:
			diffLines(w, u.Diff)
		case plan.EffectRemove, plan.EffectIgnore, plan.EffectKeep:
		default:
			if r := u.Replacement; r != nil {
				// How the container makes way for its replacement, and
				// why that way.
				fmt.Fprintf(w, "      %s\n", redact.Escape(r.String()))
			}
			drawKeys(w, u.Keys)
		}
	}
	fmt.Fprintln(w)
}

// drawKeys writes a unit's key changes.
func drawKeys(w io.Writer, keys []plan.KeyChange) {
	for _, k := range keys {
		if k.Section == unit.Syslet && k.Key == unit.KeyProbe {
			fmt.Fprintf(w, "      %s probe: %s\n", k.Op, probeChange(k))
			continue
		}
		switch k.Op {
		case "+":
			fmt.Fprintf(w, "      + [%s] %s=%s\n", redact.Escape(k.Section), redact.Escape(k.Key), keyValue(k.New))
		case "-":
			fmt.Fprintf(w, "      - [%s] %s=%s\n", redact.Escape(k.Section), redact.Escape(k.Key), keyValue(k.Old))
		default:
			fmt.Fprintf(w, "      ~ [%s] %s: %s → %s\n", redact.Escape(k.Section), redact.Escape(k.Key), keyValue(k.Old), keyValue(k.New))
		}
	}
}

// diffLines writes a diff's lines, indented, each escaped.
func diffLines(w io.Writer, diff string) {
	for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		if l != "" {
			fmt.Fprintf(w, "      %s\n", redact.Line(l))
		}
	}
}

// drawFiles: the config files that change, with their mode and diff.
func drawFiles(w io.Writer, p *plan.Plan) {
	if len(p.Files) == 0 {
		return
	}
	fmt.Fprintln(w, "Config files:")
	for _, f := range p.Files {
		mode := ""
		switch {
		case f.Op == "+":
			mode = fmt.Sprintf(" (%04o)", f.NewMode)
		case f.Op == "~" && f.OldMode != f.NewMode:
			mode = fmt.Sprintf(" (mode %04o → %04o)", f.OldMode, f.NewMode)
		}
		fmt.Fprintf(w, "  %s %s%s  [%s, %s]\n", f.Op, redact.Escape(f.Path), mode, f.Kind, redact.Escape(f.Owner))
		diffLines(w, f.Diff)
	}
	fmt.Fprintln(w)
}

// drawSecrets: the podman secrets that change, by name only.
func drawSecrets(w io.Writer, p *plan.Plan) {
	if len(p.Secrets) == 0 {
		return
	}
	fmt.Fprintln(w, "Secrets:")
	for _, s := range p.Secrets {
		fmt.Fprintf(w, "  %s %s = (secret)  %s\n", s.Op, redact.Escape(s.Name), redact.Escape(s.Reason))
	}
	fmt.Fprintln(w)
}

// drawNotes: what the plan leaves alone, and why.
func drawNotes(w io.Writer, p *plan.Plan) {
	if len(p.Notes)+len(p.StaleImages) == 0 {
		return
	}
	fmt.Fprintln(w, "Left alone:")
	for _, n := range p.Notes {
		fmt.Fprintf(w, "  = %s: %s\n", redact.Escape(n.Unit), redact.Escape(n.Message))
	}
	for _, s := range p.StaleImages {
		fmt.Fprintf(w, "  = %s: %s\n", redact.Escape(s.Unit), redact.Escape(s.Message()))
	}
	fmt.Fprintln(w)
}

// drawWarnings: what the plan goes on past.
func drawWarnings(w io.Writer, p *plan.Plan) {
	if len(p.Warnings) == 0 {
		return
	}
	fmt.Fprintln(w, "Warnings:")
	for _, f := range p.Warnings {
		fmt.Fprintf(w, "  ! %s\n", redact.Escape(f.String()))
	}
	fmt.Fprintln(w)
}

// drawRefusals: what stops the plan before anything changes.
func drawRefusals(w io.Writer, p *plan.Plan) {
	if len(p.Refusals) == 0 {
		return
	}
	fmt.Fprintln(w, "Refused (nothing will be changed until these are resolved):")
	for _, r := range p.Refusals {
		src := ""
		if r.Source != "" {
			src = " (" + r.Source + ")"
		}
		fmt.Fprintf(w, "  ! %s%s: %s\n", redact.Escape(r.Unit), redact.Escape(src), redact.Escape(r.Message))
	}
	fmt.Fprintln(w)
}

// drawSteps: the nine steps in the order they run, with what each does.
func drawSteps(w io.Writer, p *plan.Plan) {
	if p.Empty() {
		return
	}
	// Written as they are found, not gathered first: a plan removing a
	// hundred thousand volumes has three hundred thousand actions.
	fmt.Fprintln(w, "Steps, in the order they run:")
	more := fmt.Sprintf("     %-24s ", "")
	for _, s := range plan.Steps {
		lead := fmt.Sprintf("  %d. %-24s ", s, s)
		for i := range p.Actions {
			a := &p.Actions[i]
			if a.Step != s {
				continue
			}
			io.WriteString(w, lead)
			lead = more
			io.WriteString(w, redact.Escape(describe(*a)))
			if a.Carried {
				io.WriteString(w, "  [resumed: an earlier run left it unfinished]")
			}
			switch {
			case p.BackedUp(a):
				io.WriteString(w, "  [backed up first"+volumeSize(p, a.Target, ": ")+"]")
			case a.Irreversible:
				io.WriteString(w, "  [irreversible]")
			}
			io.WriteString(w, "\n")
		}
		if lead != more {
			io.WriteString(w, lead+"-\n")
		}
	}
	fmt.Fprintln(w)
}

// drawIrreversible: the data the plan backs up first, and what no
// rollback can undo.
func drawIrreversible(w io.Writer, p *plan.Plan) {
	lost, kept, n, nk := irreversible(p)
	if nk > 0 {
		fmt.Fprintf(w, "Backed up first: %s; a rollback brings the data back from there, as does syslet restore.\n", redact.Escape(plan.Some(kept, nk)))
	}
	if n > 0 {
		// The names come from the host (a stale unit's VolumeName=) as
		// much as from the specs: escaped, as every step is.
		more := ""
		if n > plan.Listed {
			more = " (each is marked [irreversible] under Steps)"
		}
		fmt.Fprintf(w, "Irreversible: no rollback can undo %s%s.\n", redact.Escape(plan.Some(lost, n)), more)
	}
	if n+nk > 0 {
		fmt.Fprintln(w)
	}
}

// drawStatusTable: each service whose state changes, now and after.
func drawStatusTable(w io.Writer, p *plan.Plan) {
	status := units(p, func(u *plan.UnitChange) bool {
		return u.Effect != plan.EffectNone && u.Effect != plan.EffectIgnore && u.Effect != plan.EffectKeep && u.Effect != plan.EffectDrift
	})
	if len(status) == 0 {
		return
	}
	fmt.Fprintln(w, "Unit status changes:")
	rows := make([][4]string, 0, len(status)+1)
	rows = append(rows, [4]string{"  SERVICE", "NOW", "AFTER", "CHANGE"})
	for _, u := range status {
		rows = append(rows, [4]string{"  " + redact.Escape(u.Service), redact.Escape(u.Before), redact.Escape(u.After), string(u.Effect)})
	}
	table(w, rows)
	fmt.Fprintln(w)
}

// drawDrift: the units edited by hand that a plan with changes leaves as
// they are (a plan with none says it in its summary).
func drawDrift(w io.Writer, p *plan.Plan) {
	if c := p.Count(); c.Drift > 0 && !p.Empty() {
		fmt.Fprintf(w, "%d unit(s) edited by hand are left as they are (drift); --force replaces them.\n", c.Drift)
	}
}

// fullDigest is a sha256 digest written out whole.
var fullDigest = regexp.MustCompile(`sha256:([0-9a-f]{12})[0-9a-f]{52}`)

// probeChange names a container's probe as the plan changes it: "GET
// :8080/up → 200-399 every 1s", or the old and the new one.
func probeChange(k plan.KeyChange) string {
	name := func(marker string) string {
		if p, err := probe.Parse(marker); err == nil {
			return redact.Escape(p.String())
		}
		return keyValue(marker)
	}
	switch k.Op {
	case "+":
		return name(k.New)
	case "-":
		return name(k.Old)
	}
	return name(k.Old) + " ⇒ " + name(k.New)
}

// keyValue is a unit key's value as a plan shows it: escaped, with each
// whole sha256 digest cut to its first 12 hex digits (the --output json
// plan keeps them whole). A marker's 64-digit digests filled a line each
// and told a reader nothing 12 digits do not.
func keyValue(v string) string {
	return redact.Escape(fullDigest.ReplaceAllString(v, "sha256:$1…"))
}

// units are the plan's units that keep says to draw, in plan order.
func units(p *plan.Plan, keep func(*plan.UnitChange) bool) []*plan.UnitChange {
	var out []*plan.UnitChange
	for i := range p.Units {
		if keep(&p.Units[i]) {
			out = append(out, &p.Units[i])
		}
	}
	return out
}

// PlanSummary is the plan's one-line footer: counts by effect, the number
// of actions and the plan digest. It is also the plan's summary in JSON
// output, webhookd's status and syslet push's table.
func PlanSummary(p *plan.Plan) string {
	if p.Empty() {
		// "No changes detected." is the earlier syslet's phrase, which
		// scripts around it look for (its CUE tutorial's apply command
		// skips its confirmation on it): it stays in the converged output,
		// and only there. A host whose hand edits an apply keeps does not
		// match the specs, and --detailed-exitcode says so with 3: the
		// line says the same, so a script and a person agree.
		if c := p.Count(); c.Drift > 0 {
			return fmt.Sprintf("Drift: the host differs from the specs where %d unit(s) were edited by hand; an apply keeps them and changes nothing, --force replaces them.", c.Drift)
		}
		if n := len(p.StaleImages); n > 0 {
			return fmt.Sprintf("No changes detected. %d container(s) run an older image than their tag names on this host (pulled, not restarted), which an apply leaves; syslet update restarts them.", n)
		}
		return "No changes detected. The host matches the specs."
	}
	c := p.Count()
	return fmt.Sprintf("Plan: %d to create, %d to change, %d to reload, %d metadata-only, %d to remove, %d to start, %d to stop, %d unchanged; %d actions (digest %s).",
		c.Create, c.Change, c.Reload, c.Metadata, c.Remove, c.Start, c.Stop, c.Unchanged, len(p.Actions), p.ShortDigest())
}

// irreversible names the first plan.Listed things the plan deletes for
// good, and counts them all; and, apart, the volumes it deletes after
// exporting them (what a rollback or syslet restore brings back).
func irreversible(p *plan.Plan) (lost, kept []string, n, nk int) {
	for i := range p.Actions {
		a := &p.Actions[i]
		switch {
		case p.BackedUp(a):
			if nk < plan.Listed {
				kept = append(kept, describe(*a)+" ("+volumeSize(p, a.Target, "")+"exported to "+layout.Backups+" before it is deleted)")
			}
			nk++
		case a.Irreversible:
			if n < plan.Listed {
				lost = append(lost, describe(*a)+deleted(p, a))
			}
			n++
		}
	}
	return lost, kept, n, nk
}

// effect says what becomes of a unit: its change, and for a volume
// recreated with its data carried over, that and how much.
func effect(p *plan.Plan, u *plan.UnitChange) string {
	if u.Effect != plan.EffectRecreate {
		return string(u.Effect)
	}
	for i := range p.Actions {
		if a := &p.Actions[i]; a.Unit == u.FileName && p.CarriesOver(a.Target) {
			size, ok := p.VolumeSizes[a.Target]
			if !ok {
				return "recreate, data carried over"
			}
			short, _, _ := strings.Cut(backup.Size(size), " (")
			return "recreate, data carried over (" + short + ")"
		}
	}
	return string(u.Effect)
}

// volumeSize is the volume's size as the plan knows it, after lead and
// followed by ", " when it goes before more; "" when it is not known.
func volumeSize(p *plan.Plan, volume, lead string) string {
	size, ok := p.VolumeSizes[volume]
	if !ok {
		return ""
	}
	if lead == "" {
		return backup.Size(size) + ", "
	}
	return lead + backup.Size(size)
}

// deleted says how an irreversible action's object goes: a volume whose
// marker says Backup=false, or every volume of a run with --no-backup,
// goes without the export taken of the others.
func deleted(p *plan.Plan, a *plan.Action) string {
	switch {
	case a.Op != plan.OpDeleteVolume:
		return " (deleted)"
	case a.Data().NoBackup:
		return " (deleted, no backup: its spec says backup false, so its data goes)"
	case p.NoBackups:
		return " (deleted, no backup: --no-backup, so its data goes)"
	}
	return " (deleted)"
}

// table writes rows as text/tabwriter does with two spaces of padding:
// each column but the last as wide as its widest cell (in runes) and two
// more, the last as it is. A tabwriter holds every cell until it is
// flushed, and a plan removing a hundred thousand units has a row each.
func table(w io.Writer, rows [][4]string) {
	var width [3]int
	for _, r := range rows {
		for c := range width {
			width[c] = max(width[c], utf8.RuneCountInString(r[c]))
		}
	}
	var line []byte
	for _, r := range rows {
		line = line[:0]
		for c := range width {
			line = append(line, r[c]...)
			for range width[c] + 2 - utf8.RuneCountInString(r[c]) {
				line = append(line, ' ')
			}
		}
		line = append(line, r[3]...)
		line = append(line, '\n')
		w.Write(line)
	}
}
