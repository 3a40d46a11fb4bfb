package unit

import (
	"fmt"
	"reflect"
	"testing"
)

// TestParseKnown: a unit read back exactly as rendered is the rendered
// File itself; whatever Parse would read differently is parsed, and then
// reads as Parse reads it.
func TestParseKnown(t *testing.T) {
	file := func(sections ...*Section) *File { return &File{Sections: sections} }
	sec := func(name string, kv ...string) *Section {
		s := &Section{Name: name}
		for i := 0; i+1 < len(kv); i += 2 {
			s.Add(kv[i], kv[i+1])
		}
		return s
	}
	tests := []struct {
		name  string
		known *File
		data  func(known *File) []byte // nil: known.Bytes()
		reuse bool
	}{
		{name: "as rendered", known: file(sec("Volume", "VolumeName", "v"), sec(Syslet, "Digest", "sha256:x")), reuse: true},
		{name: "empty value and section", known: file(sec("Unit", "Wants", ""), sec("X-Empty")), reuse: true},
		{name: "value with = and #", known: file(sec("Container", "Environment", "A=b#c")), reuse: true},
		{name: "data differs", known: file(sec("Volume", "VolumeName", "v")),
			data: func(*File) []byte { return []byte("[Volume]\nVolumeName=w\n") }},
		{name: "same bytes but a comment", known: file(sec("Volume", "VolumeName", "v")),
			data: func(*File) []byte { return []byte("# hand\n[Volume]\nVolumeName=v\n") }},
		{name: "value Parse trims", known: file(sec("Container", "Exec", "sh "))},
		{name: "value Parse continues", known: file(sec("Container", "Exec", `sh \`), sec("Unit", "Description", "d"))},
		{name: "key Parse splits", known: file(sec("Container", "A=B", "c"))},
		{name: "key Parse reads as a comment", known: file(sec("Container", "#A", "c"))},
		{name: "key Parse reads as a header", known: file(sec("Container", "[A]", "c"))},
		{name: "section twice (Parse merges)", known: file(sec("A", "k", "1"), sec("B", "k", "2"), sec("A", "k", "3"))},
		{name: "section twice among many (Parse merges)", known: func() *File {
			f := &File{}
			for i := range indexFrom + 4 {
				f.Add(fmt.Sprintf("X-S%d", i), "k", "v")
			}
			f.Sections = append(f.Sections, sec("X-S3", "k", "w"))
			return f
		}()},
		{name: "many sections", known: func() *File {
			f := &File{}
			for i := range indexFrom + 4 {
				f.Add(fmt.Sprintf("X-S%d", i), "k", "v")
			}
			return f
		}(), reuse: true},
		{name: "section name Parse trims", known: file(sec(" A", "k", "1"))},
		{name: "newline in a value", known: file(sec("A", "k", "1\nk=2"))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.known.Bytes()
			if tc.data != nil {
				data = tc.data(tc.known)
			}
			if len(tc.known.Bytes()) != tc.known.size() {
				t.Fatalf("size() = %d, Bytes() is %d long", tc.known.size(), len(tc.known.Bytes()))
			}
			got, gerr := ParseKnown(data, tc.known)
			want, werr := Parse(data)
			if (gerr == nil) != (werr == nil) {
				t.Fatalf("ParseKnown err %v, Parse err %v", gerr, werr)
			}
			if reused := got == tc.known; reused != tc.reuse {
				t.Fatalf("reused the known file = %t, want %t", reused, tc.reuse)
			}
			// Reused or not, it reads as Parse reads the bytes.
			if gerr == nil && !reflect.DeepEqual(sectionsOf(got), sectionsOf(want)) {
				t.Errorf("ParseKnown gives\n%q\nParse gives\n%q", sectionsOf(got), sectionsOf(want))
			}
		})
	}
	if f, err := ParseKnown([]byte("[A]\nk=v\n"), nil); err != nil || f.Bytes() == nil {
		t.Errorf("without a known file: %v", err)
	}
}

func sectionsOf(f *File) []Section {
	var out []Section
	for _, s := range f.Sections {
		out = append(out, Section{Name: s.Name, Entries: append([]Entry{}, s.Entries...)})
	}
	return out
}
