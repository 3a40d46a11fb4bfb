package secrets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/layout"
)

// Host paths, absolute; they are resolved under Keyring's root.
const (
	SettingsPath      = layout.Settings
	DefaultSSHKeyPath = "/etc/ssh/ssh_host_ed25519_key"
	// CachePath is the append-only cache of derived identities, one
	// AGE-SECRET-KEY per line: the same file the earlier syslet kept.
	CachePath = layout.KeyCache
)

// Settings are the fields of /etc/syslet/syslet.json this package reads.
type Settings struct {
	// SSHKeyPath is the SSH ed25519 private key the host identity is
	// derived from; empty means DefaultSSHKeyPath.
	SSHKeyPath string `json:"sshKeyPath,omitempty"`
	// AgeIdentityFiles are age identity files (as written by age-keygen)
	// whose identities also decrypt secrets.
	AgeIdentityFiles []string `json:"ageIdentityFiles,omitempty"`
}

// LoadSettings reads the settings file under root. A missing file gives
// the defaults; an unreadable or malformed one, or an unknown field, is an
// error naming the file, because a mistyped key path would otherwise fall
// back to the default key without a word.
func LoadSettings(root string) (Settings, error) {
	var s Settings
	data, err := bounded.ReadFile(filepath.Join(root, SettingsPath), settingsKind)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("reading settings: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("settings %s: %w", SettingsPath, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return s, fmt.Errorf("settings %s: more than one JSON object", SettingsPath)
	}
	for _, p := range append([]string{s.SSHKeyPath}, s.AgeIdentityFiles...) {
		if p != "" && !filepath.IsAbs(p) {
			return s, fmt.Errorf("settings %s: path %q must be absolute", SettingsPath, p)
		}
	}
	return s, nil
}
