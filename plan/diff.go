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
//
// Whether a key changed is judged on the normalized files (unit.Normalize),
// so only differences in meaning are listed and every difference in meaning
// names its key; the values shown are the lines as written.
func diffKeys(old, new *unit.File) []KeyChange {
	return diffKeysNormalized(old, new, nil, nil)
}

// diffKeysNormalized is diffKeys given the normalized files too (nil:
// normalized here).
func diffKeysNormalized(old, new, nOld, nNew *unit.File) []KeyChange {
	if old == nil || len(old.Sections) == 0 {
		return addedKeys(new)
	}
	if nOld == nil {
		nOld, nNew = unit.Normalize(old), unit.Normalize(new)
	}
	return compareKeys(old, new, nOld, nNew)
}

func compareKeys(old, new, nOld, nNew *unit.File) []KeyChange {
	type sk struct{ s, k string }
	collect := func(f *unit.File) map[sk][]string {
		m := map[sk][]string{}
		if f == nil {
			return m
		}
		for _, s := range f.Sections {
			for _, e := range s.Entries {
				m[sk{s.Name, e.Key}] = append(m[sk{s.Name, e.Key}], e.Value)
			}
		}
		return m
	}
	om, nm := collect(old), collect(new)
	nom, nnm := collect(nOld), collect(nNew)
	// Keys in the order the new file has them (syslet's canonical order),
	// then those only the old one has.
	var order []sk
	inOrder := map[sk]bool{}
	for _, f := range []*unit.File{new, old} {
		if f == nil {
			continue
		}
		for _, s := range f.Sections {
			for _, e := range s.Entries {
				if key := (sk{s.Name, e.Key}); !inOrder[key] {
					inOrder[key] = true
					order = append(order, key)
				}
			}
		}
	}
	var out []KeyChange
	for _, key := range order {
		if slices.Equal(nom[key], nnm[key]) {
			continue
		}
		ov, nv := om[key], nm[key]
		if len(ov) == 1 && len(nv) == 1 {
			out = append(out, KeyChange{Op: "~", Section: key.s, Key: key.k, Old: ov[0], New: nv[0]})
			continue
		}
		n := len(out)
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
		switch {
		case len(out) > n:
		case len(ov) != len(nv):
			// The same values, repeated a different number of times.
			out = append(out, KeyChange{Op: "~", Section: key.s, Key: key.k, Old: fmt.Sprintf("(%d lines)", len(ov)), New: fmt.Sprintf("(%d lines)", len(nv))})
		default:
			// The same values, in an order that matters (ExecStartPre=, DNS=).
			out = append(out, KeyChange{Op: "~", Section: key.s, Key: key.k, Old: "(order)", New: "(reordered)"})
		}
	}
	return out
}

// addedKeys is diffKeys from an empty file, as every new unit of a first
// deploy has it: each key that means something, in the order the file
// has it, with all its values added. Nothing to normalize on the old side.
func addedKeys(f *unit.File) []KeyChange {
	type sk struct{ s, k string }
	var order []sk
	vals := map[sk][]string{}
	n := 0
	for _, s := range f.Sections {
		for _, e := range s.Entries {
			key := sk{s.Name, e.Key}
			if _, ok := vals[key]; !ok {
				order = append(order, key)
			}
			vals[key] = append(vals[key], e.Value)
			n++
		}
	}
	out := make([]KeyChange, 0, n)
	for _, key := range order {
		if !unit.Kept(key.s, key.k, vals[key]) {
			continue
		}
		for _, v := range vals[key] {
			out = append(out, KeyChange{Op: "+", Section: key.s, Key: key.k, New: v})
		}
	}
	if len(out) == 0 {
		return nil
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

// summarizeKeys names the changed keys in one short phrase for a reason.
func summarizeKeys(ks []KeyChange) string {
	var names []string
	seen := map[string]bool{}
	for _, k := range ks {
		n := "[" + k.Section + "] " + k.Key
		if !seen[n] {
			seen[n] = true
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
