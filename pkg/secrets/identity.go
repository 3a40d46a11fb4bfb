package secrets

import (
	"crypto/ed25519"
	"crypto/sha512"
	"errors"
	"fmt"
	"strings"

	"filippo.io/age"
	"golang.org/x/crypto/ssh"
)

// ErrNotEd25519 is returned for an SSH private key of another type: only
// ed25519 keys have an X25519 counterpart.
var ErrNotEd25519 = errors.New("not an ed25519 key: only ed25519 SSH host keys can be turned into an age identity")

// Identity is one age identity of the host with the recipient it answers
// to and where it came from (for messages; never the key itself).
type Identity struct {
	age.Identity
	Recipient string
	Origin    string
}

// fromSSHKey derives the age X25519 identity of an OpenSSH ed25519
// private key the way ssh-to-age does: the first 32 bytes of SHA-512 over
// the ed25519 seed, bech32-encoded as AGE-SECRET-KEY-1…. ssh-to-age does
// not clamp the scalar (X25519 clamps when it uses it), and neither does
// this, so the text is byte-identical to what ssh-to-age prints and what
// the earlier syslet cached. It returns the identity text for the cache.
func fromSSHKey(pemBytes []byte) (*age.X25519Identity, string, error) {
	raw, err := ssh.ParseRawPrivateKey(pemBytes)
	if err != nil {
		var pm *ssh.PassphraseMissingError
		if errors.As(err, &pm) {
			return nil, "", errors.New("the key is protected by a passphrase; a host key must not be")
		}
		return nil, "", fmt.Errorf("not an OpenSSH private key: %w", err)
	}
	var pk ed25519.PrivateKey
	switch k := raw.(type) {
	case *ed25519.PrivateKey:
		pk = *k
	case ed25519.PrivateKey:
		pk = k
	default:
		return nil, "", fmt.Errorf("%w (got %T)", ErrNotEd25519, raw)
	}
	sum := sha512.Sum512(pk.Seed())
	defer clear(sum[:])
	text, err := bech32Encode("age-secret-key-", sum[:32])
	if err != nil {
		return nil, "", err
	}
	text = strings.ToUpper(text)
	id, err := age.ParseX25519Identity(text)
	if err != nil {
		return nil, "", fmt.Errorf("deriving the age identity: %w", err)
	}
	return id, text, nil
}
