package view

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/syslet/syslet/plan"
)

// The irreversible line names the first volumes a plan deletes without a
// backup and counts the rest, which the steps list one by one; the names
// are escaped, as they come from the host's units as well as the specs.
func TestIrreversibleLine(t *testing.T) {
	deletes := func(names ...string) *plan.Plan {
		p := &plan.Plan{NoBackups: true}
		for _, n := range names {
			p.Actions = append(p.Actions, plan.Action{Step: plan.StepDelete, Op: plan.OpDeleteVolume, Target: n, Irreversible: true})
		}
		return p
	}
	var many []string
	for i := range 12 {
		many = append(many, fmt.Sprintf("v%d", i))
	}
	const gone = " (deleted, no backup: --no-backup, so its data goes)"
	for _, tc := range []struct {
		p    *plan.Plan
		want string
	}{
		{deletes("data", "cache"), "Irreversible: no rollback can undo volume data" + gone + ", volume cache" + gone + ".\n"},
		{deletes("e\x1b[2J"), `Irreversible: no rollback can undo volume e\x1b[2J` + gone + ".\n"},
		{deletes(many...), "Irreversible: no rollback can undo volume v0" + gone + ", volume v1" + gone + ", volume v2" + gone + ", volume v3" + gone + ", volume v4" + gone + ", " +
			"volume v5" + gone + ", volume v6" + gone + ", volume v7" + gone + ", volume v8" + gone + ", volume v9" + gone + " and 2 more (each is marked [irreversible] under Steps).\n"},
	} {
		var b bytes.Buffer
		Plan(&b, tc.p)
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("plan lacks %q:\n%s", tc.want, b.String())
		}
		if strings.Count(b.String(), "[irreversible]") < len(tc.p.Actions) {
			t.Errorf("a step is not marked [irreversible]:\n%s", b.String())
		}
	}
}

// A volume the apply exports before deleting it is not called
// irreversible: the plan says it is backed up first and how big the
// backup will be; one whose spec says backup false goes, and the plan
// says its data goes.
func TestBackedUpLine(t *testing.T) {
	p := &plan.Plan{VolumeSizes: map[string]int64{"data": 3 << 20}, Actions: []plan.Action{
		{Step: plan.StepDelete, Op: plan.OpDeleteVolume, Target: "data", Irreversible: true},
		{Step: plan.StepDelete, Op: plan.OpDeleteVolume, Target: "scratch", Irreversible: true, Payload: &plan.Payload{NoBackup: true}},
		{Step: plan.StepDelete, Op: plan.OpDeleteVolume, Target: "gone", Irreversible: true},
	}}
	var b bytes.Buffer
	Plan(&b, p)
	for _, want := range []string{
		"volume data  [backed up first: 3.0 MiB (3145728 bytes)]\n",
		"volume gone  [backed up first]\n",
		"volume scratch  [irreversible]\n",
		"Backed up first: volume data (3.0 MiB (3145728 bytes), exported to /var/lib/syslet/backups before it is deleted), volume gone (exported to /var/lib/syslet/backups before it is deleted); a rollback brings the data back from there, as does syslet restore.\n",
		"Irreversible: no rollback can undo volume scratch (deleted, no backup: its spec says backup false, so its data goes).\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, b.String())
		}
	}
}

// The unit status table is aligned as text/tabwriter aligned it (padding
// two, widths in runes), without holding every row as a tabwriter does.
func TestTableIsTabwriters(t *testing.T) {
	cells := []string{"", "a", "web.service", "v100000-volume.service", "caf\u00e9", `e\x1b[2J`, "\u4e2d\u6587", "active", "-"}
	r := rand.New(rand.NewPCG(5, 6))
	for range 500 {
		rows := [][4]string{{"  SERVICE", "NOW", "AFTER", "CHANGE"}}
		for range r.IntN(20) {
			rows = append(rows, [4]string{"  " + cells[r.IntN(len(cells))], cells[r.IntN(len(cells))], cells[r.IntN(len(cells))], cells[r.IntN(len(cells))]})
		}
		var got, want bytes.Buffer
		table(&got, rows)
		tw := tabwriter.NewWriter(&want, 0, 0, 2, ' ', 0)
		for _, row := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", row[0], row[1], row[2], row[3])
		}
		tw.Flush()
		if got.String() != want.String() {
			t.Fatalf("rows %q:\n got %q\nwant %q", rows, got.String(), want.String())
		}
	}
}

// A plan that changes nothing but keeps hand edits does not say the host
// matches its specs, nor open its last line with the earlier syslet's "No
// changes detected." while --detailed-exitcode exits 3 (changes pending):
// it says what is true.
func TestNoChangesWithDriftSaysSo(t *testing.T) {
	p := &plan.Plan{Units: []plan.UnitChange{{FileName: "web.container", Effect: plan.EffectDrift, Reasons: []string{"drift: edited by hand"}}}}
	if !p.Empty() || p.Count().Drift != 1 {
		t.Fatalf("the plan is not a drift-only one: %+v", p.Count())
	}
	var b bytes.Buffer
	Plan(&b, p)
	last := strings.TrimSpace(b.String())
	last = last[strings.LastIndex(last, "\n")+1:]
	if want := "Drift: the host differs from the specs where 1 unit(s) were edited by hand; an apply keeps them and changes nothing, --force replaces them."; last != want {
		t.Errorf("last line %q, want %q", last, want)
	}
	if strings.Contains(b.String(), "matches the specs") || strings.Contains(b.String(), "No changes") || strings.Count(b.String(), "--force replaces") != 1 {
		t.Errorf("the plan contradicts itself or repeats the drift line:\n%s", b.String())
	}
}
