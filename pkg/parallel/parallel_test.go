package parallel

import (
	"slices"
	"testing"
)

// Every item is visited once, ranges are consecutive and numbered in
// order, whatever the sizes.
func TestRunCoversEachItemOnceInOrder(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 100, 1001} {
		for _, parts := range []int{1, 2, 3, 8} {
			seen := make([]int, n)
			ranges := make([][2]int, parts)
			Run(parts, n, func(part, lo, hi int) {
				ranges[part] = [2]int{lo, hi}
				for i := lo; i < hi; i++ {
					seen[i]++
				}
			})
			if slices.ContainsFunc(seen, func(c int) bool { return c != 1 }) {
				t.Errorf("n=%d parts=%d: visits %v", n, parts, seen)
			}
			for p := 1; p < parts; p++ {
				if ranges[p][0] != ranges[p-1][1] {
					t.Errorf("n=%d parts=%d: ranges %v are not consecutive", n, parts, ranges)
				}
			}
		}
	}
}

func TestParts(t *testing.T) {
	if got := Parts(10, 64); got != 1 {
		t.Errorf("Parts(10, 64) = %d, want 1", got)
	}
	if got := Parts(0, 0); got != 1 {
		t.Errorf("Parts(0, 0) = %d, want 1", got)
	}
}
