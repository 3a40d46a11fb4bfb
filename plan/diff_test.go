package plan

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/syslet/syslet/pkg/unit"
)

// TestWholeDiff holds the fast diff of a created or emptied file to
// udiff's own output.
func TestWholeDiff(t *testing.T) {
	texts := []string{"", "a\n", "a", "a\nb\n", "a\nb", "\n", "\n\n", "x\n\ny\n", "one line with spaces \n"}
	for _, text := range texts {
		for _, c := range []struct{ old, new []byte }{{nil, []byte(text)}, {[]byte(text), nil}, {[]byte{}, []byte(text)}} {
			oldLabel, newLabel := "a/p", "b/p"
			if c.old == nil {
				oldLabel = "/dev/null"
			}
			if c.new == nil {
				newLabel = "/dev/null"
			}
			want := udiff.Unified(oldLabel, newLabel, string(c.old), string(c.new))
			if got := unifiedDiff("/p", c.old, c.new); got != want {
				t.Errorf("old %q new %q:\ngot  %q\nwant %q", c.old, c.new, got, want)
			}
		}
	}
}

// refDiffKeys is diffKeys as first written, with maps: the reference the
// grouped version must match.
func refDiffKeys(old, new *unit.File) []KeyChange {
	type sk struct{ s, k string }
	var order []sk
	seen := map[sk]bool{}
	collect := func(f *unit.File) map[sk][]string {
		m := map[sk][]string{}
		for _, s := range f.Sections {
			for _, e := range s.Entries {
				key := sk{s.Name, e.Key}
				if !seen[key] {
					seen[key] = true
					order = append(order, key)
				}
				m[key] = append(m[key], e.Value)
			}
		}
		return m
	}
	om, nm := collect(old), collect(new)
	var out []KeyChange
	for _, key := range order {
		ov, nv := om[key], nm[key]
		if slices.Equal(ov, nv) {
			continue
		}
		if len(ov) == 1 && len(nv) == 1 {
			out = append(out, KeyChange{Op: "~", Section: key.s, Key: key.k, Old: ov[0], New: nv[0]})
			continue
		}
		for _, v := range ov {
			if !slices.Contains(nv, v) {
				out = append(out, KeyChange{Op: "-", Section: key.s, Key: key.k, Old: v})
			}
		}
		for _, v := range nv {
			if !slices.Contains(ov, v) {
				out = append(out, KeyChange{Op: "+", Section: key.s, Key: key.k, New: v})
			}
		}
		if slices.Equal(sorted(ov), sorted(nv)) {
			out = append(out, KeyChange{Op: "~", Section: key.s, Key: key.k, Old: "(order)", New: "(reordered)"})
		}
	}
	return out
}

func TestDiffKeysMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	randomFile := func(keys int) *unit.File {
		f := &unit.File{}
		for _, sec := range []string{"Unit", "Container", "Service"} {
			if rng.IntN(4) == 0 {
				continue
			}
			s := unit.Section{Name: sec}
			for range rng.IntN(8) {
				s.Entries = append(s.Entries, unit.Entry{Key: fmt.Sprintf("K%d", rng.IntN(keys)), Value: fmt.Sprintf("v%d", rng.IntN(3))})
			}
			f.Sections = append(f.Sections, &s)
		}
		return f
	}
	for round := range 3000 {
		keys := 4
		if round%10 == 0 {
			keys = 200 // past the point where an index takes over
		}
		a, b := randomFile(keys), randomFile(keys)
		if round%7 == 0 {
			a = &unit.File{}
		}
		if got, want := diffKeys(a, b), refDiffKeys(a, b); !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d:\n got %+v\nwant %+v", round, got, want)
		}
	}
}
