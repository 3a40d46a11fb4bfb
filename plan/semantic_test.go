package plan_test

import (
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/plan"
)

// TestKeyOrderIsNoChange is the reproducer: a volume rendered with
// its keys in one order, planned again with them swapped, must plan
// nothing (before, it planned deleting the volume).
func TestKeyOrderIsNoChange(t *testing.T) {
	a := `{"apiVersion":"v1","type":"volume","name":"data","unit":{"Volume":{"Label":"a=1","Driver":"local"}}}`
	b := `{"apiVersion":"v1","type":"volume","name":"data","unit":{"Volume":{"Driver":"local","Label":"a=1"}}}`
	h := install(t, renderStream(t, a))
	if p := plan.Build(renderStream(t, b), h.obs, plan.Options{}); !p.Empty() {
		t.Fatalf("swapping JSON keys planned %v", actions(p))
	}
}

// TestFormattingIsNoChange: an installed unit whose lines another
// formatter reordered, spaced or commented means the same unit, so nothing
// is written, restarted or recreated.
func TestFormattingIsNoChange(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	for _, u := range out.Units {
		f, err := unit.Parse(u.Bytes())
		must(t, err)
		var lines []string
		for i := len(f.Sections) - 1; i >= 0; i-- {
			s := f.Sections[i]
			lines = append(lines, "# reformatted", "["+s.Name+"]")
			for j := len(s.Entries) - 1; j >= 0; j-- {
				lines = append(lines, "  "+s.Entries[j].Key+" = "+s.Entries[j].Value)
			}
		}
		must(t, h.root.WriteFile(u.Path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	}
	h.reread(t)
	if p := plan.Build(out, h.obs, plan.Options{}); !p.Empty() {
		t.Fatalf("reformatted units planned %v", actions(p))
	}
}

// TestUnitDiffNamesKeys: every unit change lists the keys that changed.
func TestUnitDiffNamesKeys(t *testing.T) {
	h := install(t, renderStream(t, base))
	p := plan.Build(renderStream(t, edit(t, `"Volume":"data.volume:/data"}`, `"Volume":"data.volume:/data","ReadOnly":"true"}`)), h.obs, plan.Options{})
	for _, u := range p.Units {
		if u.Write && len(u.Keys) == 0 {
			t.Errorf("%s is rewritten (%s) but names no key", u.FileName, u.Effect)
		}
	}
	if effect(p, "web.container") != plan.EffectRestart {
		t.Fatalf("web.container: %s", effect(p, "web.container"))
	}
	for _, u := range p.Units {
		if u.FileName == "web.container" && !strings.Contains(strings.Join(u.Reasons, ";"), "[Container] ReadOnly") {
			t.Errorf("reasons %q do not name [Container] ReadOnly", u.Reasons)
		}
	}
}
