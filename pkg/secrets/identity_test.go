package secrets

import (
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
	"golang.org/x/crypto/ssh"
)

// vector is one host key with what independent implementations derive
// from it (testdata/gen-vectors.sh: OpenSSH, libsodium, age-keygen).
type vector struct {
	Key             string `json:"key"`
	Identity        string `json:"identity"`        // ssh-to-age's form: unclamped scalar
	IdentityClamped string `json:"identityClamped"` // the same key, clamped by libsodium
	X25519Clamped   string `json:"x25519Clamped"`   // libsodium crypto_sign_ed25519_sk_to_curve25519
	Recipient       string `json:"recipient"`       // libsodium pk_to_curve25519, confirmed by age-keygen -y
}

func readVectors(t *testing.T) []vector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) < 3 {
		t.Fatalf("%d vectors, want 3", len(vs))
	}
	return vs
}

func TestFromSSHKeyMatchesIndependentVectors(t *testing.T) {
	for _, v := range readVectors(t) {
		t.Run(v.Key, func(t *testing.T) {
			pemBytes, err := os.ReadFile(filepath.Join("testdata", v.Key))
			if err != nil {
				t.Fatal(err)
			}
			id, text, err := fromSSHKey(pemBytes)
			if err != nil {
				t.Fatal(err)
			}
			if text != v.Identity {
				t.Errorf("identity text differs from ssh-to-age's form")
			}
			if got := id.Recipient().String(); got != v.Recipient {
				t.Errorf("recipient %s, want %s", got, v.Recipient)
			}
			// The scalar, clamped as X25519 uses it, is libsodium's.
			raw, err := ssh.ParseRawPrivateKey(pemBytes)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha512.Sum512(raw.(*ed25519.PrivateKey).Seed())
			s := sum[:32]
			s[0] &= 248
			s[31] &= 127
			s[31] |= 64
			if hex.EncodeToString(s) != v.X25519Clamped {
				t.Errorf("clamped scalar differs from libsodium's")
			}
			// age reads libsodium's clamped form as the same key.
			c, err := age.ParseX25519Identity(v.IdentityClamped)
			if err != nil || c.Recipient().String() != v.Recipient {
				t.Errorf("clamped identity: %v, recipient %v", err, c)
			}
		})
	}
}

func TestFromSSHKeyRefuses(t *testing.T) {
	tests := []struct {
		file string
		want string
		is   error
	}{
		{"hostkey-ecdsa", "not an ed25519 key", ErrNotEd25519},
		{"hostkey-locked", "passphrase", nil},
		{"vectors.json", "not an OpenSSH private key", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = fromSSHKey(data)
			if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestBech32RoundTripsThroughAge(t *testing.T) {
	for i := range 50 {
		b := make([]byte, 32)
		for j := range b {
			b[j] = byte(i*31 + j*7)
		}
		text, err := bech32Encode("AGE-SECRET-KEY-", b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := age.ParseX25519Identity(strings.ToUpper(text)); err != nil {
			t.Fatalf("age refuses %d: %v", i, err)
		}
	}
}
