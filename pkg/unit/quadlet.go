package unit

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
	KeyPull                = "Pull"
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

// QuadletSection reports whether quadlet owns the section's keys.
func QuadletSection(section string) bool {
	_, ok := KeysSince[section]
	return ok
}
