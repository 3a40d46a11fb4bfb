package plan

import (
	"fmt"
	"strconv"
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

// A mass removal of many units names the first Listed and counts the
// rest: the refusal is one readable line, wherever it is shown.
func TestGuardRemovalsNamesTheFirstAndCountsTheRest(t *testing.T) {
	p := &Plan{}
	for i := range 25 {
		p.Units = append(p.Units, UnitChange{FileName: fmt.Sprintf("v%02d.volume", i), Effect: EffectRemove})
	}
	p.GuardRemovals()
	want := "removes 25 of the 25 managed units (v00.volume, v01.volume, v02.volume, v03.volume, v04.volume, v05.volume, v06.volume, v07.volume, v08.volume, v09.volume and 15 more); "
	if len(p.Refusals) != 1 || !strings.Contains(p.Refusals[0].Message, want) {
		t.Fatalf("refusals: %+v", p.Refusals)
	}
}

func TestSome(t *testing.T) {
	names := func(n int) []string {
		var s []string
		for i := range n {
			s = append(s, strconv.Itoa(i))
		}
		return s
	}
	for _, tt := range []struct {
		n    int
		want string
	}{
		{0, ""},
		{1, "0"},
		{Listed, "0, 1, 2, 3, 4, 5, 6, 7, 8, 9"},
		{Listed + 1, "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 1 more"},
		{106888, "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 106878 more"},
	} {
		if got := Some(names(tt.n), tt.n); got != tt.want {
			t.Errorf("Some(%d names) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
