package plan

import (
	"strings"
	"testing"
)

func TestMassRemoval(t *testing.T) {
	for _, tt := range []struct {
		managed, removed int
		want             bool
	}{
		{0, 0, false},
		{1, 0, false},
		{1, 1, true}, // all of them
		{2, 1, false},
		{2, 2, true},
		{4, 3, false}, // four or fewer: only all of them
		{4, 4, true},
		{5, 2, false},
		{5, 3, true}, // more than half of more than four
		{10, 5, false},
		{10, 6, true},
	} {
		if got := MassRemoval(tt.managed, tt.removed); got != tt.want {
			t.Errorf("MassRemoval(%d, %d) = %t, want %t", tt.managed, tt.removed, got, tt.want)
		}
	}
}

func TestGuardRemovalsListsWhatWouldGo(t *testing.T) {
	p := &Plan{Units: []UnitChange{
		{FileName: "a.container", Effect: EffectRemove},
		{FileName: "b.volume", Effect: EffectRemove},
		{FileName: "new.container", Effect: EffectCreate},
		{FileName: "hand.container", Effect: EffectIgnore},
	}}
	p.GuardRemovals()
	if len(p.Refusals) != 1 || !strings.Contains(p.Refusals[0].Message, "removes 2 of the 2 managed units (a.container, b.volume)") {
		t.Fatalf("refusals: %+v", p.Refusals)
	}
	kept := &Plan{Units: []UnitChange{{FileName: "a.container", Effect: EffectRemove}, {FileName: "b.container", Effect: EffectNone}}}
	kept.GuardRemovals()
	if len(kept.Refusals) != 0 {
		t.Errorf("one of two removed is not a mass removal: %+v", kept.Refusals)
	}
}
