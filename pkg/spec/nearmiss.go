package spec

import "strings"

// NearMiss is nearMiss for the checks after rendering (a named volume
// one letter short of a declared one).
func NearMiss(k string, known []string) string { return nearMiss(k, known) }

// nearMiss returns the known field that an unknown one is most likely a
// typo of: the same word in another case, or one or two edits away (an
// insertion, a deletion, a substitution or two neighbours swapped); ""
// when none is that close. An unknown field that is a near miss of a known
// one is an error: the earlier syslet ignored unknown fields, and a
// "configfiles" silently ignored drops every config file of the container
// from the next apply. Any other unknown field stays a warning, as it was
// (its users' specs may carry fields of their own).
func nearMiss(k string, known []string) string {
	best, bestD := "", 3
	for _, f := range known {
		if strings.EqualFold(k, f) {
			return f
		}
		// Two edits turn any two short words into each other ("mode",
		// "name"): only as many edits as a longer word can take.
		limit := min(2, max(len(f), len(k))/4)
		if d := editDistance(strings.ToLower(k), strings.ToLower(f), limit); d <= limit && d < bestD {
			best, bestD = f, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b
// (Levenshtein's edits plus a swap of neighbours), or limit+1 when it is
// more than limit: field names are short, and only near misses matter.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
