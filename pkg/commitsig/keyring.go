package commitsig

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"

	"github.com/syslet/syslet/pkg/bounded"
)

// keyringKind bounds an OpenPGP keyring file: a public key with its
// user IDs and a few hundred certifications stays far below it.
var keyringKind = bounded.Kind{What: "an OpenPGP keyring", Max: 4 << 20, Follow: true}

// pgpKeyArmor is the armor header of an exported public key
// (gpg --export --armor).
const pgpKeyArmor = "-----BEGIN PGP PUBLIC KEY BLOCK-----"

// Keyring is a parsed OpenPGP public keyring: the keys whose signatures
// deploy.
type Keyring struct {
	File     string
	entities openpgp.EntityList
}

// Len is the number of keys (primary keys) in the keyring.
func (k *Keyring) Len() int { return len(k.entities) }

// LoadKeyring reads and parses an OpenPGP public keyring, armored or
// binary (gpg --export [--armor]). Like an allowed-signers file it says
// who may deploy, so the same rules hold for its mode and owner.
func LoadKeyring(file string) (*Keyring, error) {
	raw, err := readTrustFile(file, keyringKind)
	if err != nil {
		return nil, err
	}
	return ParseKeyring(file, raw)
}

// readTrustFile reads a file that decides who may deploy: bounded, a
// regular file, mode 0644 or stricter, owned by root or the reader.
func readTrustFile(file string, kind bounded.Kind) ([]byte, error) {
	f, fi, err := bounded.Open(file, kind)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := checkMode(file, fi); err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(f, kind.Max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if int64(len(raw)) > kind.Max {
		return nil, fmt.Errorf("%s: larger than %s, the cap of %s", file, bounded.Size(kind.Max), kind.What)
	}
	return raw, nil
}

// ParseKeyring parses an OpenPGP keyring, armored or binary. A keyring
// that holds a secret key is refused: the host needs only public keys,
// and a secret key in a world-readable file is a leak to stop early.
func ParseKeyring(file string, raw []byte) (*Keyring, error) {
	var (
		el  openpgp.EntityList
		err error
	)
	if bytes.HasPrefix(bytes.TrimLeft(raw, " \t\r\n"), []byte("-----BEGIN ")) {
		block, derr := armor.Decode(bytes.NewReader(raw))
		if derr != nil {
			return nil, fmt.Errorf("%s: not a readable armored OpenPGP keyring: %v", file, derr)
		}
		if block.Type != openpgp.PublicKeyType {
			return nil, fmt.Errorf("%s holds a %q block, want %q (gpg --export --armor KEYID)", file, block.Type, openpgp.PublicKeyType)
		}
		el, err = openpgp.ReadKeyRing(block.Body)
	} else {
		el, err = openpgp.ReadKeyRing(bytes.NewReader(raw))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable OpenPGP keyring (gpg --export [--armor] KEYID): %v", file, err)
	}
	if len(el) == 0 {
		return nil, fmt.Errorf("%s holds no OpenPGP key: every commit would be refused", file)
	}
	for _, e := range el {
		if e.PrivateKey != nil {
			return nil, fmt.Errorf("%s holds the secret key %X: export only the public key (gpg --export, not --export-secret-keys)", file, e.PrimaryKey.Fingerprint)
		}
	}
	return &Keyring{File: file, entities: el}, nil
}

// IsKeyring tells an OpenPGP keyring from an allowed-signers file by its
// content: an armored public key block, or binary data (an OpenPGP
// packet's first byte has its high bit set, and key material is not
// UTF-8). An allowed-signers file is UTF-8 text.
func IsKeyring(raw []byte) bool {
	text := bytes.TrimLeft(raw, " \t\r\n")
	if bytes.HasPrefix(text, []byte(pgpKeyArmor)) || bytes.HasPrefix(text, []byte("-----BEGIN PGP ")) {
		return true
	}
	return len(raw) > 0 && raw[0]&0x80 != 0 && !utf8.Valid(raw)
}

// LoadTrustFile reads a file that is either an allowed-signers file or
// an OpenPGP keyring, decided by its content (syslet push --verify FILE).
func LoadTrustFile(file string) (Trust, error) {
	raw, err := readTrustFile(file, keyringKind)
	if err != nil {
		return Trust{}, err
	}
	if IsKeyring(raw) {
		k, err := ParseKeyring(file, raw)
		return Trust{PGP: k}, err
	}
	if int64(len(raw)) > allowedKind.Max {
		return Trust{}, fmt.Errorf("%s: larger than %s, the cap of %s", file, bounded.Size(allowedKind.Max), allowedKind.What)
	}
	a, err := ParseAllowedSigners(file, raw)
	return Trust{SSH: a}, err
}

// identity is the user ID a signer is shown by: the primary identity's,
// cut and with control characters replaced (it came from a key file, but
// it ends up in logs and pages).
func identity(e *openpgp.Entity) string {
	id := e.PrimaryIdentity()
	if id == nil {
		return fmt.Sprintf("%X", e.PrimaryKey.Fingerprint)
	}
	name := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, id.Name)
	return printable(name)
}
