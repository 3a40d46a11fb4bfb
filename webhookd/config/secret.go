package config

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/crypto/ssh"

	"github.com/syslet/syslet/pkg/settings"
)

// Secret holds a credential read from a file. It never prints itself, so a
// stray log line or status document cannot leak it.
type Secret struct{ b []byte }

func (s Secret) String() string                { return "(secret)" }
func (s Secret) Format(f fmt.State, verb rune) { io.WriteString(f, "(secret)") }
func (s Secret) MarshalJSON() ([]byte, error)  { return []byte(`"(secret)"`), nil }
func (s Secret) IsZero() bool                  { return len(s.b) == 0 }

// Bytes is the credential itself, for the one use it is read for (a
// signature check, a token compared or sent).
func (s Secret) Bytes() []byte { return s.b }

func readable(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	return f.Close()
}

// privateFile refuses a credential file that is not a regular file or that
// group or others may read (pkg/settings holds the rule).
func privateFile(file string) error { return settings.PrivateFile(file) }

// ReadSecret reads a credential from a private file (pkg/settings holds
// the rule), without its surrounding white space.
func ReadSecret(file string) (Secret, error) {
	b, err := settings.ReadCredential(file)
	if err != nil {
		return Secret{}, err
	}
	return Secret{b: b}, nil
}

// LoadSigner reads an SSH private key file (mode 0600, no passphrase).
func LoadSigner(file string) (ssh.Signer, error) {
	if err := privateFile(file); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	s, err := ssh.ParsePrivateKey(b)
	var pp *ssh.PassphraseMissingError
	if errors.As(err, &pp) {
		return nil, fmt.Errorf("%s is passphrase-protected; a daemon needs an unencrypted deploy key", file)
	}
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", file, err)
	}
	return s, nil
}
