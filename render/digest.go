package render

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/syslet/syslet/pkg/unit"
)

// Digest is how syslet records file contents in its marker:
// "sha256:<hex>".
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// seal records in the [X-Syslet] marker the digest of each file syslet
// writes for the unit, then the digest of the unit file itself, taken over
// everything before that last line. It runs after the keys are put in
// canonical order (finish): the marker is the unit's last section and
// Digest= its last line, so removing that one line gives back exactly the
// bytes digested. A later plan compares both with what is on disk to
// tell a hand edit from syslet's own output (plan's drift check).
func (b *builder) seal(files []File) {
	origin := b.u.Spec.Path()
	for _, f := range files {
		b.add(unit.Syslet, unit.KeyFileDigest, Digest(f.Content)+" "+f.Path, origin)
	}
	b.add(unit.Syslet, unit.KeyDigest, Digest(b.u.File.Bytes()), origin)
}

// filesOf returns the files of the unit being rendered. They are the
// files appended last, so only that run is read: scanning every file
// rendered so far made rendering quadratic in the number of units.
func (o *Output) filesOf(owner string) []File {
	i := len(o.Files)
	for i > 0 && o.Files[i-1].Owner == owner {
		i--
	}
	return o.Files[i:len(o.Files):len(o.Files)]
}
