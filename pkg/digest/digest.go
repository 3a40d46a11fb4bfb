package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Sum is a sha256.
type Sum [sha256.Size]byte

// Of returns the sha256 of data.
func Of(data []byte) Sum { return sha256.Sum256(data) }

// tag marks the spelling of a marker digest.
const tag = "sha256:"

// Hex is the bare spelling: the plan's action digests and the run journal.
func (s Sum) Hex() string { return hex.EncodeToString(s[:]) }

// Tagged is the marker spelling: "sha256:<hex>", in Digest= and FileDigest=
// lines and in config-dir manifests.
func (s Sum) Tagged() string { return tag + s.Hex() }

// IsTagged reports whether d is spelled as Tagged spells a digest.
func IsTagged(d string) bool { return strings.HasPrefix(d, tag) }
