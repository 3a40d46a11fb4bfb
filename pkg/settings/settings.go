package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/syslet/syslet/pkg/layout"
)

// Path is the settings file, a host path resolved under a root.
const Path = layout.Settings

// Settings are the fields of /etc/syslet/syslet.json.
type Settings struct {
	// SSHKeyPath is the SSH ed25519 private key the host's age identity is
	// derived from; empty means the host key (pkg/secrets).
	SSHKeyPath string `json:"sshKeyPath,omitempty"`
	// AgeIdentityFiles are age identity files (as written by age-keygen)
	// whose identities also decrypt secrets.
	AgeIdentityFiles []string `json:"ageIdentityFiles,omitempty"`
	// Notify are where syslet's own runs send notifications (pkg/notify).
	Notify []NotifyTarget `json:"notify,omitempty"`
}

// ErrSettings marks every error about the settings file's content.
var ErrSettings = errors.New("settings " + Path)

// Load reads the settings file under root. A missing file gives the
// defaults; an unreadable or malformed one, an unknown field, or a value
// that cannot be right is an error naming the file and the field, because
// a mistyped key path would otherwise fall back to the default key
// without a word.
func Load(root string) (Settings, error) {
	var s Settings
	data, err := os.ReadFile(filepath.Join(root, Path))
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("reading settings: %w", err)
	}
	return Parse(data)
}

// Parse is Load for bytes already read.
func Parse(data []byte) (Settings, error) {
	var s Settings
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Settings{}, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Settings{}, fmt.Errorf("%w: more than one JSON object", ErrSettings)
	}
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	absolute := func(field, p string) {
		if p != "" && !filepath.IsAbs(p) {
			add(field, "path %q must be absolute", p)
		}
	}
	absolute("sshKeyPath", s.SSHKeyPath)
	for i, p := range s.AgeIdentityFiles {
		absolute(fmt.Sprintf("ageIdentityFiles[%d]", i), p)
	}
	if len(errs) > 0 {
		return Settings{}, fmt.Errorf("%w: %w", ErrSettings, errors.Join(errs...))
	}
	return s, nil
}

// PrivateFile refuses a credential file that is not a regular file or
// that group or others may read: a secret is only as good as its file's
// mode.
func PrivateFile(file string) error {
	fi, err := os.Stat(file)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", file)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is readable by group or others (mode %04o): chmod 600 it", file, fi.Mode().Perm())
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	return f.Close()
}

// ReadCredential reads a credential (a token, a key, a URL that is one)
// from a private file, without its surrounding white space. Its content
// never appears in an error.
func ReadCredential(file string) ([]byte, error) {
	if err := PrivateFile(file); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, fmt.Errorf("%s is empty", file)
	}
	return b, nil
}
