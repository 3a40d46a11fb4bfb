package spec

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec/internal/jsontree"
	"github.com/syslet/syslet/pkg/unit"
)

// kindSpec is what a spec of one kind is beyond its type and name: the
// top-level fields it accepts (anything else is refused: a mistyped field
// in a deploy spec is a bug, not something to ignore), how they are
// decoded and checked, and the keys syslet sets in its unit for them
// (besides the kind's name key, which every kind that has one owns).
// Everything else about a kind is its row in pkg/unit's table of kinds.
type kindSpec struct {
	kind   Kind
	fields []string
	// decode checks what is the kind's own, and then (plain) the keys
	// syslet owns and ServiceName=.
	decode func(d *decoder, n *jsontree.Node, s *Spec)
	owns   []Owned
}

// kindSpecs are the kinds of spec, in the order messages list them (set
// in init: a decoder refers back to the table through Spec.Owned).
var kindSpecs []kindSpec

func init() {
	kindSpecs = []kindSpec{
		{Container, []string{"unit", "desiredState", "removalAllowed", "configFiles", "configDirs", "dropIns", "instances", "probe", "proxy", "socket"}, (*decoder).container, containerOwns},
		{Volume, []string{"unit", "removalAllowed", "reclaimPolicy", "backup", "dropIns"}, (*decoder).plain, nil},
		{Network, []string{"unit", "removalAllowed", "reclaimPolicy", "dropIns"}, (*decoder).plain, nil},
		{Build, []string{"unit", "containerfile", "contextFiles", "reclaimPolicy", "dropIns"}, (*decoder).build, buildOwns},
		{Secret, []string{"ciphertext", "external"}, (*decoder).secret, nil},
		{Pod, []string{"unit", "removalAllowed", "dropIns"}, (*decoder).plain, nil},
		{Image, []string{"unit", "removalAllowed", "reclaimPolicy", "dropIns"}, (*decoder).image, nil},
		{Kube, []string{"unit", "yaml", "removalAllowed", "dropIns"}, (*decoder).kube, kubeOwns},
		{Artifact, []string{"unit", "removalAllowed", "dropIns"}, (*decoder).artifact, nil},
	}
	ownedKeys = map[Kind][]Owned{}
	for _, ks := range kindSpecs {
		ownedKeys[ks.kind] = ownedOf(ks)
	}
}

// specOf is the kind's row of kindSpecs, or nil for an unknown kind.
func specOf(k Kind) *kindSpec {
	for i := range kindSpecs {
		if kindSpecs[i].kind == k {
			return &kindSpecs[i]
		}
	}
	return nil
}

// Accepts reports whether a spec of kind k may have the top-level field:
// "removalAllowed", "reclaimPolicy", …
func (k Kind) Accepts(field string) bool {
	ks := specOf(k)
	return ks != nil && slices.Contains(ks.fields, field)
}

// kindNames is every kind's type, for messages.
func kindNames() string {
	names := make([]string, 0, len(kindSpecs))
	for _, ks := range kindSpecs {
		names = append(names, string(ks.kind))
	}
	return strings.Join(names, ", ")
}

type decoder struct {
	source string
	rep    *report.Report
	// refused holds the unit parts a finding was made about: "unit", a
	// section name, or "Section.Key". Checks for a missing key consult it,
	// so a key that is present but refused (null, a control character, a
	// section that is not an object) is reported once, for what is wrong
	// with it, and not a second time as missing.
	refused map[string]bool
	// later are decodings left to the end of the spec (an instance's
	// drop-ins), so that what they refuse never reads as the unit's.
	later []func()
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

// spec decodes one stream item into s. It returns nil only when the item is not
// an object at all.
func (d *decoder) spec(n *jsontree.Node, i int, s *Spec) *Spec {
	if n.Kind != jsontree.Object {
		d.errf(n.Path(), RuleNotObject, "a spec must be a JSON object, got %s", n.Kind)
		return nil
	}
	*s = Spec{Source: d.source, Index: i, RemovalAllowed: true}

	s.APIVersion = d.str(n, "apiVersion", true)
	if v := n.Get("apiVersion"); v != nil && v.Kind == jsontree.String && s.APIVersion != "v1" {
		d.errf(v.Path(), RuleAPIVersion, "apiVersion %q is not supported: syslet reads \"v1\"", s.APIVersion)
	}

	kind := d.str(n, "type", true)
	s.Kind = Kind(kind)
	if lower := Kind(strings.ToLower(kind)); lower != s.Kind && specOf(lower) != nil {
		// The earlier syslet accepted "Container"; its users' specs must
		// keep working.
		d.warnf(n.Get("type").Path(), RuleType, "type %q is read as %q; write it in lower case", kind, lower)
		s.Kind = lower
	}
	ks := specOf(s.Kind)
	knownKind := ks != nil
	if v := n.Get("type"); v != nil && v.Kind == jsontree.String && !knownKind {
		d.errf(v.Path(), RuleType, "type %q is not one of %s", kind, kindNames())
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
	allowed := append([]string{"apiVersion", "type", "name"}, ks.fields...)
	for j, k := range n.Keys {
		if slices.Contains(allowed, k) || k == "instances" { // instances on another kind are an error of their own
			continue
		}
		if near := nearMiss(k, allowed); near != "" {
			d.errf(n.Vals[j].Path(), RuleMisspelledField, "unknown field %q for a %s spec: did you mean %s?", k, s.Kind, near)
			continue
		}
		d.warnf(n.Vals[j].Path(), RuleUnknownField, "unknown field %q for a %s spec is ignored (allowed: %s)", k, s.Kind, strings.Join(ks.fields, ", "))
	}
	if v := n.Get("unit"); v == nil && (s.Kind == Volume || s.Kind == Network) {
		// Older releases of the earlier syslet accepted a volume or network
		// without unit and read it as {}; syslet does too, and --strict
		// holds CI to the rule that unit is required.
		d.warnf(jsontree.Child(n.Path(), "unit"), RuleRequired, "unit is missing and read as {}: write \"unit\": {\"%s\": {}}", s.Kind.Quadlet().Section)
	}

	if v := n.Get("unit"); v != nil {
		s.Unit = d.unit(v, s.Kind)
	}
	// Instances first: what a template may set depends on it.
	if v := n.Get("instances"); v != nil {
		d.instances(v, s)
	}
	if v := n.Get("removalAllowed"); v != nil {
		if v.Kind != jsontree.Bool {
			d.errf(v.Path(), RuleFieldType, "removalAllowed must be true or false, got %s", v.Kind)
		} else {
			s.RemovalAllowed, s.RemovalAllowedSet = v.Text == "true", true
		}
	}
	if s.Kind.Accepts("reclaimPolicy") {
		s.ReclaimPolicy = d.policy(n)
	}
	if v := n.Get("backup"); v != nil && s.Kind.Accepts("backup") {
		if v.Kind != jsontree.Bool {
			d.errf(v.Path(), RuleFieldType, "backup must be true or false, got %s", v.Kind)
		} else {
			s.NoBackup = v.Text == "false"
		}
	}
	ks.decode(d, n, s)
	if v := n.Get("dropIns"); v != nil {
		s.DropIns = d.dropIns(v, s.Kind)
	}
	for _, f := range d.later {
		f()
	}
	d.later = nil
	d.autoUpdate(s) // the instances' drop-ins are read by now
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

var modeRe = regexp.MustCompile(`^[0-7]{3,4}$`)

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

// object is n's field key when it is a JSON object: nil when n has no
// such field, and nil with an error naming its path when it is something
// else.
func (d *decoder) object(n *jsontree.Node, key string) *jsontree.Node {
	v := n.Get(key)
	if v == nil || v.Kind == jsontree.Object {
		return v
	}
	d.errf(v.Path(), RuleFieldType, "%s must be an object, got %s", key, v.Kind)
	return nil
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
			if slices.Contains(allowed, k) {
				continue
			}
			if near := nearMiss(k, allowed); near != "" {
				d.errf(it.Vals[j].Path(), RuleMisspelledField, "unknown field %q in %s: did you mean %s?", k, what, near)
				continue
			}
			d.warnf(it.Vals[j].Path(), RuleUnknownField, "unknown field %q in %s is ignored (allowed: %s)", k, what, strings.Join(allowed, ", "))
		}
		out = append(out, it)
	}
	return out
}

// plain checks what every unit is checked for after what is its kind's
// own: the keys syslet sets in it (Spec.Owned, those of every
// desiredState), then ServiceName=. A spec that is only its unit (a
// volume, a network, a pod) is checked for nothing else.
func (d *decoder) plain(_ *jsontree.Node, s *Spec) {
	d.owned(s, "")
	d.serviceName(s)
}

// serviceNameRe is a service name systemd accepts without its ".service"
// (no template "@": a service named by ServiceName= is never one).
var serviceNameRe = regexp.MustCompile(`^[A-Za-z0-9:_-][A-Za-z0-9:_.-]*$`)

// serviceName checks ServiceName=, which quadlet takes as the service's
// name as written (every release syslet supports has it, for every type):
// a name systemd accepts, and never for a template, whose service must
// stay one (NAME@.service) for its instances to exist.
func (d *decoder) serviceName(s *Spec) {
	for _, sec := range s.Unit {
		if !unit.QuadletSection(sec.Name) || sec.Name == unit.Quadlet {
			continue
		}
		for _, e := range sec.Entries {
			if e.Key != unit.KeyServiceName {
				continue
			}
			for _, v := range e.Lines {
				switch {
				case s.Template():
					d.errf(v.Path, RuleServiceName, "[%s] ServiceName cannot name a template's service: its instances run as %s@INSTANCE.service; remove it", sec.Name, s.Name)
				case strings.HasSuffix(v.Text, ".service"):
					d.errf(v.Path, RuleServiceName, "[%s] ServiceName=%s: write the name without \".service\" (quadlet adds it)", sec.Name, v.Text)
				case len(v.Text) > maxServiceName || !serviceNameRe.MatchString(v.Text):
					d.errf(v.Path, RuleServiceName, "[%s] ServiceName=%s is not a service name systemd accepts: letters, digits, ':', '_', '-' and '.' (not first), at most %d bytes, no '@'", sec.Name, v.Text, maxServiceName)
				}
			}
		}
	}
}

// maxServiceName leaves room for ".service" in systemd's 255-byte unit
// names.
const maxServiceName = 240
