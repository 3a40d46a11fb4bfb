package render

import (
	"strings"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/probe"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// Output is everything rendered from one set of specs.
type Output struct {
	Units   []*Unit   `json:"units"`
	Files   []File    `json:"files"`
	Dirs    []Dir     `json:"dirs"`
	Secrets []*Secret `json:"secrets"`
	// ExternalSecrets are podman secrets the specs use but syslet does
	// not manage; they are kept apart from Secrets so that nothing that
	// decrypts, creates or removes secrets ever sees them.
	ExternalSecrets []*ExternalSecret `json:"externalSecrets,omitempty"`
	// Proxy is the reverse proxy of the start-first containers, nil when
	// there are none.
	Proxy *Proxy `json:"proxy,omitempty"`

	slab *slab // while rendering: where units come from
}

// Unit is one rendered quadlet file and the facts the planner needs about
// it, derived here once so nothing downstream re-parses unit text.
//
// A template spec renders the template (Template set, no service of its
// own to start) and one Unit per instance: FileName web@1.container, a
// link to the template's file (Link), File the template's (what the
// link reads as), DropIns its own, Merged with the template's drop-ins
// and its own, Service web@1.service, Container web-1.
type Unit struct {
	// Spec is what the unit was rendered from, for the checks; nil once
	// the set's specs are dropped (Output.DropSpecs). Origin stays.
	Spec     *spec.Spec  `json:"-"`
	Origin   spec.Origin `json:"-"`
	Kind     spec.Kind   `json:"kind"`
	Name     string      `json:"name"`     // spec name
	FileName string      `json:"fileName"` // web.container
	Path     string      `json:"path"`     // /etc/containers/systemd/web.container
	Service  string      `json:"service"`  // web.service (or ServiceName=, .service added)
	// File is the unit file as data while it is rendered; Content its
	// bytes once it is (File is then nil wherever those bytes parse back
	// to it exactly: a unit file as data is twice its bytes, and a
	// hundred thousand of them were held through the checks and the
	// planning). Read them through Parsed and Bytes, which work either
	// way.
	File    *unit.File `json:"-"`
	Content []byte     `json:"-"`
	// Merged is what quadlet converts: File with the unit's drop-ins
	// (and, for an instance, its template's) merged in, in quadlet's
	// order. It is File itself when there are none (nil with File when
	// kept as bytes); read it through MergedFile.
	Merged *unit.File `json:"-"`
	// Lines are every line that reaches Merged, with its JSON path, but
	// for syslet's marker (its [X-Syslet] keys other than Instance=): the
	// unit's own, then its drop-ins' (an instance's: its template's lines,
	// then the drop-ins'). For the checks: nil once dropped (DropSpecs).
	Lines   []Line   `json:"-"`
	DropIns []DropIn `json:"dropIns,omitempty"`
	// Templates: Template is set on the template (web@.container), which
	// has no service to start; an instance names its Instance and the
	// template file it links to (Link).
	Template bool   `json:"template,omitempty"`
	Instance string `json:"instance,omitempty"`
	Link     string `json:"link,omitempty"`
	// Containers.
	State     spec.State `json:"state,omitempty"`
	Container string     `json:"container,omitempty"` // podman's name: web, web-1 for web@1
	Image     string     `json:"image,omitempty"`     // registry image to pull; "" when built locally or from an image unit
	Pod       string     `json:"pod,omitempty"`       // .pod unit the container runs in (Pod=)
	// Socket is the container's socket unit (its spec's socket), nil for
	// a container without one.
	Socket *Socket `json:"socket,omitempty"`
	// Probe is the container's readiness probe (nil: none), recorded in
	// its marker (Probe=).
	Probe *probe.Probe `json:"probe,omitempty"`
	// AutoUpdate is the container's AutoUpdate= (podman's own updates,
	// outside syslet): the plan says so when the host's
	// podman-auto-update.timer is running.
	AutoUpdate string `json:"autoUpdate,omitempty"`
	// Slot is set on a start-first container's two units, one per slot
	// (slot.go).
	Slot *Slot `json:"slot,omitempty"`
	// Uses are what the unit refers to and mounts; nil for a unit that
	// refers to nothing. Read them through Used, which never is.
	*Uses
	// Every kind but containers and kube units: the podman object the
	// unit manages (its kind's ObjectKeys: VolumeName, NetworkName, a
	// build's first ImageTag, PodName, an image unit's ImageTag or Image,
	// Artifact) and what may happen to it.
	Resource       string `json:"resource,omitempty"`
	RemovalAllowed bool   `json:"removalAllowed"`
	// RemovalSet: the spec wrote removalAllowed itself (spec's
	// RemovalAllowedSet).
	RemovalSet    bool        `json:"-"`
	ReclaimPolicy spec.Policy `json:"reclaimPolicy,omitempty"`
	// Image units: Pull is how the apply's pull step pulls Image (nil when
	// the unit uses keys podman's pull API does not take: its service
	// pulls it when started).
	Pull *host.PullOptions `json:"pull,omitempty"`

	ownLines int // how many of Lines are the unit's own (or its template's), before drop-ins
}

// Uses are what a unit refers to and mounts. They are kept apart from
// Unit because most units of a big set (volumes, networks) refer to
// nothing, and four empty lists are 96 bytes held per unit for the whole
// run.
type Uses struct {
	// Requires are the unit files its lines name (data.volume, app.build,
	// shop.pod, …), each once: the units quadlet makes its service
	// require, and whose recreation or restart restarts it. In the order
	// of the kind table, then of the lines.
	Requires    []string `json:"requires,omitempty"`
	Secrets     []string `json:"secrets,omitempty"`     // podman secret names
	ConfigFiles []string `json:"configFiles,omitempty"` // host paths
	ConfigDirs  []string `json:"configDirs,omitempty"`  // host paths
}

// DropSpecs lets go of what only the checks read — each unit's spec and
// lines (its drop-ins' too) — once they are done: a plan never reads
// them, and for a hundred thousand specs they are some 45 MB held
// through the planning. Secrets keep their specs (a plan names them).
func (o *Output) DropSpecs() {
	for _, u := range o.Units {
		u.Spec, u.Lines = nil, nil
		if u.Socket != nil {
			u.Socket.Lines = nil
		}
		for i := range u.DropIns {
			u.DropIns[i].Lines = nil
		}
	}
}

// compact keeps a rendered unit file as its bytes (Content) when they
// parse back to it exactly; a template and its instances, which share
// one, keep it as data.
func (u *Unit) compact() {
	if u.File == nil || u.Template || u.Link != "" || !u.File.ReadsBack() {
		return
	}
	u.Content = u.File.Bytes()
	if u.Merged == u.File {
		u.Merged = nil
	}
	u.File = nil
}

// Bytes is the unit file as syslet writes it.
func (u *Unit) Bytes() []byte {
	if u.File == nil {
		return u.Content
	}
	return u.File.Bytes()
}

// Parsed is the unit file as data: File, or a parse of its bytes (made on
// each call: a check or a plan parses only the units it looks into).
func (u *Unit) Parsed() *unit.File {
	if u.File != nil {
		return u.File
	}
	f, err := unit.Parse(u.Content)
	if err != nil {
		// compact keeps as bytes only a file that parses back to itself.
		panic("render: a unit kept as bytes does not parse: " + err.Error())
	}
	return f
}

// MergedFile is Merged, or Parsed when the unit has no drop-ins.
func (u *Unit) MergedFile() *unit.File {
	if u.Merged != nil {
		return u.Merged
	}
	return u.Parsed()
}

// Used is what the unit refers to and mounts (empty lists when nothing).
func (u *Unit) Used() Uses {
	if u.Uses == nil {
		return Uses{}
	}
	return *u.Uses
}

// uses is the unit's Uses to fill in, made on the first thing it uses.
func (u *Unit) uses() *Uses {
	if u.Uses == nil {
		u.Uses = &Uses{}
	}
	return u.Uses
}

// DropIn is one rendered drop-in file of a unit.
type DropIn struct {
	Name    string     `json:"name"`  // 10-limits.conf
	Path    string     `json:"path"`  // /etc/containers/systemd/web.container.d/10-limits.conf
	Owner   string     `json:"owner"` // the unit file whose drop-in it is: web.container
	File    *unit.File `json:"-"`
	Content []byte     `json:"-"`
	Lines   []Line     `json:"-"`
}

// Rel is the drop-in's path relative to the unit directory, as staging
// and the future unit set name it.
func (d DropIn) Rel() string { return strings.TrimPrefix(d.Path, layout.UnitDir+"/") }

// Line is one rendered Key=Value and the JSON path it came from, so that
// post-render findings point into the user's spec.
type Line struct {
	Section, Key, Value, Origin string
}

// FileKind says which apply step writes a file and what a change means.
type FileKind string

const (
	ConfigFile  FileKind = "config-file"   // change restarts the container
	ContextFile FileKind = "build-context" // change rebuilds the image
	// DropInFile is a unit's drop-in (written with the units, in the
	// write-units step): a change restarts the unit or is metadata-only,
	// as a change to the unit's own keys.
	DropInFile FileKind = "drop-in"
	// SocketFile is a container's socket unit (socket.go), written with
	// its config files: a change stops the socket with its container.
	SocketFile FileKind = "socket"
	// ProxyConfig is the configuration of the reverse proxy of the
	// start-first containers: a change reloads the proxy.
	ProxyConfig FileKind = "proxy-config"
)

// File is one regular file syslet writes.
type File struct {
	Path    string   `json:"path"`
	Content []byte   `json:"-"`
	Mode    uint32   `json:"mode"`
	Kind    FileKind `json:"kind"`
	Owner   string   `json:"owner"` // unit file name: web.container, app.build, app.kube
}

// Dir is a config directory: its files are swapped as one version, so the
// container sees either the old set or the new one, and can reload.
type Dir struct {
	Path  string    `json:"path"`
	Owner string    `json:"owner"`
	Files []DirFile `json:"files"`
}

// DirFile is one file of a Dir.
type DirFile = host.DirFile

// Secret is a secret spec: one podman secret per key, all labelled with the
// hash of the ciphertext so a later run can tell whether they changed.
type Secret struct {
	Spec       *spec.Spec `json:"-"`
	Name       string     `json:"name"`
	Keys       []string   `json:"keys"`
	Hash       string     `json:"hash"`
	Ciphertext []byte     `json:"-"`
}

// PodmanName is the podman secret that holds key.
func (s *Secret) PodmanName(key string) string { return s.Name + "-" + key }

// ExternalSecret is a secret spec with "external": true: the podman
// secret Name, created on the host by someone else. syslet never writes,
// decrypts or removes it; the plan only checks that it exists.
type ExternalSecret struct {
	Spec *spec.Spec `json:"-"`
	Name string     `json:"name"`
}

// HashLabel is the podman label carrying the ciphertext hash.
const HashLabel = "syslet/hash"
