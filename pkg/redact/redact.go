package redact

import (
	"bytes"
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

// HiddenSum describes content without showing it, by its mode, size and
// the start of its sha256 (enough to tell two versions apart; a file too
// large to read whole is known by these alone).
func HiddenSum(mode uint32, size int64, sum [sha256.Size]byte) string {
	return fmt.Sprintf("mode %04o, %d bytes, sha256 %s…", fs.FileMode(mode).Perm(), size, hex.EncodeToString(sum[:])[:16])
}

// Escape makes s safe to print on one line: control characters (C0, DEL,
// C1, line and paragraph separators, format characters), spaces other
// than the ASCII one and invalid UTF-8 become \xNN or \u escapes, and a
// backslash is doubled so escapes cannot be forged. It is the one escape
// of every text syslet prints about what came from outside.
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
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r) || otherSpace(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// otherSpace is a space other than the ASCII one (no-break, ideographic,
// en and em spaces): it reads as a plain space, so a name holding one
// would pass for another.
func otherSpace(r rune) bool { return r != ' ' && unicode.Is(unicode.Zs, r) }

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || r == '\\' || r < 0x20 || r == 0x7f || unicode.IsControl(r) ||
			r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r) || otherSpace(r) {
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

// The redaction rule, applied by every diff syslet shows (a file's, a
// unit's, a key's; text and JSON alike): content is hidden when either
// side's mode is not world-readable (Private, Hidden), and a line is
// hidden from the credential it names on (Credential).

// credentialWords are what credentials are called in configuration, as
// they appear in a name once it is lower-cased and stripped of "-", "_"
// and ".": DB_PASSWORD, api-key, client_secret, AccessKey, X-Auth-Token.
var credentialWords = []string{"password", "passwd", "passphrase", "secret", "token", "credential", "apikey", "privatekey", "accesskey", "auth"}

// HiddenValue stands for the value of a credential.
const HiddenValue = "(hidden: it names a credential)"

// Credential reports whether a line of a unit or config file names a
// credential, and returns it with everything after that name hidden.
// Names are the words a line assigns to ("NAME=", "NAME:") or passes as
// a flag ("--name value"); a value alone never counts, nor does the
// "name:tag" of an image reference. Quadlet's own
// Secret= key names podman secrets, never their values, and is not
// itself taken for one.
func Credential(line string) (string, bool) {
	for i := 0; i < len(line); {
		if !nameByte(line[i]) {
			i++
			continue
		}
		j := i
		for j < len(line) && nameByte(line[j]) {
			j++
		}
		name := line[i:j]
		k := j
		for k < len(line) && (line[k] == ' ' || line[k] == '\t') {
			k++
		}
		flag := strings.HasPrefix(name, "-")
		// ":" assigns only as YAML and HTTP headers write it, with a
		// space after it: "name:tag" in an image reference does not.
		sep := k < len(line) && (line[k] == '=' || line[k] == ':' && (k+1 == len(line) || line[k+1] == ' ' || line[k+1] == '\t'))
		if (sep || flag) && credential(name) && !(i == 0 && name == "Secret" && sep && line[k] == '=') {
			end := k
			if sep {
				end++
			}
			for end < len(line) && (line[end] == ' ' || line[end] == '\t') {
				end++
			}
			if end == len(line) {
				return line, false // the name alone, with nothing to hide
			}
			return line[:end] + HiddenValue, true
		}
		i = j
	}
	return line, false
}

func nameByte(c byte) bool {
	return c == '-' || c == '_' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func credential(name string) bool {
	n := strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', '.':
			return -1
		}
		return unicode.ToLower(r)
	}, name)
	for _, w := range credentialWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// DiffLines hides the credentials of a unified diff's lines (added,
// removed and context alike); its header lines are kept.
func DiffLines(diff string) string {
	if diff == "" {
		return diff
	}
	lines := strings.SplitAfter(diff, "\n")
	changed := false
	for i, l := range lines {
		if l == "" || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") || strings.HasPrefix(l, "@@") || strings.HasPrefix(l, `\`) {
			continue
		}
		body, nl := strings.CutSuffix(l[1:], "\n")
		if masked, ok := Credential(body); ok {
			lines[i] = l[:1] + masked
			if nl {
				lines[i] += "\n"
			}
			changed = true
		}
	}
	if !changed {
		return diff
	}
	return strings.Join(lines, "")
}

// Answer is the start of a server's answer for an error message: one
// line of at most n bytes (cut at a rune, marked …), every control
// character and invalid byte a '?', each hidden value (a token, a
// password) replaced by "(secret)". "" for an empty or blank answer.
func Answer(b []byte, n int, hide ...[]byte) string {
	for _, h := range hide {
		if len(h) > 0 {
			b = bytes.ReplaceAll(b, h, []byte("(secret)"))
		}
	}
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "?")), " ")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return '?'
		}
		return r
	}, s)
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}
