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

// fields lists the top-level fields each kind accepts besides apiVersion,
// type and name. Anything else is an error: a mistyped field in a deploy
// spec is a bug, not something to ignore.
var fields = map[Kind][]string{
	Container: {"unit", "desiredState", "removalAllowed", "configFiles", "configDirs", "dropIns", "instances"},
	Volume:    {"unit", "removalAllowed", "reclaimPolicy", "dropIns"},
	Network:   {"unit", "removalAllowed", "reclaimPolicy", "dropIns"},
	Build:     {"unit", "containerfile", "contextFiles", "reclaimPolicy", "dropIns"},
	Secret:    {"ciphertext", "external"},
	Pod:       {"unit", "removalAllowed", "dropIns"},
	Image:     {"unit", "removalAllowed", "reclaimPolicy", "dropIns"},
	Kube:      {"unit", "yaml", "removalAllowed", "dropIns"},
	Artifact:  {"unit", "removalAllowed", "dropIns"},
}

// kindNames is every kind's type, for messages.
func kindNames() string {
	names := make([]string, 0, len(fields))
	for _, k := range []Kind{Container, Volume, Network, Build, Secret, Pod, Image, Kube, Artifact} {
		names = append(names, string(k))
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
	if lower := Kind(strings.ToLower(kind)); lower != s.Kind && fields[lower] != nil {
		// The earlier syslet accepted "Container"; its users' specs must
		// keep working.
		d.warnf(n.Get("type").Path(), RuleType, "type %q is read as %q; write it in lower case", kind, lower)
		s.Kind = lower
	}
	_, knownKind := fields[s.Kind]
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
	allowed := append([]string{"apiVersion", "type", "name"}, fields[s.Kind]...)
	for j, k := range n.Keys {
		if !slices.Contains(allowed, k) && k != "instances" { // instances on another kind are an error of their own
			d.warnf(n.Vals[j].Path(), RuleUnknownField, "unknown field %q for a %s spec is ignored (allowed: %s)", k, s.Kind, strings.Join(fields[s.Kind], ", "))
		}
	}
	if v := n.Get("unit"); v == nil && (s.Kind == Volume || s.Kind == Network) {
		// Older releases of the earlier syslet accepted a volume or network
		// without unit and read it as {}; syslet does too, and --strict
		// holds CI to the rule that unit is required.
		d.warnf(jsontree.Child(n.Path(), "unit"), RuleRequired, "unit is missing and read as {}: write \"unit\": {\"%s\": {}}", map[Kind]string{Volume: unit.Volume, Network: unit.Network}[s.Kind])
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
	case Pod:
		d.pod(s)
	case Image:
		s.ReclaimPolicy = d.policy(n)
		d.image(s)
	case Kube:
		d.kube(n, s)
	case Artifact:
		d.artifact(s)
	}
	if v := n.Get("dropIns"); v != nil {
		s.DropIns = d.dropIns(v, s.Kind)
	}
	for _, f := range d.later {
		f()
	}
	d.later = nil
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

// forced warns about a key syslet sets itself when the user set it to
// something else: syslet overwrites it, as the earlier syslet did, so its
// specs keep working. The same value is tolerated silently.
func (d *decoder) forced(s *Spec, section, key, want string) {
	d.forcedFor(s, section, key, want, "")
}

// forcedFor is forced with why syslet sets the key ("for desiredState
// \"running\", as the earlier syslet did"), for keys it sets only in some
// cases.
func (d *decoder) forcedFor(s *Spec, section, key, want, why string) {
	if why != "" {
		why = " " + why
	}
	for _, v := range s.Values(section, key) {
		switch {
		case want == "" && why != "":
			d.warnf(v.Path, RuleForcedKey, "[%s] %s is ignored:%s; remove it", section, key, why)
		case want == "":
			d.warnf(v.Path, RuleForcedKey, "[%s] %s is ignored: syslet sets it to its own build context; remove it", section, key)
		case v.Text != want:
			d.warnf(v.Path, RuleForcedKey, "[%s] %s=%s is overwritten: syslet sets it to %q%s; remove it", section, key, v.Text, want, why)
		}
	}
}

// resource checks the keys syslet sets in a .volume or .network unit: the
// podman object is named after the spec, because the plan looks it up by
// the spec name.
func (d *decoder) resource(s *Spec, section, nameKey string) {
	if s.Name != "" { // a missing name is reported already
		d.forced(s, section, nameKey, s.Name)
	}
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
