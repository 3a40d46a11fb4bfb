package render

import (
	"github.com/syslet/syslet/pkg/host"
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
}

// Unit is one rendered quadlet file and the facts the planner needs about
// it, derived here once so nothing downstream re-parses unit text.
type Unit struct {
	Spec     *spec.Spec `json:"-"`
	Kind     spec.Kind  `json:"kind"`
	Name     string     `json:"name"`     // spec name
	FileName string     `json:"fileName"` // web.container
	Path     string     `json:"path"`     // /etc/containers/systemd/web.container
	Service  string     `json:"service"`  // web.service
	File     *unit.File `json:"-"`
	Lines    []Line     `json:"-"`

	// Containers.
	State       spec.State `json:"state,omitempty"`
	Image       string     `json:"image,omitempty"` // registry image to pull; "" when built locally
	Build       string     `json:"build,omitempty"` // .build unit name providing the image
	Volumes     []string   `json:"volumes,omitempty"`
	Networks    []string   `json:"networks,omitempty"`
	Secrets     []string   `json:"secrets,omitempty"`     // podman secret names
	ConfigFiles []string   `json:"configFiles,omitempty"` // host paths
	ConfigDirs  []string   `json:"configDirs,omitempty"`  // host paths

	// Volumes, networks and builds: the podman object the unit manages
	// (VolumeName, NetworkName or ImageTag) and what may happen to it.
	Resource       string      `json:"resource,omitempty"`
	RemovalAllowed bool        `json:"removalAllowed"`
	ReclaimPolicy  spec.Policy `json:"reclaimPolicy,omitempty"`
}

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
)

// File is one regular file syslet writes.
type File struct {
	Path    string   `json:"path"`
	Content []byte   `json:"-"`
	Mode    uint32   `json:"mode"`
	Kind    FileKind `json:"kind"`
	Owner   string   `json:"owner"` // unit file name: web.container, app.build
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
