package unit

import (
	"strings"
	"unicode"
)

// Section names syslet renders or reads.
const (
	Unit      = "Unit"
	Service   = "Service"
	Install   = "Install"
	Container = "Container"
	Volume    = "Volume"
	Network   = "Network"
	Build     = "Build"
	Pod       = "Pod"
	Image     = "Image"
	Kube      = "Kube"
	Artifact  = "Artifact"
	Quadlet   = "Quadlet"
	// Syslet is the marker section: its presence says the file is syslet's.
	// systemd ignores X- sections and quadlet passes them through untouched.
	Syslet = "X-Syslet"
)

// Keys syslet sets, forces or reads.
const (
	KeyDescription   = "Description"
	KeyContainerName = "ContainerName"
	KeyVolumeName    = "VolumeName"
	KeyNetworkName   = "NetworkName"
	KeyImage         = "Image"
	// KeyAutoUpdate is podman's own image update: a container (or kube
	// unit) that sets it is restarted by podman-auto-update.timer when
	// its image moves, outside syslet's plan, health gate and
	// generations; `syslet update` does the same under them.
	KeyAutoUpdate          = "AutoUpdate"
	KeyPull                = "Pull"
	KeyImageTag            = "ImageTag"
	KeyFile                = "File"
	KeySetWorkingDirectory = "SetWorkingDirectory"
	KeyServiceName         = "ServiceName"
	KeyVolume              = "Volume"
	KeyMount               = "Mount"
	KeyTmpfs               = "Tmpfs"
	KeyNetwork             = "Network"
	KeyPublishPort         = "PublishPort"
	KeyNetworkAlias        = "NetworkAlias"
	KeySecret              = "Secret"
	KeyPod                 = "Pod"
	KeyPodName             = "PodName"
	KeyStartWithPod        = "StartWithPod"
	KeyYaml                = "Yaml"
	KeyArtifact            = "Artifact"
	KeyDefaultInstance     = "DefaultInstance"
	KeyNotify              = "Notify"
	KeyHealthCmd           = "HealthCmd"
	KeyRestart             = "Restart"
	KeyType                = "Type"
	KeyExecReload          = "ExecReload"
	KeyReloadCmd           = "ReloadCmd"
	KeyReloadSignal        = "ReloadSignal"
	KeyWantedBy            = "WantedBy"
	KeyRemovalAllowed      = "RemovalAllowed"
	KeyReclaimPolicy       = "ReclaimPolicy"
	// KeyBackup=false in a volume's marker: its data may go without an
	// export when an apply deletes or recreates it (written only then).
	KeyBackup = "Backup"
	// KeyInstance lists, in a template's marker, each instance syslet
	// enabled (a link web@1.container → web@.container carries no marker
	// of its own): only those are syslet's to stop and remove.
	KeyInstance = "Instance"
	// KeyProbe is a container's readiness probe (pkg/probe's Marker): the
	// health gate, status and the drift check ask what it says. A change
	// to it alone is a metadata-only rewrite.
	KeyProbe = "Probe"
	// KeySlot names the slot (blue or green) a start-first container's
	// unit runs, and KeyProxy its route through the proxy (pkg/proxy's
	// Route, as JSON): the slot's ports, which the plan and a rollback
	// read back from the installed unit.
	KeySlot  = "Slot"
	KeyProxy = "Proxy"
	// KeyDigest is the sha256 of the unit file as syslet wrote it, without
	// the Digest= line itself; KeyFileDigest ("sha256:<hex> <path>") is the
	// sha256 of one config or build-context file syslet wrote for the
	// unit. A mismatch means the file was edited by hand since.
	KeyDigest     = "Digest"
	KeyFileDigest = "FileDigest"
)

// QuadletSection reports whether quadlet owns the section's keys.
func QuadletSection(section string) bool {
	_, ok := KeysSince[section]
	return ok
}

// ServiceOf is the systemd service quadlet generates for the unit file
// fileName with content f: its kind's section's ServiceName= (the last
// one, as quadlet reads it), else DefaultService.
func ServiceOf(fileName string, f *File) string {
	name := ""
	if k := KindOf(fileName); f != nil && k != nil {
		name, _ = f.Last(k.Section, KeyServiceName)
		name = strings.Trim(name, `"`)
	}
	return ServiceNamed(fileName, name)
}

// Merge is what quadlet converts: the unit with its drop-ins merged in, in
// the order given (quadlet's is by file name), every drop-in's lines
// appended to the section of the same name.
func Merge(base *File, dropIns ...*File) *File {
	g := &File{}
	add := func(f *File) {
		if f == nil {
			return
		}
		for _, s := range f.Sections {
			ns := g.Ensure(s.Name)
			ns.Entries = append(ns.Entries, s.Entries...)
		}
	}
	add(base)
	for _, d := range dropIns {
		add(d)
	}
	return g
}

// Unquoted is a single value as quadlet reads it (podman's parser's
// Lookup): trailing whitespace dropped and one pair of surrounding double
// quotes taken off, so `Image="localhost/app"` names localhost/app.
func Unquoted(v string) string {
	v = strings.TrimRightFunc(v, unicode.IsSpace)
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	return v
}
