package commitsig

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/syslet/syslet/pkg/bounded"
)

// Namespace is the SSHSIG namespace git signs commits in.
const Namespace = "git"

// allowedKind bounds the allowed-signers file: a few hundred keys fit in
// far less.
var allowedKind = bounded.Kind{What: "an allowed-signers file", Max: 1 << 20, Follow: true}

// AllowedSigners is a parsed allowed-signers file.
type AllowedSigners struct {
	File    string
	entries []entry
}

// entry is one line: who, which key, and when and for what it counts.
type entry struct {
	line        int
	principals  string // as written: comma-separated patterns
	key         ssh.PublicKey
	namespaces  []string // patterns; nil means every namespace
	validAfter  time.Time
	validBefore time.Time
}

// Len is the number of keys listed.
func (a *AllowedSigners) Len() int { return len(a.entries) }

// LoadAllowedSigners reads and parses an allowed-signers file. The file
// says who may deploy, so it must be a regular file no one but its owner
// may write (mode 0644 or stricter, no execute bit), owned by root or by
// the user reading it.
func LoadAllowedSigners(file string) (*AllowedSigners, error) {
	f, fi, err := bounded.Open(file, allowedKind)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := checkMode(file, fi); err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(f, allowedKind.Max+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if int64(len(raw)) > allowedKind.Max {
		return nil, fmt.Errorf("%s: larger than %s, the cap of %s", file, bounded.Size(allowedKind.Max), allowedKind.What)
	}
	return ParseAllowedSigners(file, raw)
}

// checkMode refuses a file someone else could rewrite: writable by group
// or others, or owned by a user other than root or the one reading it.
func checkMode(file string, fi fs.FileInfo) error {
	if perm := fi.Mode().Perm(); perm&^0o644 != 0 {
		return fmt.Errorf("%s has mode %04o: an allowed-signers file decides who may deploy, so it must be 0644 or stricter (chmod 644 it)", file, perm)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is owned by uid %d: an allowed-signers file decides who may deploy, so only root (or the user reading it) may own it", file, st.Uid)
	}
	return nil
}

// ParseAllowedSigners parses the lines of an allowed-signers file:
//
//	principals [options] keytype base64-key [comment]
//
// with the options cert-authority (refused: not supported), namespaces="…",
// valid-after="…" and valid-before="…" (YYYYMMDD[HHMM[SS]], a trailing Z
// for UTC, else local time). Every problem is an error naming the line.
func ParseAllowedSigners(file string, raw []byte) (*AllowedSigners, error) {
	a := &AllowedSigners{File: file}
	var errs []string
	for i, line := range strings.Split(string(raw), "\n") {
		n := i + 1
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		e, err := parseLine(line)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s:%d: %v", file, n, err))
			continue
		}
		e.line = n
		a.entries = append(a.entries, e)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	if len(a.entries) == 0 {
		return nil, fmt.Errorf("%s lists no key: every commit would be refused", file)
	}
	return a, nil
}

func parseLine(line string) (entry, error) {
	var e entry
	if bytes.IndexByte([]byte(line), 0) >= 0 || strings.ContainsFunc(line, func(r rune) bool { return r < 0x20 && r != '\t' }) {
		return e, fmt.Errorf("holds a control character")
	}
	principals, rest, err := field(line)
	if err != nil {
		return e, err
	}
	if principals == "" || rest == "" {
		return e, fmt.Errorf("want: principals [options] keytype base64-key [comment]")
	}
	e.principals = principals
	key, _, options, _, err := ssh.ParseAuthorizedKey([]byte(rest))
	if err != nil {
		return e, fmt.Errorf("no key after the principals %q: %v", principals, err)
	}
	if _, ok := key.(*ssh.Certificate); ok {
		return e, fmt.Errorf("a certificate is listed in place of a key")
	}
	e.key = key
	for _, o := range options {
		name, value, hasValue := strings.Cut(o, "=")
		value = strings.Trim(value, `"`)
		switch strings.ToLower(name) {
		case "cert-authority":
			return e, fmt.Errorf("cert-authority is not supported: list the signing keys themselves")
		case "namespaces":
			if !hasValue || value == "" {
				return e, fmt.Errorf("namespaces needs a value, e.g. namespaces=\"git\"")
			}
			for _, ns := range strings.Split(value, ",") {
				e.namespaces = append(e.namespaces, strings.TrimSpace(ns))
			}
		case "valid-after", "valid-before":
			t, err := parseTime(value)
			if err != nil {
				return e, fmt.Errorf("%s: %v", name, err)
			}
			if strings.EqualFold(name, "valid-after") {
				e.validAfter = t
			} else {
				e.validBefore = t
			}
		default:
			return e, fmt.Errorf("unknown option %q (want namespaces, valid-after, valid-before)", name)
		}
	}
	if !e.validAfter.IsZero() && !e.validBefore.IsZero() && !e.validBefore.After(e.validAfter) {
		return e, fmt.Errorf("valid-before %s is not after valid-after %s", e.validBefore.Format(time.RFC3339), e.validAfter.Format(time.RFC3339))
	}
	return e, nil
}

// field splits off the first white-space separated field of s, which may
// be double-quoted.
func field(s string) (string, string, error) {
	if strings.HasPrefix(s, `"`) {
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return "", "", fmt.Errorf("unterminated quote in the principals")
		}
		return s[1 : end+1], strings.TrimSpace(s[end+2:]), nil
	}
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, "", nil
	}
	return s[:i], strings.TrimSpace(s[i+1:]), nil
}

// parseTime reads ssh-keygen's time stamps: YYYYMMDD, YYYYMMDDHHMM or
// YYYYMMDDHHMMSS, in UTC with a trailing Z and in local time without.
func parseTime(v string) (time.Time, error) {
	loc := time.Local
	if s, ok := strings.CutSuffix(v, "Z"); ok {
		v, loc = s, time.UTC
	}
	var layout string
	switch len(v) {
	case 8:
		layout = "20060102"
	case 12:
		layout = "200601021504"
	case 14:
		layout = "20060102150405"
	default:
		return time.Time{}, fmt.Errorf("%q is not YYYYMMDD[HHMM[SS]][Z]", v)
	}
	t, err := time.ParseInLocation(layout, v, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not YYYYMMDD[HHMM[SS]][Z]", v)
	}
	return t, nil
}

// allows reports whether the entry lets its key sign in namespace ns.
func (e entry) allows(ns string) bool {
	if e.namespaces == nil {
		return true
	}
	return matchList(e.namespaces, ns)
}

// matchList is OpenSSH's pattern list: * and ? wildcards, a leading !
// negates and a negated match wins.
func matchList(patterns []string, s string) bool {
	ok := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		if m, err := path.Match(p, s); err == nil && m {
			if neg {
				return false
			}
			ok = true
		}
	}
	return ok
}

// validity says whether the entry's key counts at t: "" when it does,
// else the reason it does not.
func (e entry) validity(t time.Time) Reason {
	if !e.validAfter.IsZero() && t.Before(e.validAfter) {
		return NotYetValid
	}
	if !e.validBefore.IsZero() && t.After(e.validBefore) {
		return Expired
	}
	return ""
}
