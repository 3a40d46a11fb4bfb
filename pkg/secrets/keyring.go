package secrets

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"filippo.io/age"

	"github.com/syslet/syslet/pkg/settings"
)

// ErrNoHostKey is returned by HostRecipient when the host has no SSH
// ed25519 key to derive its identity from.
var ErrNoHostKey = errors.New("no SSH ed25519 host key")

// Keyring holds every age identity of one host: the one derived from its
// current SSH host key, the ones derived from earlier host keys (the
// cache), and those of the configured identity files.
type Keyring struct {
	root     string
	keyPath  string    // SSH key the host identity comes from (host path)
	host     *Identity // nil when the default key does not exist
	hostText string    // the host identity as cache text; never printed
	ids      []Identity
	// Warnings are things an operator should know that do not stop a run
	// (a missing default host key, a cache readable by others).
	Warnings []string
}

// Load reads the settings, derives the host identity and reads the cache
// and identity files, all under root. An explicitly configured key or
// identity file that is missing or unusable is an error naming its path;
// a missing default host key is only a warning, because the cache and the
// identity files may still open everything.
func Load(root string) (*Keyring, error) {
	st, err := settings.Load(root)
	if err != nil {
		return nil, err
	}
	k := &Keyring{root: root, keyPath: st.SSHKeyPath}
	explicit := k.keyPath != ""
	if !explicit {
		k.keyPath = DefaultSSHKeyPath
	}
	pemBytes, err := os.ReadFile(filepath.Join(root, k.keyPath))
	switch {
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		k.Warnings = append(k.Warnings, fmt.Sprintf("no SSH host key at %s: secrets open only with cached identities (%s) and ageIdentityFiles", k.keyPath, CachePath))
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("sshKeyPath %s (set in %s) does not exist", k.keyPath, SettingsPath)
	case err != nil:
		return nil, fmt.Errorf("reading SSH host key: %w", err)
	default:
		id, text, err := fromSSHKey(pemBytes)
		clear(pemBytes)
		if err != nil {
			return nil, fmt.Errorf("SSH host key %s: %w", k.keyPath, err)
		}
		k.host = &Identity{Identity: id, Recipient: id.Recipient().String(), Origin: "SSH host key " + k.keyPath}
		k.hostText = text
		k.add(*k.host)
	}
	if err := k.readCache(); err != nil {
		return nil, err
	}
	for _, p := range st.AgeIdentityFiles {
		if err := k.readIdentityFile(p); err != nil {
			return nil, err
		}
	}
	return k, nil
}

func (k *Keyring) add(id Identity) {
	for _, have := range k.ids {
		if have.Recipient != "" && have.Recipient == id.Recipient {
			return
		}
	}
	k.ids = append(k.ids, id)
}

// readCache adds the identities derived from earlier host keys. Lines are
// checked one by one so that a message can name a bad line without
// showing it.
func (k *Keyring) readCache() error {
	full := filepath.Join(k.root, CachePath)
	f, err := os.Open(full)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading identity cache: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		k.Warnings = append(k.Warnings, fmt.Sprintf("identity cache %s has mode %04o: it holds private keys, run chmod 600 on it", CachePath, fi.Mode().Perm()))
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return fmt.Errorf("reading identity cache: %w", err)
	}
	defer clear(data)
	for n, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		id, err := age.ParseX25519Identity(string(line))
		if err != nil {
			return fmt.Errorf("identity cache %s, line %d: not an age X25519 identity", CachePath, n+1)
		}
		k.add(Identity{Identity: id, Recipient: id.Recipient().String(), Origin: "identity cache " + CachePath})
	}
	return nil
}

func (k *Keyring) readIdentityFile(p string) error {
	data, err := os.ReadFile(filepath.Join(k.root, p))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("age identity file %s (listed in %s ageIdentityFiles) does not exist", p, SettingsPath)
	}
	if err != nil {
		return fmt.Errorf("reading age identity file: %w", err)
	}
	defer clear(data)
	ids, err := age.ParseIdentities(bytes.NewReader(data))
	if err != nil {
		// age's messages name line numbers, never key material.
		return fmt.Errorf("age identity file %s: %w", p, err)
	}
	for _, id := range ids {
		k.add(Identity{Identity: id, Recipient: recipientOf(id), Origin: "age identity file " + p})
	}
	return nil
}

func recipientOf(id age.Identity) string {
	switch v := id.(type) {
	case *age.X25519Identity:
		return v.Recipient().String()
	case *age.HybridIdentity:
		return v.Recipient().String()
	}
	return ""
}

// Identities returns every identity, the current host key's first.
func (k *Keyring) Identities() []Identity { return k.ids }

// HostRecipient is the age recipient of the current SSH host key: what an
// operator encrypts a secret for.
func (k *Keyring) HostRecipient() (string, error) {
	if k.host == nil {
		return "", fmt.Errorf("%w at %s (set sshKeyPath in %s to use another key)", ErrNoHostKey, k.keyPath, SettingsPath)
	}
	return k.host.Recipient, nil
}

// Remember appends the current host identity to the cache unless it is
// already there, so that secrets encrypted for this host key still open
// after the key is replaced. The cache only ever grows: the file is opened
// for appending, created 0600 in a 0700 directory, and locked against a
// concurrent syslet.
func (k *Keyring) Remember() error {
	if k.host == nil {
		return nil
	}
	full := filepath.Join(k.root, CachePath)
	if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
		return fmt.Errorf("creating identity cache directory: %w", err)
	}
	f, err := os.OpenFile(full, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening identity cache: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking identity cache: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("identity cache: %w", err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == k.hostText {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading identity cache: %w", err)
	}
	entry := fmt.Sprintf("# derived by syslet from %s on %s\n# public key: %s\n%s\n",
		k.keyPath, time.Now().UTC().Format(time.RFC3339), k.host.Recipient, k.hostText)
	if _, err := f.WriteString(entry); err != nil {
		return fmt.Errorf("appending to identity cache: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing identity cache: %w", err)
	}
	return nil
}
