package push

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
)

func ed25519GenerateKey() (ed25519.PublicKey, ed25519.PrivateKey, error) {
	return ed25519.GenerateKey(rand.Reader)
}

func pemEncode(b *pem.Block) []byte { return pem.EncodeToMemory(b) }
