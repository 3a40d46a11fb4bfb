package secrets

import (
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/settings"
)

// Host paths, absolute; they are resolved under Keyring's root.
const (
	// SettingsPath is syslet's settings file (pkg/settings); this package
	// reads its sshKeyPath and ageIdentityFiles.
	SettingsPath      = settings.Path
	DefaultSSHKeyPath = "/etc/ssh/ssh_host_ed25519_key"
	// CachePath is the append-only cache of derived identities, one
	// AGE-SECRET-KEY per line: the same file the earlier syslet kept.
	CachePath = layout.KeyCache
)
