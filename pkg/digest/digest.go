// Package digest is the one home of how syslet names a content's sha256.
// Two spellings exist on hosts and both are kept: the [X-Syslet] marker
// and a config dir's manifest record "sha256:<hex>" (Tagged), the plan's
// actions and the run journal record the bare "<hex>" (Hex). A Sum is
// computed once and spelled either way, so no caller hashes the same bytes
// twice to compare with both.
//
// Layer: ground. It imports nothing from syslet.
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
