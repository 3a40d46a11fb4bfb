package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Private reports whether a file of this mode must not have its content
// shown: anything others may not read.
func Private(mode uint32) bool { return mode&0o004 == 0 }

// Hidden describes content without showing it: mode, size and the start
// of its sha256, enough to tell two versions apart.
func Hidden(mode uint32, data []byte) string {
	sum := sha256.Sum256(data)
	return fmt.Sprintf("mode %04o, %d bytes, sha256 %s…", fs.FileMode(mode).Perm(), len(data), hex.EncodeToString(sum[:])[:16])
}

// Escape makes s safe to print on one line: control characters (C0, DEL,
// C1, line and paragraph separators) and invalid UTF-8 become \xNN or
// \u escapes, and a backslash is doubled so escapes cannot be forged.
// Printable text, including non-ASCII letters, is unchanged.
func Escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x80 && (r < 0x20 || r == 0x7f):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || r == '\\' || r < 0x20 || r == 0x7f || unicode.IsControl(r) ||
			r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r) {
			return true
		}
		i += n
	}
	return false
}

// Line escapes one line of file content for a diff: like Escape, but a
// tab stays a tab and a backslash stays itself (content is shown, not
// named).
func Line(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\t':
			b.WriteByte('\t')
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && (r < 0x20 || r == 0x7f):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
