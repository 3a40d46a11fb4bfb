package unit

import (
	"bytes"
	"slices"
	"strings"
)

// Units are compared by meaning, not by bytes: two files are the same unit
// when systemd and quadlet would read them the same way. Installed units
// may come from another formatter (an earlier syslet sorted every line, a
// later one may order keys differently), and neither key order nor the
// order of a set-like key's values may ever restart a service or recreate
// a volume.

// wordLists are keys whose value systemd splits on whitespace into a set
// of unit names: "After=a b" is "After=a" plus "After=b", in any order.
var wordLists = map[string][]string{
	Unit:    {"After", "Before", "Requires", "Wants", "BindsTo", "PartOf", "Conflicts", "Requisite", "Upholds", "OnFailure", "OnSuccess", "PropagatesReloadTo", "ReloadPropagatedFrom", "JoinsNamespaceOf"},
	Install: {"WantedBy", "RequiredBy", "UpheldBy", "Alias", "Also"},
}

// setKeys are quadlet keys whose repeated values become independent
// podman options whose order carries no meaning (podman sorts mounts by
// destination itself; ports, capabilities, devices and secrets are sets).
// Keys whose order matters (DNS servers, Subnet with its Gateway, Exec
// lines, PodmanArgs) are not listed and compare in order.
var setKeys = map[string][]string{
	Container: {"Volume", "Mount", "Tmpfs", "PublishPort", "ExposeHostPort", "AddCapability", "DropCapability", "AddDevice", "AddHost", "Secret", "Mask", "Unmask", "Network", "NetworkAlias", "GroupAdd", "Ulimit"},
	Build:     {"Volume", "Secret", "Network", "GroupAdd"},
	Pod:       {"Volume", "PublishPort", "Network", "NetworkAlias", "AddHost"},
	Kube:      {"PublishPort", "Network"},
}

// assignKeys take NAME=value (or NAME value) items. Their order matters
// only when a name repeats (the last one wins), so they compare as sets
// when every name is distinct.
var assignKeys = []string{"Environment", "Label", "Annotation", "LogOpt", "Sysctl"}

// Normalize returns the canonical reading of f: empty sections dropped,
// sections and keys sorted by name, word lists split into single names,
// and the values of set-like keys sorted. Two files with equal normalized
// forms mean the same to systemd and quadlet.
func Normalize(f *File) *File {
	g := &File{}
	if f == nil {
		return g
	}
	for _, s := range f.Sections {
		// Sized for the section's entries: a hostile unit's section can
		// hold a hundred thousand, grown by rehashing and doubling else.
		byKey := make(map[string][]string, len(s.Entries))
		keys := make([]string, 0, len(s.Entries))
		for _, e := range s.Entries {
			if _, ok := byKey[e.Key]; !ok {
				keys = append(keys, e.Key)
			}
			byKey[e.Key] = append(byKey[e.Key], e.Value)
		}
		if len(keys) == 0 {
			continue
		}
		slices.Sort(keys)
		ns := &Section{Name: s.Name, Entries: make([]Entry, 0, len(s.Entries))}
		for _, k := range keys {
			vs := byKey[k]
			switch {
			case slices.Contains(wordLists[s.Name], k):
				var words []string
				for _, v := range vs {
					words = append(words, strings.Fields(v)...)
				}
				slices.Sort(words)
				vs = slices.Compact(words)
			case slices.Contains(setKeys[s.Name], k),
				slices.Contains(assignKeys, k) && distinctNames(vs):
				vs = slices.Clone(vs)
				slices.Sort(vs)
			}
			for _, v := range vs {
				ns.Add(k, v)
			}
		}
		g.Sections = append(g.Sections, ns)
	}
	slices.SortStableFunc(g.Sections, func(a, b *Section) int { return strings.Compare(a.Name, b.Name) })
	return g
}

// Kept reports whether Normalize keeps a key with these values: only a
// word list that holds no word at all (After= with nothing after it)
// disappears.
func Kept(section, key string, values []string) bool {
	if !slices.Contains(wordLists[section], key) {
		return true
	}
	for _, v := range values {
		if strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}

func distinctNames(vs []string) bool {
	seen := map[string]bool{}
	for _, v := range vs {
		name, _, _ := strings.Cut(strings.Trim(v, `"`), "=")
		if seen[name] {
			return false
		}
		seen[name] = true
	}
	return true
}

// Same reports whether a and b mean the same unit.
func Same(a, b *File) bool { return Equal(Normalize(a), Normalize(b)) }

// WithoutMetadata drops what says who wrote a unit and what it is called
// rather than what systemd and podman run: syslet's [X-Syslet] marker and
// [Unit] Description. A change to those alone is a metadata-only rewrite,
// and a hand-written unit that differs from its spec only there is taken
// over without a restart.
func (f *File) WithoutMetadata() *File { return f.Without(Syslet, Unit+"."+KeyDescription) }

// SameMeaning reports whether two unit files configure the same thing:
// equal without their metadata (WithoutMetadata), ignoring the order of
// sections and of different keys. Unlike Same, the order of one key's
// repeated values is kept even for set-like keys: taking a hand-written
// unit over is judged strictly.
func SameMeaning(a, b *File) bool {
	return bytes.Equal(meaning(a), meaning(b))
}

func meaning(f *File) []byte {
	g := f.WithoutMetadata()
	secs := slices.Clone(g.Sections)
	slices.SortStableFunc(secs, func(x, y *Section) int { return strings.Compare(x.Name, y.Name) })
	n := &File{}
	for _, s := range secs {
		es := slices.Clone(s.Entries)
		slices.SortStableFunc(es, func(x, y Entry) int { return strings.Compare(x.Key, y.Key) })
		n.Sections = append(n.Sections, &Section{Name: s.Name, Entries: es})
	}
	return n.Bytes()
}

// SortKeys orders the keys of every section by name, keeping the values of
// one key in their order: the canonical layout render writes, so that the
// order of keys in a spec's JSON object never reaches the file.
func (f *File) SortKeys() {
	for _, s := range f.Sections {
		slices.SortStableFunc(s.Entries, func(a, b Entry) int { return strings.Compare(a.Key, b.Key) })
	}
}
