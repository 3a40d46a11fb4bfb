package unit

import (
	"strings"

	"github.com/syslet/syslet/pkg/layout"
)

// Kind is one quadlet unit type and everything syslet knows of it, as
// data: podman's SupportedExtensions and groupsInfo in one row. Spec,
// render, plan, adopt and the converter check read these rows instead of
// switching on the type, so a new type is a new row (with its spec
// fields and, when the four sections and the keys syslet owns are not
// all it needs, its renderer).
type Kind struct {
	// Name is the spec's type and the file extension without its dot
	// ("container": web.container).
	Name string
	// Section is the section the type's converter reads (Container);
	// quadlet renames it X-<Section> in the service it generates.
	Section string
	// ServiceSuffix is what quadlet adds to the unit's base name for its
	// service when ServiceName= is unset: data.volume runs as
	// data-volume.service, web.container as web.service.
	ServiceSuffix string
	// TypeKey is a key every podman release that has the type knows: the
	// key table's release for it is the type's own (an artifact's, 5.7).
	TypeKey string
	// NameKey is the key naming the podman object, which syslet sets to
	// the spec's name so that the plan finds the object by it (quadlet
	// would name it systemd-<name>); "" when syslet sets none.
	NameKey string
	// Object is the podman object the unit makes (ObjectVolume, …); ""
	// for a kube unit, whose objects are its YAML's.
	Object string
	// ObjectKeys name the object, first set one wins: the value of the
	// last one counts even when empty, the others' only when not
	// (an image unit is known by ImageTag=, else by Image=).
	ObjectKeys []string
	// OnChange is what a change to the unit does to its service and
	// object.
	OnChange Change
	// HoldsData: deleting the object deletes the user's data (a volume),
	// so a change that needs it recreated waits for the installed marker
	// to allow it, and a rollback never does it.
	HoldsData bool
	// Remains: once started, the service stays active (it made an object
	// or runs a workload), so with systemd not read an installed unit
	// counts as running. A container's depends on its desired state.
	Remains bool
	// Templates: specs of the kind may be templates with instances
	// (NAME@.KIND). Only containers, whose service and object names no
	// podman release derives differently for a template (quadlet names a
	// template volume's, network's or pod's service differently from 5.7
	// on).
	Templates bool
	// ReferencedBy are the keys by which another unit names a unit file of
	// the kind (Volume=data.volume, Mount=…,source=data.volume); any other
	// key naming one is refused.
	ReferencedBy []string
	// Restarts says why a unit that requires one of the kind restarts when
	// it is recreated, changed or restarted: {name} is its base name,
	// {file} its file name. "" when that restarts nothing (a container
	// another joins the network namespace of).
	Restarts string
	// FilesRoot is the host directory holding, per unit, the files syslet
	// writes for it besides the unit file (FilesRoot/NAME, removed with
	// the unit); "" for none.
	FilesRoot string
}

// Change is what a change to a unit does to what it runs or makes.
type Change int

const (
	// ChangeRestart: the service runs a workload, and is restarted (or
	// started, stopped, run again) as its desired state says.
	ChangeRestart Change = iota
	// ChangeRecreate: the object is deleted and made again by its service.
	ChangeRecreate
	// ChangePull: the service runs again and pulls again.
	ChangePull
	// ChangeRebuild: the service builds again, also when a file of its
	// context changed or the image is missing.
	ChangeRebuild
)

// The podman objects units make.
const (
	ObjectContainer = "container"
	ObjectVolume    = "volume"
	ObjectNetwork   = "network"
	ObjectImage     = "image"
	ObjectPod       = "pod"
	ObjectArtifact  = "artifact"
)

// Kinds is the one table of quadlet kinds, in the order syslet handles
// them when one order is needed (what the plan does in one step, what a
// render lists): resources before the units that use them — images and
// artifacts before the builds and containers that run or mount them, a
// pod before its containers, containers before a kube unit that may join
// them.
var Kinds = []*Kind{
	{Name: "network", Section: Network, ServiceSuffix: "-network", TypeKey: KeyNetworkName, NameKey: KeyNetworkName,
		Object: ObjectNetwork, ObjectKeys: []string{KeyNetworkName}, OnChange: ChangeRecreate, Remains: true,
		ReferencedBy: []string{KeyNetwork}, Restarts: "network {name} recreated"},
	{Name: "volume", Section: Volume, ServiceSuffix: "-volume", TypeKey: KeyVolumeName, NameKey: KeyVolumeName,
		Object: ObjectVolume, ObjectKeys: []string{KeyVolumeName}, OnChange: ChangeRecreate, HoldsData: true, Remains: true,
		ReferencedBy: []string{KeyVolume, KeyMount}, Restarts: "volume {name} recreated"},
	{Name: "image", Section: Image, ServiceSuffix: "-image", TypeKey: KeyImage,
		Object: ObjectImage, ObjectKeys: []string{KeyImageTag, KeyImage}, OnChange: ChangePull, Remains: true,
		ReferencedBy: []string{KeyImage, KeyMount}, Restarts: "image unit {file} changed"},
	{Name: "artifact", Section: Artifact, ServiceSuffix: "-artifact", TypeKey: KeyArtifact,
		Object: ObjectArtifact, ObjectKeys: []string{KeyArtifact}, OnChange: ChangePull, Remains: true,
		ReferencedBy: []string{KeyMount}, Restarts: "artifact {file} changed"},
	{Name: "build", Section: Build, ServiceSuffix: "-build", TypeKey: KeyImageTag,
		Object: ObjectImage, ObjectKeys: []string{KeyImageTag}, OnChange: ChangeRebuild,
		ReferencedBy: []string{KeyImage}, Restarts: "image rebuilt by {file}", FilesRoot: layout.BuildRoot},
	{Name: "pod", Section: Pod, ServiceSuffix: "-pod", TypeKey: KeyPodName, NameKey: KeyPodName,
		Object: ObjectPod, ObjectKeys: []string{KeyPodName}, OnChange: ChangeRestart, Remains: true,
		ReferencedBy: []string{KeyPod}, Restarts: "pod {name} restarts"},
	{Name: "container", Section: Container, TypeKey: KeyImage, NameKey: KeyContainerName,
		Object: ObjectContainer, ObjectKeys: []string{KeyContainerName}, OnChange: ChangeRestart, Templates: true,
		ReferencedBy: []string{KeyNetwork}, FilesRoot: layout.ConfigRoot},
	{Name: "kube", Section: Kube, TypeKey: KeyYaml, OnChange: ChangeRestart, Remains: true, FilesRoot: layout.KubeRoot},
}

var (
	kindByName = map[string]*Kind{}
	kindByExt  = map[string]*Kind{}
)

func init() {
	for _, k := range Kinds {
		kindByName[k.Name] = k
		kindByExt[k.Ext()] = k
	}
}

// Ext is the kind's file extension (".container").
func (k *Kind) Ext() string { return "." + k.Name }

// Runs reports whether the kind's service runs a workload, started,
// restarted and stopped like a container's, rather than making an object
// once.
func (k *Kind) Runs() bool { return k.OnChange == ChangeRestart }

// RestartCause is Restarts for the unit file fileName of the kind.
func (k *Kind) RestartCause(fileName string) string {
	return strings.NewReplacer("{name}", strings.TrimSuffix(fileName, k.Ext()), "{file}", fileName).Replace(k.Restarts)
}

// ObjectName is the podman object a unit of the kind named name makes,
// as f says (ObjectKeys), else as quadlet names it when NameKey is unset
// (systemd-NAME); "" when neither tells.
func (k *Kind) ObjectName(name string, f *File) string {
	for i, key := range k.ObjectKeys {
		if v, ok := f.Last(k.Section, key); ok && (v != "" || i == len(k.ObjectKeys)-1) {
			return v
		}
	}
	if k.NameKey != "" {
		return "systemd-" + name
	}
	return ""
}

// KindNamed is the kind of that name ("container"), or nil.
func KindNamed(name string) *Kind { return kindByName[name] }

// KindOf is the kind of a quadlet unit file name ("web@1.container"), or
// nil for any other name (an extension alone is none).
func KindOf(fileName string) *Kind {
	i := strings.LastIndexByte(fileName, '.')
	if i <= 0 {
		return nil
	}
	return kindByExt[fileName[i:]]
}

// Base is a quadlet unit file name without its kind's extension: "web"
// of web.container, "web@1" of web@1.container; any other name as it is.
func Base(fileName string) string {
	if k := KindOf(fileName); k != nil {
		return strings.TrimSuffix(fileName, k.Ext())
	}
	return fileName
}

// Builds reports whether fileName is a unit file of a kind whose service
// builds an image (OnChange ChangeRebuild: a .build). Such a service does
// not stay active, so every start of a unit requiring it builds again.
func Builds(fileName string) bool {
	k := KindOf(fileName)
	return k != nil && k.OnChange == ChangeRebuild
}

// NameChar reports whether r may be part of a unit's file or service
// name where a name is read out of text (a unit's values, a tool's
// message): letters, digits, '-', '_', '.', '@' (a template's instance)
// and '\' (systemd's escapes). ':' is not: it ends the name in
// Volume=data.volume:/data.
func NameChar(r rune) bool {
	return r == '-' || r == '_' || r == '.' || r == '@' || r == '\\' ||
		'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

// IsQuadletFile reports whether name is a quadlet unit file name: the
// extension of a kind after a non-empty base. Units refer to each other
// by such names (Volume=data.volume).
func IsQuadletFile(name string) bool { return KindOf(name) != nil }

// Exts are the kinds' extensions, in the table's order.
func Exts() []string {
	out := make([]string, len(Kinds))
	for i, k := range Kinds {
		out[i] = k.Ext()
	}
	return out
}

// DefaultService is the systemd service quadlet generates for a unit
// file name that sets no ServiceName=: x.container → x.service, x.volume →
// x-volume.service (the kind's ServiceSuffix). A template keeps its "@"
// last: web@.container → web@.service, data@.volume →
// data-volume@.service (podman 5.7 and later; the specs only template
// containers, whose names no release changed). pkg/load/quadletcheck's
// tests hold this to podman's own GetUnitServiceName for every kind.
func DefaultService(unitFile string) string {
	k := KindOf(unitFile)
	base, suffix := unitFile, ""
	if k != nil {
		base, suffix = strings.TrimSuffix(unitFile, k.Ext()), k.ServiceSuffix
	} else if i := strings.LastIndexByte(unitFile, '.'); i >= 0 {
		base = unitFile[:i]
	}
	if t, ok := strings.CutSuffix(base, "@"); ok {
		return t + suffix + "@.service"
	}
	return base + suffix + ".service"
}

// ServiceNamed is the service of a unit file whose [<Type>] ServiceName=
// is serviceName: podman takes the name as written, "" means
// DefaultService.
func ServiceNamed(unitFile, serviceName string) string {
	if serviceName == "" {
		return DefaultService(unitFile)
	}
	return serviceName + ".service"
}
