package unit

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// Entry is one Key=Value line.
type Entry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Section is one [Name] group with its entries in file order.
type Section struct {
	Name    string  `json:"name"`
	Entries []Entry `json:"entries"`
}

// File is a whole unit file.
type File struct {
	Sections []*Section `json:"sections"`

	// index finds a section by name in a file of many (a unit can have
	// any number of X- sections, and a hostile one a hundred thousand):
	// built on the first lookup past indexFrom sections, then kept up to
	// date with the sections appended since (indexed of them so far).
	// Sections may be appended to and reordered freely; a file whose
	// sections shrank, or whose indexed section was renamed, is indexed
	// again.
	index   map[string]*Section
	indexed int
}

// indexFrom is the number of sections from which a lookup uses the
// index: real units have a handful, where a scan is cheaper.
const indexFrom = 16

// Section returns the named section, or nil.
func (f *File) Section(name string) *Section {
	if len(f.Sections) < indexFrom {
		for _, s := range f.Sections {
			if s.Name == name {
				return s
			}
		}
		return nil
	}
	if f.index == nil || f.indexed > len(f.Sections) {
		f.index, f.indexed = make(map[string]*Section, len(f.Sections)), 0
	}
	for _, s := range f.Sections[f.indexed:] {
		if _, dup := f.index[s.Name]; !dup {
			f.index[s.Name] = s // the first of a name, as a scan finds it
		}
	}
	f.indexed = len(f.Sections)
	s := f.index[name]
	if s != nil && s.Name != name {
		f.index = nil // renamed behind the index's back
		return f.Section(name)
	}
	return s
}

// Ensure returns the named section, appending an empty one if missing.
func (f *File) Ensure(name string) *Section {
	if s := f.Section(name); s != nil {
		return s
	}
	s := &Section{Name: name}
	f.Sections = append(f.Sections, s)
	return s
}

// Add appends Key=Value to the named section, creating it at the end if needed.
func (f *File) Add(section, key, value string) { f.Ensure(section).Add(key, value) }

// Add appends Key=Value.
func (s *Section) Add(key, value string) { s.Entries = append(s.Entries, Entry{key, value}) }

// Lookup returns every value of key in section, in order.
func (f *File) Lookup(section, key string) []string {
	s := f.Section(section)
	if s == nil {
		return nil
	}
	var vs []string
	for _, e := range s.Entries {
		if e.Key == key {
			vs = append(vs, e.Value)
		}
	}
	return vs
}

// Last returns the last value of key in section, which is the one systemd
// and quadlet honour for single-valued keys.
func (f *File) Last(section, key string) (string, bool) {
	vs := f.Lookup(section, key)
	if len(vs) == 0 {
		return "", false
	}
	return vs[len(vs)-1], true
}

// Bytes serialises the file: one blank line between sections, a trailing
// newline, nothing else. The same File always gives the same bytes.
func (f *File) Bytes() []byte {
	// Sized first: a unit is written once into exactly its length, not
	// grown by doubling (this runs for every unit of every plan).
	b := make([]byte, 0, f.size())
	for i, s := range f.Sections {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, '[')
		b = append(b, s.Name...)
		b = append(b, "]\n"...)
		for _, e := range s.Entries {
			b = append(b, e.Key...)
			b = append(b, '=')
			b = append(b, e.Value...)
			b = append(b, '\n')
		}
	}
	return b
}

// size is the length of f.Bytes().
func (f *File) size() int {
	n := 0
	for i, s := range f.Sections {
		if i > 0 {
			n++ // the blank line between sections
		}
		n += len(s.Name) + 3
		for _, e := range s.Entries {
			n += len(e.Key) + len(e.Value) + 2
		}
	}
	return n
}

// Without returns a copy of f with the named sections removed and, when
// key is non-empty, the given section/key pairs removed ("Unit.Description").
// Sections left empty by the removal are dropped. It is used to compare two
// units while ignoring what counts as metadata.
func (f *File) Without(drop ...string) *File {
	g := &File{}
	for _, s := range f.Sections {
		if slices.Contains(drop, s.Name) {
			continue
		}
		ns := &Section{Name: s.Name}
		for _, e := range s.Entries {
			if slices.Contains(drop, s.Name+"."+e.Key) {
				continue
			}
			ns.Entries = append(ns.Entries, e)
		}
		if len(ns.Entries) > 0 {
			g.Sections = append(g.Sections, ns)
		}
	}
	return g
}

// Equal reports whether two files have the same sections, keys and values in
// the same order.
func Equal(a, b *File) bool { return bytes.Equal(a.Bytes(), b.Bytes()) }

// Parse reads a unit file the way systemd does: comments (# and ;) and blank
// lines are skipped, whitespace around keys and values is trimmed, a line
// ending in a backslash continues on the next line (joined with a space).
// Entries before the first section header are an error.
func Parse(data []byte) (*File, error) {
	f := &File{}
	var cur *Section
	lineNo := 0
	var pending strings.Builder
	pendingStart := 0
	flush := func(line string, at int) error {
		line = strings.TrimSpace(line)
		if line == "" {
			return nil
		}
		if strings.HasPrefix(line, "[") {
			if !strings.HasSuffix(line, "]") || len(line) < 3 {
				return fmt.Errorf("line %d: malformed section header %q", at, line)
			}
			name := line[1 : len(line)-1]
			cur = f.Section(name)
			if cur == nil {
				cur = &Section{Name: name}
				f.Sections = append(f.Sections, cur)
			}
			return nil
		}
		if cur == nil {
			return fmt.Errorf("line %d: assignment outside of a section", at)
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return fmt.Errorf("line %d: expected Key=Value, got %q", at, line)
		}
		cur.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		return nil
	}
	for len(data) > 0 {
		var raw []byte
		raw, data, _ = bytes.Cut(data, []byte{'\n'})
		lineNo++
		line := strings.TrimSuffix(string(raw), "\r")
		trimmed := strings.TrimSpace(line)
		if pending.Len() == 0 && (trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';') {
			continue
		}
		if pending.Len() > 0 && trimmed != "" && (trimmed[0] == '#' || trimmed[0] == ';') {
			continue // systemd skips comment lines inside a continuation
		}
		if strings.HasSuffix(line, "\\") {
			if pending.Len() == 0 {
				pendingStart = lineNo
			}
			pending.WriteString(strings.TrimSuffix(line, "\\"))
			pending.WriteByte(' ')
			continue
		}
		if pending.Len() > 0 {
			pending.WriteString(line)
			if err := flush(pending.String(), pendingStart); err != nil {
				return nil, err
			}
			pending.Reset()
			continue
		}
		if err := flush(line, lineNo); err != nil {
			return nil, err
		}
	}
	if pending.Len() > 0 {
		if err := flush(pending.String(), pendingStart); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// ParseKnown is Parse for data expected to be known's own bytes: a unit
// syslet rendered, read back from the host. When data is exactly
// known.Bytes() and known reads back as itself (ReadsBack), known is
// returned, not a parsed copy: a host holding a hundred thousand unchanged
// units then costs no second copy of each, nor the time to parse it.
// Anything else is parsed as Parse does. The caller must treat the result
// as read-only, as it may be known itself.
func ParseKnown(data []byte, known *File) (*File, error) {
	if known != nil && len(data) == known.size() && known.ReadsBack() && bytes.Equal(data, known.Bytes()) {
		return known, nil
	}
	return Parse(data)
}

// ReadsBack reports whether Parse(f.Bytes()) gives f again, entry for
// entry: every section name and key written once and plainly, and no
// value that Parse would trim, continue onto the next line or split.
func (f *File) ReadsBack() bool {
	plain := func(s string) bool {
		return s != "" && strings.TrimSpace(s) == s && !strings.ContainsAny(s, "\n\r")
	}
	var names map[string]bool // past indexFrom sections; a scan below that
	if len(f.Sections) >= indexFrom {
		names = make(map[string]bool, len(f.Sections))
	}
	for i, s := range f.Sections {
		if !plain(s.Name) {
			return false
		}
		if names != nil {
			if names[s.Name] {
				return false
			}
			names[s.Name] = true
		} else if slices.ContainsFunc(f.Sections[:i], func(o *Section) bool { return o.Name == s.Name }) {
			return false
		}
		for _, e := range s.Entries {
			if !plain(e.Key) || strings.Contains(e.Key, "=") || strings.ContainsAny(e.Key[:1], "#;[") {
				return false
			}
			if e.Value != "" && (strings.TrimSpace(e.Value) != e.Value || strings.ContainsAny(e.Value, "\n\r") || strings.HasSuffix(e.Value, "\\")) {
				return false
			}
		}
	}
	return true
}

// Managed reports whether a unit file is syslet's: it carries the
// [X-Syslet] marker section. This is the one test for ownership; a file
// without the marker is never changed or removed.
func Managed(f *File) bool { return f != nil && f.Section(Syslet) != nil }
