package unit

import "strings"

// Section names syslet renders or reads.
const (
	Unit      = "Unit"
	Service   = "Service"
	Install   = "Install"
	Container = "Container"
	Volume    = "Volume"
	Network   = "Network"
	Build     = "Build"
	Quadlet   = "Quadlet"
	// Syslet is the marker section: its presence says the file is syslet's.
	// systemd ignores X- sections and quadlet passes them through untouched.
	Syslet = "X-Syslet"
)

// Keys syslet sets, forces or reads.
const (
	KeyDescription         = "Description"
	KeyContainerName       = "ContainerName"
	KeyVolumeName          = "VolumeName"
	KeyNetworkName         = "NetworkName"
	KeyImage               = "Image"
	KeyImageTag            = "ImageTag"
	KeyFile                = "File"
	KeySetWorkingDirectory = "SetWorkingDirectory"
	KeyServiceName         = "ServiceName"
	KeyVolume              = "Volume"
	KeyMount               = "Mount"
	KeyTmpfs               = "Tmpfs"
	KeyNetwork             = "Network"
	KeySecret              = "Secret"
	KeyPod                 = "Pod"
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
	// KeyDigest is the sha256 of the unit file as syslet wrote it, without
	// the Digest= line itself; KeyFileDigest ("sha256:<hex> <path>") is the
	// sha256 of one config or build-context file syslet wrote for the
	// unit. A mismatch means the file was edited by hand since.
	KeyDigest     = "Digest"
	KeyFileDigest = "FileDigest"
)

// keys accepted by podman 5.4's quadlet generator (the version Debian trixie
// ships), per section. Copied as data from the generator's allowlists so that
// `syslet validate` can point at a mistyped key with its JSON path without a
// podman install; the host's generator still has the last word at staging.
var keys54 = map[string]string{
	Container: "AddCapability AddDevice AddHost Annotation AutoUpdate CgroupsMode ContainerName ContainersConfModule DNS DNSOption DNSSearch DropCapability Entrypoint Environment EnvironmentFile EnvironmentHost Exec ExposeHostPort GIDMap GlobalArgs Group GroupAdd HealthCmd HealthInterval HealthLogDestination HealthMaxLogCount HealthMaxLogSize HealthOnFailure HealthRetries HealthStartPeriod HealthStartupCmd HealthStartupInterval HealthStartupRetries HealthStartupSuccess HealthStartupTimeout HealthTimeout HostName IP IP6 Image Label LogDriver LogOpt Mask Mount Network NetworkAlias NoNewPrivileges Notify PidsLimit Pod PodmanArgs PublishPort Pull ReadOnly ReadOnlyTmpfs RemapGid RemapUid RemapUidSize RemapUsers Rootfs RunInit SeccompProfile Secret SecurityLabelDisable SecurityLabelFileType SecurityLabelLevel SecurityLabelNested SecurityLabelType ServiceName ShmSize StartWithPod StopSignal StopTimeout SubGIDMap SubUIDMap Sysctl Timezone Tmpfs UIDMap Ulimit Unmask User UserNS VolatileTmp Volume WorkingDir",
	Volume:    "ContainersConfModule Copy Device Driver GlobalArgs Group Image Label Options PodmanArgs ServiceName Type User VolumeName",
	Network:   "ContainersConfModule DNS DisableDNS Driver Gateway GlobalArgs IPAMDriver IPRange IPv6 Internal Label NetworkName Options PodmanArgs ServiceName Subnet",
	Build:     "Annotation Arch AuthFile ContainersConfModule DNS DNSOption DNSSearch Environment File ForceRM GlobalArgs GroupAdd ImageTag Label Network PodmanArgs Pull Secret ServiceName SetWorkingDirectory TLSVerify Target Variant Volume",
	Quadlet:   "DefaultDependencies",
}

// keys that later podman releases (5.5 to 5.8) added. A spec may use them,
// with a warning that hosts on podman 5.4 will reject the unit.
var keysLater = map[string]string{
	Container: "AppArmor HttpProxy Memory ReloadCmd ReloadSignal Retry RetryDelay",
	Network:   "InterfaceName NetworkDeleteOnStop",
	Build:     "BuildArg IgnoreFile Retry RetryDelay",
}

// KeySupport says which podman releases accept a key in a quadlet section.
type KeySupport int

const (
	KeyUnknown KeySupport = iota // no podman release this package knows accepts it
	KeySince54                   // accepted by podman 5.4 and later
	KeyAfter54                   // accepted only by podman 5.5 and later
)

var known = func() map[string]map[string]KeySupport {
	m := map[string]map[string]KeySupport{}
	for sec, ks := range keys54 {
		m[sec] = map[string]KeySupport{}
		for _, k := range strings.Fields(ks) {
			m[sec][k] = KeySince54
		}
	}
	for sec, ks := range keysLater {
		for _, k := range strings.Fields(ks) {
			m[sec][k] = KeyAfter54
		}
	}
	return m
}()

// Known reports whether quadlet accepts key in section. It only judges the
// quadlet-specific sections ([Container], [Volume], [Network], [Build],
// [Quadlet]); for any other section it returns KeySince54, because systemd's
// own sections are systemd's to judge.
func Known(section, key string) KeySupport {
	ks, ok := known[section]
	if !ok {
		return KeySince54
	}
	return ks[key]
}

// QuadletSection reports whether quadlet owns the section's keys.
func QuadletSection(section string) bool {
	_, ok := known[section]
	return ok
}
