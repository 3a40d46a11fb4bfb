package spec

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec/internal/jsontree"
	"github.com/syslet/syslet/pkg/unit"
)

// fields lists the top-level fields each kind accepts besides apiVersion,
// type and name. Anything else is an error: a mistyped field in a deploy
// spec is a bug, not something to ignore.
var fields = map[Kind][]string{
	Container: {"unit", "desiredState", "removalAllowed", "configFiles", "configDirs"},
	Volume:    {"unit", "removalAllowed", "reclaimPolicy"},
	Network:   {"unit", "removalAllowed", "reclaimPolicy"},
	Build:     {"unit", "containerfile", "contextFiles", "reclaimPolicy"},
	Secret:    {"ciphertext", "external"},
}

// sections lists the unit sections each kind accepts; X- sections of the
// user's own are accepted too, except the reserved ones.
var sections = map[Kind][]string{
	Container: {unit.Unit, unit.Container, unit.Service, unit.Install, unit.Quadlet},
	Volume:    {unit.Unit, unit.Volume, unit.Service, unit.Install, unit.Quadlet},
	Network:   {unit.Unit, unit.Network, unit.Service, unit.Install, unit.Quadlet},
	Build:     {unit.Unit, unit.Build, unit.Service, unit.Install, unit.Quadlet},
}

// reservedSections are syslet's marker and the X- names quadlet uses for
// the sections it rewrites; a user section of that name would be clobbered.
var reservedSections = []string{unit.Syslet, "X-Container", "X-Volume", "X-Network", "X-Build",
	"X-Image", "X-Pod", "X-Kube", "X-Quadlet", "X-Artifact"}

// mapKeys are the keys whose value may be an object, and how one map entry
// becomes one line: key, separator, value. An empty value gives the bare
// key, except for the assignment-style keys where "K=" is meaningful.
//
// An empty value must be allowed where the line it gives is valid:
// "Volume=cache.volume" (no destination) and "LogOpt=tag=" are not, and
// podman would only say so when the container starts.
var mapKeys = map[string]struct {
	sep       string
	keepEmpty bool
	needValue string // why an empty value is refused; "" when it is fine
}{
	"Environment": {"=", true, ""},
	"LogOpt":      {"=", true, "a log option needs a value (opt=value)"},
	"Volume":      {":", false, "a volume needs a destination in the container (src: dst)"},
	"Network":     {":", false, ""},
	"Mask":        {":", false, ""},
	"Secret":      {",", false, ""},
}

var (
	modeRe       = regexp.MustCompile(`^[0-7]{3,4}$`)
	secretKeyRe  = regexp.MustCompile(`^[a-z0-9-]+$`)
	envNameRe    = regexp.MustCompile(`^[^=\s"'\\]+$`)
	maxNameBytes = 128
)

type decoder struct {
	source string
	rep    *report.Report
	// refused holds the unit parts a finding was made about: "unit", a
	// section name, or "Section.Key". Checks for a missing key consult it,
	// so a key that is present but refused (null, a control character, a
	// section that is not an object) is reported once, for what is wrong
	// with it, and not a second time as missing.
	refused map[string]bool
}

func (d *decoder) errf(path, rule, format string, args ...any) {
	d.rep.Errorf(d.source, path, rule, format, args...)
}

// warnf reports something the earlier syslet accepted and syslet accepts
// too, but would rather see written otherwise; `syslet validate --strict`
// makes it an error.
func (d *decoder) warnf(path, rule, format string, args ...any) {
	d.rep.Warnf(d.source, path, rule, format, args...)
}

// refuse records that a finding was made about part of the unit.
func (d *decoder) refuse(part string) {
	if d.refused == nil {
		d.refused = map[string]bool{}
	}
	d.refused[part] = true
}

// missing reports whether none of keys has a value in section and no
// finding was made about the unit, the section or those keys: only then is
// "KEY is required" the one thing to tell the user.
func (d *decoder) missing(s *Spec, section string, keys ...string) bool {
	if d.refused["unit"] || d.refused[section] {
		return false
	}
	for _, k := range keys {
		if _, ok := s.Last(section, k); ok || d.refused[section+"."+k] {
			return false
		}
	}
	return true
}

// spec decodes one stream item. It returns nil only when the item is not
// an object at all.
func (d *decoder) spec(n *jsontree.Node, i int) *Spec {
	if n.Kind != jsontree.Object {
		d.errf(n.Path(), RuleNotObject, "a spec must be a JSON object, got %s", n.Kind)
		return nil
	}
	s := &Spec{Source: d.source, Index: i, RemovalAllowed: true}

	s.APIVersion = d.str(n, "apiVersion", true)
	if v := n.Get("apiVersion"); v != nil && v.Kind == jsontree.String && s.APIVersion != "v1" {
		d.errf(v.Path(), RuleAPIVersion, "apiVersion %q is not supported: syslet reads \"v1\"", s.APIVersion)
	}

	kind := d.str(n, "type", true)
	s.Kind = Kind(kind)
	if lower := Kind(strings.ToLower(kind)); lower != s.Kind && fields[lower] != nil {
		// The earlier syslet accepted "Container"; its users' specs must
		// keep working.
		d.warnf(n.Get("type").Path(), RuleType, "type %q is read as %q; write it in lower case", kind, lower)
		s.Kind = lower
	}
	_, knownKind := fields[s.Kind]
	if v := n.Get("type"); v != nil && v.Kind == jsontree.String && !knownKind {
		d.errf(v.Path(), RuleType, "type %q is not one of container, volume, network, build, secret", kind)
	}

	s.Name = d.str(n, "name", true)
	if v := n.Get("name"); v != nil && v.Kind == jsontree.String && s.Name != "" {
		if s.Kind == Secret && external(n) {
			d.checkSecretName(v.Path(), s.Name)
		} else {
			d.checkName(v.Path(), s.Name)
		}
	}

	if !knownKind {
		return s // which other fields are allowed depends on the type
	}
	allowed := append([]string{"apiVersion", "type", "name"}, fields[s.Kind]...)
	for j, k := range n.Keys {
		if !slices.Contains(allowed, k) {
			d.warnf(n.Vals[j].Path(), RuleUnknownField, "unknown field %q for a %s spec is ignored (allowed: %s)", k, s.Kind, strings.Join(fields[s.Kind], ", "))
		}
	}
	if v := n.Get("unit"); v == nil && (s.Kind == Volume || s.Kind == Network) {
		d.errf(jsontree.Child(n.Path(), "unit"), RuleRequired, "unit is required (it may be empty: {\"%s\": {}})", map[Kind]string{Volume: unit.Volume, Network: unit.Network}[s.Kind])
	}

	if v := n.Get("unit"); v != nil {
		s.Unit = d.unit(v, s.Kind)
	}
	if v := n.Get("removalAllowed"); v != nil {
		if v.Kind != jsontree.Bool {
			d.errf(v.Path(), RuleFieldType, "removalAllowed must be true or false, got %s", v.Kind)
		} else {
			s.RemovalAllowed = v.Text == "true"
		}
	}
	switch s.Kind {
	case Container:
		d.container(n, s)
	case Volume:
		s.ReclaimPolicy = d.policy(n)
		d.resource(s, unit.Volume, unit.KeyVolumeName)
	case Network:
		s.ReclaimPolicy = d.policy(n)
		d.resource(s, unit.Network, unit.KeyNetworkName)
	case Build:
		d.build(n, s)
	case Secret:
		d.secret(n, s)
	}
	return s
}

// str returns a string field. A missing required field, a wrong type and
// an empty required value are reported.
func (d *decoder) str(n *jsontree.Node, key string, required bool) string {
	v := n.Get(key)
	if v == nil {
		if required {
			d.errf(jsontree.Child(n.Path(), key), RuleRequired, "%s is required", key)
		}
		return ""
	}
	if v.Kind != jsontree.String {
		d.errf(v.Path(), RuleFieldType, "%s must be a string, got %s", key, v.Kind)
		return ""
	}
	if required && v.Text == "" {
		d.errf(v.Path(), RuleRequired, "%s must not be empty", key)
	}
	return v.Text
}

func (d *decoder) checkName(p, name string) {
	switch {
	case len(name) > maxNameBytes:
		d.errf(p, RuleName, "name is %d bytes long; at most %d are allowed", len(name), maxNameBytes)
	case hasControl(name):
		d.errf(p, RuleControlChar, "name contains a control character")
	case !isWord(name, true):
		d.errf(p, RuleName, "name %q is not valid: use letters, digits, '_', '.' and '-', starting with a letter or digit (it becomes a systemd unit name and a podman resource name)", name)
	case strings.Contains(name, ".."):
		d.errf(p, RuleName, "name %q must not contain \"..\"", name)
	}
}

// maxSecretName is podman's limit on the length of a secret name.
const maxSecretName = 253

// checkSecretName checks the name of an external secret, which is the
// podman secret's own name: podman's rules (1 to 253 bytes, no '=', '/',
// ',' or NUL) and what a quadlet Secret= line can carry literally (the
// line is split on whitespace and unquoted, and systemd expands '%' and
// '$' in the command quadlet generates from it).
func (d *decoder) checkSecretName(p, name string) {
	switch {
	case len(name) > maxSecretName:
		d.errf(p, RuleName, "name is %d bytes long; podman allows at most %d for a secret", len(name), maxSecretName)
	case hasControl(name):
		d.errf(p, RuleControlChar, "name contains a control character")
	case strings.ContainsAny(name, "=/,"):
		d.errf(p, RuleName, "name %q is not a podman secret name: podman refuses '=', '/' and ','", name)
	case strings.ContainsAny(name, "\"'\\%$") || strings.IndexFunc(name, unicode.IsSpace) >= 0:
		d.errf(p, RuleName, "name %q cannot be written in a quadlet Secret= line: no whitespace, quotes, '\\', '%%' or '$'", name)
	}
}

// external reports whether a secret spec says "external": true.
func external(n *jsontree.Node) bool {
	v := n.Get("external")
	return v != nil && v.Kind == jsontree.Bool && v.Text == "true"
}

// Host path limits: every name syslet writes must fit the kernel's, or an
// apply would fail half-way through a spec that validated.
const (
	maxComponent = 255  // NAME_MAX
	maxHostPath  = 3800 // well under PATH_MAX (4096) once the host prefix is added
)

// longPath describes why a relative or absolute path cannot be written on
// a host, or returns "".
func longPath(p string) string {
	if len(p) > maxHostPath {
		return fmt.Sprintf("is %d bytes long; at most %d are allowed", len(p), maxHostPath)
	}
	for _, c := range strings.Split(p, "/") {
		if len(c) > maxComponent {
			return fmt.Sprintf("has a component of %d bytes (%.20q…); a file name can have at most %d", len(c), c, maxComponent)
		}
	}
	return ""
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (unicode.IsControl(r)) }) >= 0
}

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
		case slices.Contains(reservedSections, name):
			d.errf(sv.Path(), RuleReservedSection, "section [%s] is reserved: syslet or quadlet writes it", name)
			continue
		case !isWord(name, false):
			d.errf(sv.Path(), RuleSection, "section name %q is not valid", name)
			continue
		case !slices.Contains(sections[kind], name) && !strings.HasPrefix(name, "X-"):
			d.errf(sv.Path(), RuleSection, "section [%s] is not valid in a %s unit (allowed: %s, or X-<name> of your own)", name, kind, strings.Join(sections[kind], ", "))
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
	// A key some podman release knows is accepted here; whether the
	// podman the specs are checked against knows it is quadletcheck's
	// question (key-needs-newer-podman), asked with that version.
	if _, ok := unit.KeySince(section, key); !ok {
		fail(v.Path(), RuleUnknownKey, "quadlet does not know key %s in [%s]", key, section)
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
			if mv.Text != "" || mk.keepEmpty {
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

func (d *decoder) policy(n *jsontree.Node) Policy {
	v := n.Get("reclaimPolicy")
	if v == nil {
		return Delete
	}
	if v.Kind != jsontree.String {
		d.errf(v.Path(), RuleFieldType, "reclaimPolicy must be a string, got %s", v.Kind)
		return Delete
	}
	switch p := Policy(v.Text); p {
	case Delete, Retain:
		return p
	}
	d.errf(v.Path(), RuleEnum, "reclaimPolicy %q is not Delete or Retain", v.Text)
	return Delete
}

func (d *decoder) mode(n *jsontree.Node) uint32 {
	v := n.Get("mode")
	if v == nil {
		return DefaultMode
	}
	if v.Kind != jsontree.String {
		d.errf(v.Path(), RuleFieldType, "mode must be an octal string such as \"0644\", got %s", v.Kind)
		return DefaultMode
	}
	m, err := strconv.ParseUint(v.Text, 8, 32)
	if !modeRe.MatchString(v.Text) || err != nil || m > 0o777 {
		d.errf(v.Path(), RuleMode, "mode %q is not an octal permission between 0000 and 0777", v.Text)
		return DefaultMode
	}
	return uint32(m)
}

// content reads a file body: any text, including newlines, but no NUL.
func (d *decoder) content(n *jsontree.Node, key string) string {
	v := n.Get(key)
	if v == nil {
		return ""
	}
	if v.Kind != jsontree.String {
		d.errf(v.Path(), RuleFieldType, "%s must be a string, got %s", key, v.Kind)
		return ""
	}
	if strings.ContainsRune(v.Text, 0) {
		d.errf(v.Path(), RuleControlChar, "%s contains a NUL byte", key)
	}
	return v.Text
}

// objects checks that v is an array of objects with only the given fields.
func (d *decoder) objects(v *jsontree.Node, what string, allowed ...string) []*jsontree.Node {
	if v.Kind != jsontree.Array {
		d.errf(v.Path(), RuleFieldType, "%s must be an array, got %s", what, v.Kind)
		return nil
	}
	var out []*jsontree.Node
	for _, it := range v.Items {
		if it.Kind != jsontree.Object {
			d.errf(it.Path(), RuleFieldType, "%s items must be objects, got %s", what, it.Kind)
			continue
		}
		for j, k := range it.Keys {
			if !slices.Contains(allowed, k) {
				d.warnf(it.Vals[j].Path(), RuleUnknownField, "unknown field %q in %s is ignored (allowed: %s)", k, what, strings.Join(allowed, ", "))
			}
		}
		out = append(out, it)
	}
	return out
}

// mountPath checks a path inside the container: absolute, clean, no "..",
// and nothing that would break the Volume= syntax it ends up in.
func (d *decoder) mountPath(n *jsontree.Node) string {
	p := d.str(n, "mountPath", true)
	v := n.Get("mountPath")
	if v == nil || v.Kind != jsontree.String || p == "" {
		return p
	}
	switch {
	case hasControl(p):
		d.errf(v.Path(), RuleControlChar, "mountPath contains a control character")
	case !strings.HasPrefix(p, "/"):
		d.errf(v.Path(), RuleMountPath, "mountPath %q must be absolute", p)
	case slices.Contains(strings.Split(p, "/"), ".."):
		d.errf(v.Path(), RuleMountPath, "mountPath %q must not contain \"..\"", p)
	case path.Clean(p) != p:
		d.errf(v.Path(), RuleMountPath, "mountPath %q is not clean (did you mean %q?)", p, path.Clean(p))
	case p == "/":
		d.errf(v.Path(), RuleMountPath, "mountPath must not be the container's root")
	case strings.ContainsAny(p, ": \t,\\"):
		d.errf(v.Path(), RuleMountPath, "mountPath %q must not contain ':', ',', '\\' or whitespace (it becomes part of a Volume= line)", p)
	case longPath(p) != "":
		d.errf(v.Path(), RuleMountPath, "mountPath %s", longPath(p))
	default:
		return p
	}
	return ""
}

func (d *decoder) container(n *jsontree.Node, s *Spec) {
	s.DesiredState = Running
	if v := n.Get("desiredState"); v != nil {
		if v.Kind != jsontree.String {
			d.errf(v.Path(), RuleFieldType, "desiredState must be a string, got %s", v.Kind)
		} else {
			switch st := State(v.Text); st {
			case Running, Stopped, Oneshot:
				s.DesiredState = st
			default:
				d.errf(v.Path(), RuleEnum, "desiredState %q is not running, stopped or oneshot", v.Text)
			}
		}
	}
	if v := n.Get("configFiles"); v != nil {
		for _, it := range d.objects(v, "configFiles", "mountPath", "content", "mode") {
			s.ConfigFiles = append(s.ConfigFiles, ConfigFile{
				MountPath: d.mountPath(it), Content: d.content(it, "content"), Mode: d.mode(it), Path: it.Path(),
			})
		}
	}
	if v := n.Get("configDirs"); v != nil {
		for _, it := range d.objects(v, "configDirs", "mountPath", "files") {
			cd := ConfigDir{MountPath: d.mountPath(it), Path: it.Path()}
			fv := it.Get("files")
			if fv == nil {
				d.errf(jsontree.Child(it.Path(), "files"), RuleRequired, "files is required (it may be an empty list)")
			} else {
				seen := map[string]string{}
				for _, f := range d.objects(fv, "files", "name", "content", "mode") {
					df := DirFile{Name: d.str(f, "name", true), Content: d.content(f, "content"), Mode: d.mode(f), Path: f.Path()}
					np := jsontree.Child(f.Path(), "name")
					switch {
					case df.Name == "":
					case hasControl(df.Name):
						d.errf(np, RuleControlChar, "file name contains a control character")
					case strings.ContainsAny(df.Name, `/\`) || df.Name == "." || strings.HasPrefix(df.Name, ".."):
						d.errf(np, RuleFileName, "file name %q must be a plain name: no '/', not '.', not starting with \"..\" (reserved for the version links)", df.Name)
					case len(df.Name) > maxComponent:
						d.errf(np, RuleFileName, "file name is %d bytes long; a file name can have at most %d", len(df.Name), maxComponent)
					case seen[df.Name] != "":
						d.errf(np, RuleFileDuplicate, "file name %q already appears at %s", df.Name, seen[df.Name])
					default:
						seen[df.Name] = np
					}
					cd.Files = append(cd.Files, df)
				}
			}
			s.ConfigDirs = append(s.ConfigDirs, cd)
		}
	}
	d.mountPaths(s)

	if d.missing(s, unit.Container, unit.KeyImage, "Rootfs") {
		d.errf(jsontree.Child(s.Path(), "unit")+".Container", RuleImageRequired, "[Container] Image is required")
	}
	if s.Name != "" { // a missing name is reported already
		d.forced(s, unit.Container, unit.KeyContainerName, s.Name)
	}
	d.noServiceName(s)

	typ, hasType := s.Last(unit.Service, unit.KeyType)
	restart, hasRestart := s.Last(unit.Service, unit.KeyRestart)
	switch s.DesiredState {
	case Running, Stopped:
		if hasType && typ.Text == "oneshot" {
			d.errf(typ.Path, RuleStateConflict, "[Service] Type=oneshot conflicts with desiredState %q: use desiredState \"oneshot\"", s.DesiredState)
		}
	case Oneshot:
		if hasType && typ.Text != "oneshot" {
			d.errf(typ.Path, RuleStateConflict, "[Service] Type=%s conflicts with desiredState \"oneshot\"", typ.Text)
		}
		if hasRestart && restart.Text != "no" {
			d.errf(restart.Path, RuleStateConflict, "[Service] Restart=%s conflicts with desiredState \"oneshot\": a oneshot job runs to completion", restart.Text)
		}
	}
	switch {
	case len(s.ConfigDirs) == 0:
	case s.DesiredState == Oneshot:
		// Asking for ExecReload= as well would send the user the wrong way:
		// a oneshot container cannot use config dirs at all.
		d.errf(jsontree.Child(s.Path(), "configDirs"), RuleStateConflict, "configDirs need a running service to reload; a oneshot container cannot use them (use configFiles)")
	case d.missing(s, unit.Service, unit.KeyExecReload) && d.missing(s, unit.Container, unit.KeyReloadCmd, unit.KeyReloadSignal):
		d.errf(jsontree.Child(s.Path(), "configDirs"), RuleExecReload, "configDirs are reloaded in place, so the unit needs [Service] ExecReload= (for example \"/usr/bin/podman kill --signal HUP %s\")", s.Name)
	}
}

// mountPaths checks config mount paths against each other: no duplicates,
// none under another (the host side mirrors them as nested paths). Every
// conflicting pair is reported once, at the later of the two, in the order
// a pairwise comparison would give. Paths are indexed and only each path's
// ancestors are looked up, so one spec with tens of thousands of config
// files is checked in linear time (mount paths are clean here: invalid
// ones were reported and left out).
func (d *decoder) mountPaths(s *Spec) {
	type mp struct{ p, at string }
	var all []mp
	for _, f := range s.ConfigFiles {
		if f.MountPath != "" {
			all = append(all, mp{f.MountPath, jsontree.Child(f.Path, "mountPath")})
		}
	}
	for _, c := range s.ConfigDirs {
		if c.MountPath != "" {
			all = append(all, mp{c.MountPath, jsontree.Child(c.Path, "mountPath")})
		}
	}
	byPath := make(map[string][]int, len(all))
	for i, m := range all {
		byPath[m.p] = append(byPath[m.p], i)
	}
	const (
		duplicate = iota
		inside    // a is inside b
		contains  // a contains b
	)
	type conflict struct{ a, b, kind int }
	var found []conflict
	for i, m := range all {
		for _, k := range byPath[m.p] {
			if k >= i {
				break
			}
			found = append(found, conflict{i, k, duplicate})
		}
		for p := m.p; ; {
			j := strings.LastIndexByte(p, '/')
			if j <= 0 {
				break
			}
			p = p[:j]
			for _, k := range byPath[p] {
				if k < i {
					found = append(found, conflict{i, k, inside})
				} else {
					found = append(found, conflict{k, i, contains})
				}
			}
		}
	}
	slices.SortFunc(found, func(x, y conflict) int { return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b)) })
	for _, c := range found {
		a, b := all[c.a], all[c.b]
		switch c.kind {
		case duplicate:
			d.errf(a.at, RuleMountDuplicate, "mountPath %q is already used at %s", a.p, b.at)
		case inside:
			d.errf(a.at, RuleMountNested, "mountPath %q is inside %q (%s)", a.p, b.p, b.at)
		case contains:
			d.errf(a.at, RuleMountNested, "mountPath %q contains %q (%s)", a.p, b.p, b.at)
		}
	}
}

// forced warns about a key syslet sets itself when the user set it to
// something else: syslet overwrites it, as the earlier syslet did, so its
// specs keep working. The same value is tolerated silently.
func (d *decoder) forced(s *Spec, section, key, want string) {
	for _, v := range s.Values(section, key) {
		switch {
		case want == "":
			d.warnf(v.Path, RuleForcedKey, "[%s] %s is ignored: syslet sets it to its own build context; remove it", section, key)
		case v.Text != want:
			d.warnf(v.Path, RuleForcedKey, "[%s] %s=%s is overwritten: syslet sets it to %q; remove it", section, key, v.Text, want)
		}
	}
}

// resource checks the keys syslet sets in a .volume or .network unit: the
// podman object is named after the spec, and the service after the unit
// file, because the plan looks both up by the spec name.
func (d *decoder) resource(s *Spec, section, nameKey string) {
	if s.Name != "" { // a missing name is reported already
		d.forced(s, section, nameKey, s.Name)
	}
	d.noServiceName(s)
}

func (d *decoder) noServiceName(s *Spec) {
	for _, sec := range s.Unit {
		for _, e := range sec.Entries {
			if e.Key == unit.KeyServiceName && unit.QuadletSection(sec.Name) {
				d.errf(e.Path, RuleForcedKey, "[%s] ServiceName is not supported: syslet derives the service name from the spec name", sec.Name)
			}
		}
	}
}

func (d *decoder) build(n *jsontree.Node, s *Spec) {
	s.ReclaimPolicy = d.policy(n)
	s.Containerfile = d.content(n, "containerfile")
	if strings.TrimSpace(s.Containerfile) == "" {
		d.errf(jsontree.Child(n.Path(), "containerfile"), RuleRequired, "containerfile is required: the Containerfile's content")
	}
	if v := n.Get("contextFiles"); v != nil {
		seen := map[string]string{}
		var order []string // accepted filenames, in document order
		for _, it := range d.objects(v, "contextFiles", "filename", "content", "mode") {
			cf := ContextFile{Filename: d.str(it, "filename", true), Content: d.content(it, "content"), Mode: d.mode(it), Path: it.Path()}
			fp := jsontree.Child(it.Path(), "filename")
			f := cf.Filename
			switch {
			case f == "":
			case hasControl(f):
				d.errf(fp, RuleControlChar, "filename contains a control character")
			case strings.HasPrefix(f, "/") || slices.Contains(strings.Split(f, "/"), "..") || path.Clean(f) != f || f == ".":
				d.errf(fp, RuleContextFile, "filename %q must be a clean relative path without \"..\"", f)
			case f == "Containerfile":
				d.errf(fp, RuleContextFile, "filename must not be \"Containerfile\": syslet writes the containerfile field there")
			case strings.HasPrefix(f, "Containerfile/"):
				d.errf(fp, RuleContextFile, "filename %q needs a directory named \"Containerfile\", where syslet writes the containerfile field", f)
			case longPath(f) != "":
				d.errf(fp, RuleContextFile, "filename %s", longPath(f))
			case seen[f] != "":
				d.errf(fp, RuleContextFile, "filename %q already appears at %s", f, seen[f])
			default:
				// Compare in document order, and name only the first clash:
				// ranging over the map would report in random order.
				clash := slices.IndexFunc(order, func(other string) bool {
					return strings.HasPrefix(f, other+"/") || strings.HasPrefix(other, f+"/")
				})
				if clash >= 0 {
					other := order[clash]
					d.errf(fp, RuleContextFile, "filename %q and %q (%s) cannot both exist: one is a directory of the other", f, other, seen[other])
				} else {
					seen[f] = fp
					order = append(order, f)
				}
			}
			s.ContextFiles = append(s.ContextFiles, cf)
		}
	}
	// Every tag is checked, not only one: quadlet tags the image with all
	// of them and hands the first to containers using Image=NAME.build.
	tags := s.Values(unit.Build, unit.KeyImageTag)
	prefix := "localhost/" + s.Name + ":"
	switch {
	case len(tags) == 0:
		if d.missing(s, unit.Build, unit.KeyImageTag) { // else present but refused, and reported
			d.errf(jsontree.Child(s.Path(), "unit")+".Build", RuleImageTag, "[Build] ImageTag is required and must start with %q", prefix)
		}
	case s.Name == "":
		// the prefix depends on the name, whose absence is reported already
	default:
		for _, tag := range tags {
			if !strings.HasPrefix(tag.Text, prefix) || len(tag.Text) == len(prefix) {
				d.errf(tag.Path, RuleImageTag, "ImageTag %q must start with %q and name a tag", tag.Text, prefix)
			}
		}
	}
	d.forced(s, unit.Build, unit.KeyFile, "")
	d.forced(s, unit.Build, unit.KeySetWorkingDirectory, "")
	d.noServiceName(s)
}

func (d *decoder) secret(n *jsontree.Node, s *Spec) {
	v := n.Get("ciphertext")
	if e := n.Get("external"); e != nil {
		if e.Kind != jsontree.Bool {
			d.errf(e.Path(), RuleFieldType, "external must be true or false, got %s", e.Kind)
			return
		}
		s.External = e.Text == "true"
	}
	if s.External {
		// The value lives only in podman's store, put there by someone
		// else; a ciphertext here would be a second, ignored source of it.
		if v != nil {
			d.errf(v.Path(), RuleSecretExternal, "an external secret has no ciphertext: syslet never creates, changes or removes it (create it on the host: `podman secret create %s -`); remove ciphertext, or remove external to let syslet manage it", s.Name)
		}
		return
	}
	if v == nil {
		d.errf(jsontree.Child(n.Path(), "ciphertext"), RuleRequired, "ciphertext is required: a SOPS-encrypted YAML document (or \"external\": true for a podman secret created on the host, which syslet does not manage)")
		return
	}
	if v.Kind != jsontree.String {
		d.errf(v.Path(), RuleFieldType, "ciphertext must be a string, got %s", v.Kind)
		return
	}
	s.Ciphertext = v.Text
	keys, findings := sopsKeys([]byte(v.Text))
	for _, f := range findings {
		if f.warning {
			d.rep.Warnf(d.source, v.Path(), f.rule, "%v", f.err)
		} else {
			d.errf(v.Path(), f.rule, "%v", f.err)
		}
	}
	for _, k := range keys {
		if !secretKeyRe.MatchString(k) {
			d.errf(v.Path(), RuleSecretKey, "secret key %q must match [a-z0-9-]+", k)
			continue
		}
		s.SecretKeys = append(s.SecretKeys, k)
	}
}

// String makes a Spec readable in test failures.
func (s *Spec) String() string {
	b, _ := json.Marshal(s)
	return fmt.Sprintf("%s", b)
}

// isWord reports whether s is a letter or digit followed by letters,
// digits, '_' and '-' (and '.' when dot is set): the shape of spec names
// (^[a-zA-Z0-9][a-zA-Z0-9_.-]*$), section names and keys
// (^[A-Za-z0-9][A-Za-z0-9_-]*$). A loop, not a regexp: it runs for every
// key of every unit.
func isWord(s string, dot bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && (c == '_' || c == '-' || dot && c == '.'):
		default:
			return false
		}
	}
	return s != ""
}
