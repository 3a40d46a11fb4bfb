package spec

import (
	"encoding/json"

	"github.com/syslet/syslet/pkg/probe"
	"github.com/syslet/syslet/pkg/proxy"
	"github.com/syslet/syslet/pkg/spec/internal/jsontree"
	"github.com/syslet/syslet/pkg/unit"
)

// Kind is the spec's "type" field.
type Kind string

const (
	Container Kind = "container"
	Volume    Kind = "volume"
	Network   Kind = "network"
	Build     Kind = "build"
	Secret    Kind = "secret"
	Pod       Kind = "pod"
	Image     Kind = "image"
	Kube      Kind = "kube"
	Artifact  Kind = "artifact"
)

// Kinds lists every kind in the order syslet handles them when one order is
// needed: the quadlet kinds in the order of their table (unit.Kinds:
// resources before the units that use them), with secrets after the
// volumes, where they have always been (their place orders the plan's
// write-config step).
var Kinds = func() []Kind {
	var ks []Kind
	for _, k := range unit.Kinds {
		ks = append(ks, Kind(k.Name))
		if Kind(k.Name) == Volume {
			ks = append(ks, Secret)
		}
	}
	return ks
}()

// Quadlet is the kind's row of the table of quadlet kinds, nil for a
// secret (which has no unit file) or an unknown kind.
func (k Kind) Quadlet() *unit.Kind { return unit.KindNamed(string(k)) }

// Ext is the quadlet file extension of a kind ("" for secrets, which have
// no unit file).
func (k Kind) Ext() string {
	if q := k.Quadlet(); q != nil {
		return q.Ext()
	}
	return ""
}

// KindOfFile is the kind of a quadlet unit file name ("web@1.container" →
// container), "" for anything else.
func KindOfFile(fileName string) Kind {
	if q := unit.KindOf(fileName); q != nil {
		return Kind(q.Name)
	}
	return ""
}

// Templates reports whether specs of kind k may be templates with
// instances (the kind table's Templates).
func (k Kind) Templates() bool { q := k.Quadlet(); return q != nil && q.Templates }

// State is a container's desiredState.
type State string

const (
	Running State = "running"
	Stopped State = "stopped"
	Oneshot State = "oneshot"
)

// The [Service] and [Install] values syslet sets for a desiredState,
// overwriting the spec's (as the earlier syslet did).
const (
	RestartRunning  = "always"                           // [Service] Restart= of a running container
	WantedByRunning = "multi-user.target default.target" // [Install] WantedBy= of a running container
	TypeOneshot     = "oneshot"                          // [Service] Type= of a oneshot container
)

// Policy is a reclaimPolicy: what happens to the podman resource when its
// spec is removed.
type Policy string

const (
	Delete Policy = "Delete"
	Retain Policy = "Retain"
)

// Spec is one decoded spec. Fields that do not apply to its Kind are zero.
// Source and Index locate it for error messages; Paths maps field names to
// their JSON paths for checks made after decoding.
type Spec struct {
	Source     string `json:"source"`
	Index      int    `json:"index"`
	APIVersion string `json:"apiVersion"`
	Kind       Kind   `json:"type"`
	Name       string `json:"name"`

	Unit []Section `json:"unit,omitempty"`

	DesiredState   State `json:"desiredState,omitempty"`
	RemovalAllowed bool  `json:"removalAllowed"`
	// RemovalAllowedSet says the spec wrote removalAllowed itself rather
	// than taking the default (true here, false in the earlier syslet's
	// first releases): the plan warns when a default drops a protection
	// the host's marker still has.
	RemovalAllowedSet bool   `json:"-"`
	ReclaimPolicy     Policy `json:"reclaimPolicy,omitempty"`
	// NoBackup is a volume spec's "backup": false: its data may go
	// without an export when an apply deletes or recreates it.
	NoBackup    bool         `json:"noBackup,omitempty"`
	ConfigFiles []ConfigFile `json:"configFiles,omitempty"`
	ConfigDirs  []ConfigDir  `json:"configDirs,omitempty"`

	Containerfile string        `json:"containerfile,omitempty"`
	ContextFiles  []ContextFile `json:"contextFiles,omitempty"`

	// Ciphertext is the whole SOPS document; SecretKeys are its top-level
	// keys, readable without decrypting.
	Ciphertext string   `json:"-"`
	SecretKeys []string `json:"secretKeys,omitempty"`
	// External marks a secret spec that declares a podman secret syslet
	// does not manage (created by hand or by another tool): its podman
	// name is the spec name itself, it has no ciphertext, and syslet only
	// checks that it exists.
	External bool `json:"external,omitempty"`

	// DropIns are the unit's drop-in files (NAME.conf in the unit's .d
	// directory), in name order.
	DropIns []DropIn `json:"dropIns,omitempty"`
	// Instances, set on a container, make the spec a template
	// (NAME@.container) and name the instances syslet enables, starts and
	// stops (NAME@INSTANCE.container, a link to the template).
	Instances []Instance `json:"instances,omitempty"`
	// Probe is a container's readiness probe, every default filled in;
	// nil when it has none.
	Probe *probe.Probe `json:"probe,omitempty"`
	// Socket is a container's socket unit (socket.go): systemd holds its
	// listening sockets across the container's restarts.
	Socket *Socket `json:"socket,omitempty"`
	// Proxy, set on a container, makes it start-first: it runs in one
	// of two slots behind the reverse proxy syslet manages, which a
	// change switches from the live slot to the other (pkg/proxy).
	Proxy *proxy.Route `json:"proxy,omitempty"`
	// Yaml is a kube unit's YAML document: a file syslet writes and the
	// unit's Yaml= points at.
	Yaml string `json:"yaml,omitempty"`
}

// Template reports whether the spec is a template with instances.
func (s *Spec) Template() bool { return s.Instances != nil }

// FileName is the spec's unit file name: "web.container", for a template
// "web@.container" ("" for secrets).
func (s *Spec) FileName() string {
	if s.Kind.Ext() == "" {
		return ""
	}
	if s.Template() {
		return s.Name + "@" + s.Kind.Ext()
	}
	return s.Name + s.Kind.Ext()
}

// DropIn is one drop-in file of a unit: sections as in unit.
type DropIn struct {
	Name string    `json:"name"`
	Unit []Section `json:"unit"`
	Path string    `json:"-"` // JSON path of the drop-in
}

// Instance is one instance of a template spec, with drop-ins of its own
// (NAME@INSTANCE.container.d/).
type Instance struct {
	Name    string   `json:"name"`
	DropIns []DropIn `json:"dropIns,omitempty"`
	Path    string   `json:"-"`
}

// Path returns the JSON path of the spec itself inside its source, "[i]".
func (s *Spec) Path() string { return s.Origin().Path() }

// Origin is where the spec came from.
func (s *Spec) Origin() Origin { return Origin{Source: s.Source, Index: s.Index} }

// Origin is where a spec came from: its source and its index in it. What
// is rendered from a spec keeps it when the spec itself is let go.
type Origin struct {
	Source string
	Index  int
}

// Path returns the JSON path of the spec inside its source, "[i]".
func (o Origin) Path() string { return jsontree.Index("", o.Index) }

// String is the spec's source and path: "specs/web.json [0]".
func (o Origin) String() string { return o.Source + " " + o.Path() }

// Ref names the spec for people: "container web (specs/web.json [0])".
func (s *Spec) Ref() string {
	return string(s.Kind) + " " + s.Name + " (" + s.Source + " " + s.Path() + ")"
}

// String makes a Spec readable in test failures.
func (s *Spec) String() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Section is one unit section as the user wrote it, in order.
type Section struct {
	Name    string  `json:"name"`
	Path    string  `json:"path"`
	Entries []Entry `json:"entries"`
}

// Entry is one key of a section with its rendered lines. A string gives one
// line, a list one line per item, a map one line per key (sorted).
type Entry struct {
	Key   string  `json:"key"`
	Path  string  `json:"path"`
	Lines []Value `json:"lines"`
}

// Value is one rendered line value and the JSON path it came from.
type Value struct {
	Text string `json:"text"`
	Path string `json:"path"`
}

// Lookup returns the section with the given name, or nil.
func (s *Spec) Lookup(section string) *Section {
	for i := range s.Unit {
		if s.Unit[i].Name == section {
			return &s.Unit[i]
		}
	}
	return nil
}

// Values returns every line value of section.key in order.
func (s *Spec) Values(section, key string) []Value {
	sec := s.Lookup(section)
	if sec == nil {
		return nil
	}
	var vs []Value
	for _, e := range sec.Entries {
		if e.Key == key {
			vs = append(vs, e.Lines...)
		}
	}
	return vs
}

// Last returns the last line value of section.key: the one quadlet honours
// for a single-valued key.
func (s *Spec) Last(section, key string) (Value, bool) {
	vs := s.Values(section, key)
	if len(vs) == 0 {
		return Value{}, false
	}
	return vs[len(vs)-1], true
}

// ConfigFile is a single file mounted read-only into a container.
type ConfigFile struct {
	MountPath string `json:"mountPath"`
	Content   string `json:"content"`
	Mode      uint32 `json:"mode"`
	Path      string `json:"-"` // JSON path of the item
}

// ConfigDir is a directory of files mounted read-only into a container and
// swapped atomically on change, so the service can reload in place.
type ConfigDir struct {
	MountPath string    `json:"mountPath"`
	Files     []DirFile `json:"files"`
	Path      string    `json:"-"`
}

// DirFile is one file of a ConfigDir.
type DirFile struct {
	Name    string `json:"name"`
	Content string `json:"content"`
	Mode    uint32 `json:"mode"`
	Path    string `json:"-"`
}

// ContextFile is one file of a build context besides the Containerfile.
type ContextFile struct {
	Filename string `json:"filename"`
	Content  string `json:"content"`
	Mode     uint32 `json:"mode"`
	Path     string `json:"-"`
}

// DefaultMode is the mode of config and context files that do not name one.
const DefaultMode = 0o644
