package plan

import (
	"fmt"
	"slices"
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
	nom, nnm := collect(unit.Normalize(old)), collect(unit.Normalize(new))
	// Keys in the order the new file has them (syslet's canonical order),
	// then those only the old one has.
	var order []sk
	for _, f := range []*unit.File{new, old} {
		if f == nil {
			continue
		}
		for _, s := range f.Sections {
			for _, e := range s.Entries {
				if key := (sk{s.Name, e.Key}); !slices.Contains(order, key) {
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
	return udiff.Unified(oldLabel, newLabel, string(old), string(new))
}
