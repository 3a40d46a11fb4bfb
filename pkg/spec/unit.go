package spec

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/syslet/syslet/pkg/spec/internal/jsontree"
	"github.com/syslet/syslet/pkg/unit"
)

// sections lists the unit sections a kind accepts: its own (the kind
// table's) among systemd's and quadlet's; X- sections of the user's own
// are accepted too, except the reserved ones.
func sections(kind Kind) []string {
	return []string{unit.Unit, kind.Quadlet().Section, unit.Service, unit.Install, unit.Quadlet}
}

// reserved reports whether a section is syslet's marker or an X- name
// quadlet uses for a section it rewrites (X-Container, X-Quadlet, …): a
// user section of that name would be clobbered.
func reserved(section string) bool {
	if section == unit.Syslet || section == "X-"+unit.Quadlet {
		return true
	}
	for _, k := range unit.Kinds {
		if section == "X-"+k.Section {
			return true
		}
	}
	return false
}

// mapKeys are the keys whose value may be an object, and how one map entry
// becomes one line: key, separator, value. An empty value gives the bare
// key, except for the assignment-style keys where "K=" is meaningful.
//
// An empty value must be allowed where the line it gives is valid:
// "Volume=cache.volume" (no destination) and "LogOpt=tag=" are not, and
// podman would only say so when the container starts. Mask takes two
// paths in map form, as the format's reference (the earlier syslet's
// unit-options.md) says: an empty value is refused.
//
// Network's value is ignored: the format's reference says the key alone
// names the network, and the earlier syslet wrote "Network=host" for
// {"host": "x"}, so that is the line a host it deployed has. A value is
// warned about, not joined on as network options.
var mapKeys = map[string]struct {
	sep       string
	keepEmpty bool
	needValue string // why an empty value is refused; "" when it is fine
	ignore    bool   // the value is not written (Network)
}{
	"Environment": {"=", true, "", false},
	"LogOpt":      {"=", true, "a log option needs a value (opt=value)", false},
	"Volume":      {":", false, "a volume needs a destination in the container (src: dst)", false},
	"Network":     {":", false, "", true},
	"Mask":        {":", false, "a mask entry needs a second path (path: path); write a single path as a string", false},
	"Secret":      {",", false, "", false},
}

var envNameRe = regexp.MustCompile(`^[^=\s"'\\]+$`)

// unit decodes the unit object: sections in order, keys in order.
func (d *decoder) unit(v *jsontree.Node, kind Kind) []Section {
	if v.Kind != jsontree.Object {
		d.errf(v.Path(), RuleFieldType, "unit must be an object of sections, got %s", v.Kind)
		d.refuse("unit")
		return nil
	}
	var out []Section
	for i, name := range v.Keys {
		sv := v.Vals[i]
		switch {
		case hasControl(name):
			d.errf(sv.Path(), RuleControlChar, "section name %q contains a control character", name)
			continue
		case reserved(name):
			d.errf(sv.Path(), RuleReservedSection, "section [%s] is reserved: syslet or quadlet writes it", name)
			continue
		case !isWord(name, false):
			d.errf(sv.Path(), RuleSection, "section name %q is not valid", name)
			continue
		case !slices.Contains(sections(kind), name) && !strings.HasPrefix(name, "X-"):
			d.errf(sv.Path(), RuleSection, "section [%s] is not valid in a %s unit (allowed: %s, or X-<name> of your own)", name, kind, strings.Join(sections(kind), ", "))
			continue
		}
		if sv.Kind != jsontree.Object {
			d.errf(sv.Path(), RuleFieldType, "section [%s] must be an object of keys, got %s", name, sv.Kind)
			d.refuse(name)
			continue
		}
		sec := Section{Name: name, Path: sv.Path()}
		for j, key := range sv.Keys {
			if e, ok := d.entry(name, key, sv.Vals[j]); ok {
				sec.Entries = append(sec.Entries, e)
			}
		}
		out = append(out, sec)
	}
	return out
}

func (d *decoder) entry(section, key string, v *jsontree.Node) (Entry, bool) {
	fail := func(p, rule, format string, args ...any) {
		d.refuse(section + "." + key)
		d.errf(p, rule, format, args...)
	}
	switch {
	case hasControl(key):
		fail(v.Path(), RuleControlChar, "key %q contains a control character", key)
		return Entry{}, false
	case !isWord(key, false):
		fail(v.Path(), RuleKeyName, "key %q is not a valid unit key name", key)
		return Entry{}, false
	}
	if !d.knownKey(section, key, v.Path()) {
		d.refuse(section + "." + key)
		return Entry{}, false
	}
	e := Entry{Key: key, Path: v.Path()}
	line := func(text, p string) {
		switch {
		case hasControl(text):
			fail(p, RuleControlChar, "%s value contains a newline or other control character; a unit value is one line", key)
		case strings.HasSuffix(text, `\`):
			fail(p, RuleContinuation, "%s value ends in a backslash, which systemd reads as a line continuation", key)
		default:
			e.Lines = append(e.Lines, Value{Text: text, Path: p})
		}
	}
	env := key == "Environment"
	switch v.Kind {
	case jsontree.String:
		line(envWord(env, v.Text), v.Path())
	case jsontree.Array:
		for _, it := range v.Items {
			if it.Kind != jsontree.String {
				hint := ""
				if it.Kind == jsontree.Number || it.Kind == jsontree.Bool {
					hint = fmt.Sprintf(" (write %q)", it.Text)
				}
				fail(it.Path(), RuleFieldType, "%s list items must be strings, got %s%s", key, it.Kind, hint)
				continue
			}
			line(envWord(env, it.Text), it.Path())
		}
	case jsontree.Object:
		mk, ok := mapKeys[key]
		if !ok {
			fail(v.Path(), RuleMapNotAllowed, "%s takes a string or a list of strings; only Environment, Volume, Secret, Mask, LogOpt and Network take an object", key)
			return Entry{}, false
		}
		order := make([]int, len(v.Keys))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return v.Keys[order[a]] < v.Keys[order[b]] })
		for _, i := range order {
			k, mv := v.Keys[i], v.Vals[i]
			if mv.Kind != jsontree.String {
				fail(mv.Path(), RuleFieldType, "%s map values must be strings, got %s", key, mv.Kind)
				continue
			}
			// "/scratch" alone is an anonymous volume at that path; a
			// named source needs a destination.
			if mv.Text == "" && mk.needValue != "" && !(key == "Volume" && strings.HasPrefix(k, "/")) {
				fail(mv.Path(), RuleMapValue, "%s map value of %q is empty: %s", key, k, mk.needValue)
				continue
			}
			if k == "" || hasControl(k) || strings.ContainsAny(k, " \t") || strings.Contains(k, mk.sep) ||
				(key == "Environment" && !envNameRe.MatchString(k)) {
				also := ""
				if key == "Environment" {
					also = ", quotes or backslashes"
				}
				fail(mv.Path(), RuleMapKey, "%s map key %q cannot be rendered: a key must be non-empty, without whitespace, control characters, %q%s", key, k, mk.sep, also)
				continue
			}
			text := k
			switch {
			case mk.ignore && mv.Text != "":
				d.warnf(mv.Path(), RuleMapValueIgnored, "%s map value %q of %q is ignored, as the earlier syslet ignored it (the line is %s=%s); for network options write the string %q", key, mv.Text, k, key, k, k+mk.sep+mv.Text)
			case mv.Text != "" || mk.keepEmpty:
				text = k + mk.sep + mv.Text
			}
			line(envWord(env, text), mv.Path())
		}
	case jsontree.Number, jsontree.Bool:
		fail(v.Path(), RuleFieldType, "%s must be a string, got %s (write %q)", key, v.Kind, v.Text)
		return Entry{}, false
	default:
		fail(v.Path(), RuleFieldType, "%s must be a string, a list of strings or an object, got %s", key, v.Kind)
		return Entry{}, false
	}
	return e, true
}

// envWord makes one Environment assignment a single systemd word, in
// whichever form (string, list item, map entry) it was written: an entry
// with whitespace, quotes or backslashes is double-quoted, so "A=1 2" sets
// A to "1 2" rather than A=1 plus a stray word. An entry already written
// as one quoted word is left as it is.
func envWord(env bool, text string) string {
	if !env || !strings.ContainsAny(text, " \t\"'\\") {
		return text
	}
	if len(text) >= 2 && (text[0] == '"' || text[0] == '\'') && text[len(text)-1] == text[0] &&
		!strings.ContainsRune(text[1:len(text)-1], rune(text[0])) {
		return text
	}
	return quoteEnv(text)
}

// quoteEnv double-quotes one Environment assignment the way systemd's
// word splitting reads it back as a single word.
func quoteEnv(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// knownKey reports whether a release syslet supports knows key in section,
// and tells the key that none knows, with the known key it is most likely
// a typo of. systemd only warns about an unknown key and ignores the line
// (staging then refuses the unit on the host), so a typo in [Service] is
// caught here, where CI sees it.
//
// A key some podman release knows is accepted; whether the podman the
// specs are checked against knows it is quadletcheck's question
// (key-needs-newer-podman), asked with that version. A systemd key newer
// than the oldest systemd supported is a warning, as most hosts may well
// run a newer one.
func (d *decoder) knownKey(section, key, p string) bool {
	if unit.SystemdSection(section) {
		since, ok := unit.SystemdKeySince(section, key)
		switch {
		case !ok:
			d.errf(p, RuleUnknownKey, "systemd does not know key %s in [%s]%s", key, section, didYouMean(key, unit.SystemdKeysSince[section]))
		case unit.OldestSystemd < since:
			d.warnf(p, RuleNewerSystemd, "[%s] %s needs systemd %s or later: systemd %s (Debian 13) ignores it, and staging refuses the unit on such a host", section, key, since, unit.OldestSystemd)
		}
		return ok
	}
	if _, ok := unit.KeySince(section, key); !ok {
		d.errf(p, RuleUnknownKey, "quadlet does not know key %s in [%s]%s", key, section, didYouMean(key, unit.KeysSince[section]))
		return false
	}
	return true
}

// didYouMean is ": did you mean K?" for the key of known that key is most
// likely a typo of, or "".
func didYouMean[V any](key string, known map[string]V) string {
	keys := make([]string, 0, len(known))
	for k := range known {
		keys = append(keys, k)
	}
	sort.Strings(keys) // one answer for a tie, whatever the map's order
	if near := nearMiss(key, keys); near != "" {
		return ": did you mean " + near + "?"
	}
	return ""
}
