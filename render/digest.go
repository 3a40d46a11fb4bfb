package render

import (
	"bytes"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/digest"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/unit"
)

// Digest is how syslet records file contents in its marker (the tagged
// spelling of pkg/digest).
func Digest(data []byte) string { return digest.Of(data).Tagged() }

// seal records in the [X-Syslet] marker the digest of each file syslet
// writes for the unit, then the digest of the unit file itself, taken over
// everything before that last line. It runs after the keys are put in
// canonical order (finish): the marker is the unit's last section and
// Digest= its last line, so removing that one line gives back exactly the
// bytes digested. A later plan compares both with what is on disk to
// tell a hand edit from syslet's own output (plan's drift check).
func (b *builder) seal(files []File) {
	for _, f := range files {
		b.mark(unit.KeyFileDigest, Digest(f.Content)+" "+f.Path)
	}
	b.mark(unit.KeyDigest, Digest(b.u.File.Bytes()))
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

// digestsMode keeps a config dir's manifest readable by root only: the
// digests of private files are no one else's business.
const digestsMode = 0o600

// Installed is what a config dir version holds on the host: the user's
// files and the manifest of their digests (layout.Digests). Apply and
// `syslet render --out` both write exactly this.
func (d Dir) Installed() []DirFile {
	files := make([]DirFile, 0, len(d.Files)+1)
	files = append(files, d.Files...)
	return append(files, DirFile{Name: layout.Digests, Content: DirDigests(d.Files), Mode: digestsMode})
}

// DirDigests is the manifest of a config dir version: one line
// "sha256:<hex> <name>" per file, in name order.
func DirDigests(files []DirFile) []byte {
	var b bytes.Buffer
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(x, y DirFile) int { return strings.Compare(x.Name, y.Name) })
	for _, f := range sorted {
		b.WriteString(Digest(f.Content) + " " + f.Name + "\n")
	}
	return b.Bytes()
}

// ParseDirDigests reads a manifest written by DirDigests: file name →
// digest. Lines it does not understand are skipped; a file they would
// have named is then unknown, which is never drift.
func ParseDirDigests(data []byte) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(string(data), "\n") {
		d, name, ok := strings.Cut(l, " ")
		if ok && digest.IsTagged(d) && name != "" {
			out[name] = d
		}
	}
	return out
}
