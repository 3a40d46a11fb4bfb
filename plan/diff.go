package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/syslet/syslet/pkg/unit"
)

// diffKeys lists the [Section] Key changes from old to new. A key with one
// value on each side that differs is a change (~); otherwise values only
// in old are removed (-) and values only in new are added (+).
func diffKeys(old, new *unit.File) []KeyChange {
	// Values grouped by [Section] Key in order of first appearance. A
	// unit has a few dozen distinct keys (quadlet's vocabulary bounds
	// them), so a slice searched from the end is cheaper than maps; an
	// index takes over if a file has many.
	type group struct {
		s, k   string
		ov, nv []string
	}
	groups := make([]group, 0, 24)
	var index map[[2]string]int
	find := func(s, k string) *group {
		if index == nil {
			for i := len(groups) - 1; i >= 0; i-- {
				if groups[i].k == k && groups[i].s == s {
					return &groups[i]
				}
			}
		} else if i, ok := index[[2]string{s, k}]; ok {
			return &groups[i]
		}
		groups = append(groups, group{s: s, k: k})
		if index == nil && len(groups) > 64 {
			index = make(map[[2]string]int, 2*len(groups))
			for i, g := range groups {
				index[[2]string{g.s, g.k}] = i
			}
		} else if index != nil {
			index[[2]string{s, k}] = len(groups) - 1
		}
		return &groups[len(groups)-1]
	}
	for _, s := range old.Sections {
		for _, e := range s.Entries {
			g := find(s.Name, e.Key)
			g.ov = append(g.ov, e.Value)
		}
	}
	for _, s := range new.Sections {
		for _, e := range s.Entries {
			g := find(s.Name, e.Key)
			g.nv = append(g.nv, e.Value)
		}
	}
	var out []KeyChange
	for _, g := range groups {
		ov, nv := g.ov, g.nv
		key := struct{ s, k string }{g.s, g.k}
		if slices.Equal(ov, nv) {
			continue
		}
		if len(ov) == 1 && len(nv) == 1 {
			out = append(out, KeyChange{Op: "~", Section: key.s, Key: key.k, Old: ov[0], New: nv[0]})
			continue
		}
		if len(ov) == 0 {
			for _, v := range nv {
				out = append(out, KeyChange{Op: "+", Section: key.s, Key: key.k, New: v})
			}
			continue
		}
		// Sets, not slices.Contains: a container with thousands of config
		// files has thousands of Volume= values under one key.
		inOld, inNew := set(ov), set(nv)
		for _, v := range ov {
			if !inNew[v] {
				out = append(out, KeyChange{Op: "-", Section: key.s, Key: key.k, Old: v})
			}
		}
		for _, v := range nv {
			if !inOld[v] {
				out = append(out, KeyChange{Op: "+", Section: key.s, Key: key.k, New: v})
			}
		}
		if slices.Equal(sorted(ov), sorted(nv)) {
			out = append(out, KeyChange{Op: "~", Section: key.s, Key: key.k, Old: "(order)", New: "(reordered)"})
		}
	}
	return out
}

func set(vs []string) map[string]bool {
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// summarizeKeys names the changed keys in one short phrase for a reason.
func summarizeKeys(ks []KeyChange) string {
	var names []string
	for _, k := range ks {
		n := "[" + k.Section + "] " + k.Key
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	switch len(names) {
	case 0:
		return "unit changed"
	case 1, 2, 3:
		return strings.Join(names, ", ") + " changed"
	}
	return fmt.Sprintf("%s and %d more keys changed", strings.Join(names[:3], ", "), len(names)-3)
}

// unifiedDiff is a unified diff of a text file; binary content is only
// described.
func unifiedDiff(path string, old, new []byte) string {
	if !utf8.Valid(old) || !utf8.Valid(new) {
		return fmt.Sprintf("binary content changed (%d → %d bytes)\n", len(old), len(new))
	}
	oldLabel, newLabel := "a"+path, "b"+path
	if old == nil {
		oldLabel = "/dev/null"
	}
	if new == nil {
		newLabel = "/dev/null"
	}
	if len(old) == 0 || len(new) == 0 {
		return wholeDiff(oldLabel, newLabel, old, new)
	}
	return udiff.Unified(oldLabel, newLabel, string(old), string(new))
}

// wholeDiff is the unified diff of a file created or emptied, byte for
// byte what udiff.Unified gives (TestWholeDiff), without its line-matching
// work: a first deploy diffs every file it writes against nothing.
func wholeDiff(oldLabel, newLabel string, old, new []byte) string {
	text, sign := new, "+"
	if len(new) == 0 {
		text, sign = old, "-"
	}
	if len(text) == 0 {
		return ""
	}
	lines := strings.SplitAfter(string(text), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var b strings.Builder
	b.Grow(len(text) + len(lines) + len(oldLabel) + len(newLabel) + 40)
	b.WriteString("--- " + oldLabel + "\n+++ " + newLabel + "\n")
	if sign == "+" {
		fmt.Fprintf(&b, "@@ -0,0 +1%s @@\n", hunkLen(len(lines)))
	} else {
		fmt.Fprintf(&b, "@@ -1%s +0,0 @@\n", hunkLen(len(lines)))
	}
	for _, l := range lines {
		b.WriteString(sign)
		b.WriteString(l)
	}
	if !strings.HasSuffix(lines[len(lines)-1], "\n") {
		b.WriteString("\n\\ No newline at end of file\n")
	}
	return b.String()
}

// hunkLen is the ",N" of a hunk header; a one-line hunk omits it.
func hunkLen(n int) string {
	if n == 1 {
		return ""
	}
	return "," + strconv.Itoa(n)
}
