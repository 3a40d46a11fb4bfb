package commitsig

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"time"

	"golang.org/x/crypto/ssh"
)

// Caps on what is read of a commit before it is trusted. A commit's
// headers and message stay far below MaxCommit; an SSH signature by the
// largest RSA key is a few KiB.
const (
	MaxCommit    = 1 << 20
	MaxSignature = 64 << 10
)

// ReadCommit reads a commit object's bytes from its reader (as a git
// library opens it), at most one byte past MaxCommit: enough for Screen
// and Verify to refuse a larger one without reading it all. It closes the
// reader.
func ReadCommit(rd io.ReadCloser, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(io.LimitReader(rd, MaxCommit+1))
}

// Signer is who signed a commit that was accepted.
type Signer struct {
	// Principal is the allowed-signers line's principals, as written.
	Principal string `json:"principal"`
	// Fingerprint is the key's SHA256 fingerprint (ssh-keygen -l).
	Fingerprint string `json:"fingerprint"`
	KeyType     string `json:"keyType"`
	// Line is the allowed-signers line that admitted the key.
	Line int `json:"line"`
}

func (s Signer) String() string {
	return fmt.Sprintf("%s (%s %s)", s.Principal, s.KeyType, s.Fingerprint)
}

// Trust is what a commit that deploys may be signed by: the SSH keys of
// an allowed-signers file, the OpenPGP keys of a keyring, or both.
type Trust struct {
	SSH *AllowedSigners
	PGP *Keyring
}

// IsZero reports whether nothing is trusted (no check is asked for).
func (t Trust) IsZero() bool { return t.SSH == nil && t.PGP == nil }

// Files names the files the trust comes from, for messages.
func (t Trust) Files() string {
	switch {
	case t.SSH != nil && t.PGP != nil:
		return t.SSH.File + " and " + t.PGP.File
	case t.SSH != nil:
		return t.SSH.File
	case t.PGP != nil:
		return t.PGP.File
	}
	return "(nothing)"
}

// Verify checks the raw commit object (without git's "commit <size>\0"
// header) named commit against the allowed signers at now. It returns
// the signer, or a *RefusedError.
func (a *AllowedSigners) Verify(commit string, raw []byte, now time.Time) (Signer, error) {
	return Trust{SSH: a}.Verify(commit, raw, now)
}

// Verify checks the raw commit object (without git's "commit <size>\0"
// header) named commit: its signature, SSH or OpenPGP, must be good and
// by a key trusted for it at the commit's date and now. It returns the
// signer, or a *RefusedError.
func (t Trust) Verify(commit string, raw []byte, now time.Time) (Signer, error) {
	s, rerr := t.verify(raw, now)
	if rerr != nil {
		rerr.Commit = commit
		return Signer{}, rerr
	}
	return s, nil
}

// Screen refuses a commit object that is unsafe to hand to a general
// parser (go-git decodes a signature header line by line with string
// concatenation: a multi-megabyte one takes hours): over MaxCommit, a NUL,
// or a signature header over MaxSignature. It is a *RefusedError (bad
// signature) naming commit.
func Screen(commit string, raw []byte) error {
	if rerr := screen(raw); rerr != nil {
		rerr.Commit = commit
		return rerr
	}
	return nil
}

func screen(raw []byte) *RefusedError {
	if len(raw) > MaxCommit {
		return refuse(BadSignature, "the commit object is over the cap of %d bytes: not read", MaxCommit)
	}
	if bytes.IndexByte(raw, 0) >= 0 {
		return refuse(BadSignature, "the commit object holds a NUL byte")
	}
	_, sig, rerr := split(raw)
	if rerr != nil {
		return rerr
	}
	if len(sig) > MaxSignature {
		return refuse(BadSignature, "the signature block is %d bytes, over the cap of %d", len(sig), MaxSignature)
	}
	return nil
}

func (t Trust) verify(raw []byte, now time.Time) (Signer, *RefusedError) {
	if len(raw) > MaxCommit {
		return Signer{}, refuse(BadSignature, "the commit object is over the cap of %d bytes: not read", MaxCommit)
	}
	if bytes.IndexByte(raw, 0) >= 0 {
		return Signer{}, refuse(BadSignature, "the commit object holds a NUL byte")
	}
	payload, sig, rerr := split(raw)
	if rerr != nil {
		return Signer{}, rerr
	}
	if sig == nil {
		return Signer{}, refuse(Unsigned, "the commit carries no signature")
	}
	if len(sig) > MaxSignature {
		return Signer{}, refuse(BadSignature, "the signature block is %d bytes, over the cap of %d", len(sig), MaxSignature)
	}
	when, rerr := committerTime(payload)
	if rerr != nil {
		return Signer{}, rerr
	}
	switch {
	case bytes.HasPrefix(sig, []byte(armorBegin)):
		if t.SSH == nil {
			return Signer{}, refuse(UnknownKey, "the commit has an SSH signature; only OpenPGP keys are trusted (%s), no allowed-signers file", t.Files())
		}
		pub, rerr := verifySSHSIG(sig, payload, Namespace)
		if rerr != nil {
			return Signer{}, rerr
		}
		return t.SSH.admit(pub, when, now)
	case bytes.HasPrefix(sig, []byte(pgpSigBegin)):
		if t.PGP == nil {
			return Signer{}, refuse(UnknownKey, "the commit has an OpenPGP signature; only SSH keys are trusted (%s), no OpenPGP keyring", t.Files())
		}
		return t.PGP.verify(sig, payload, when, now)
	case bytes.HasPrefix(sig, []byte("-----BEGIN SIGNED MESSAGE-----")):
		return Signer{}, refuse(UnknownKey, "the commit has an X.509 signature; only SSH and OpenPGP signatures are checked, against %s", t.Files())
	}
	return Signer{}, refuse(BadSignature, "the signature is not armored: want %s or %s", armorBegin, pgpSigBegin)
}

// admit finds the key among the allowed signers for the namespace "git"
// and checks that it counts at the commit's date and now.
func (a *AllowedSigners) admit(pub ssh.PublicKey, when, now time.Time) (Signer, *RefusedError) {
	fp := ssh.FingerprintSHA256(pub)
	want := pub.Marshal()
	var invalid *RefusedError
	listed := false
	for _, e := range a.entries {
		if !bytes.Equal(e.key.Marshal(), want) {
			continue
		}
		listed = true
		if !e.allows(Namespace) {
			continue
		}
		if r := e.validity(when); r != "" {
			invalid = refuse(r, "%s key %s of %s (%s:%d) %s at the commit's date %s", pub.Type(), fp, e.principals, a.File, e.line, validityText(r), when.UTC().Format(time.RFC3339))
			continue
		}
		if r := e.validity(now); r != "" {
			invalid = refuse(r, "%s key %s of %s (%s:%d) %s now", pub.Type(), fp, e.principals, a.File, e.line, validityText(r))
			continue
		}
		return Signer{Principal: e.principals, Fingerprint: fp, KeyType: pub.Type(), Line: e.line}, nil
	}
	if invalid != nil {
		return Signer{}, invalid
	}
	if listed {
		return Signer{}, refuse(UnknownKey, "%s key %s is in %s but not for the namespace %q", pub.Type(), fp, a.File, Namespace)
	}
	return Signer{}, refuse(UnknownKey, "signed by %s key %s, which %s does not list", pub.Type(), fp, a.File)
}

func validityText(r Reason) string {
	if r == NotYetValid {
		return "is not valid yet"
	}
	return "is no longer valid"
}

// split separates a commit object into the payload git signs (the object
// without any gpgsig* header) and the gpgsig header's value (nil when
// there is none), as git's parse_buffer_signed_by_header does. Only the
// headers before the first empty line are looked at; a second gpgsig
// header is refused.
func split(raw []byte) (payload, sig []byte, _ *RefusedError) {
	payload = make([]byte, 0, len(raw))
	in, other := false, false // inside our signature header, inside another signature header
	rest := raw
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		rest = rest[len(line):]
		switch {
		case len(line) == 1 && line[0] == '\n':
			// The end of the headers: the message is payload as it is.
			payload = append(payload, line...)
			payload = append(payload, rest...)
			return payload, sig, nil
		case line[0] == ' ' && in:
			sig = append(sig, line[1:]...)
			if len(sig) > MaxSignature {
				return nil, nil, refuse(BadSignature, "the signature block is over the cap of %d bytes", MaxSignature)
			}
			continue
		case line[0] == ' ' && other:
			continue
		case bytes.HasPrefix(line, []byte("gpgsig ")):
			if sig != nil {
				return nil, nil, refuse(BadSignature, "the commit has more than one gpgsig header")
			}
			in, other = true, false
			sig = append([]byte{}, line[len("gpgsig "):]...)
			continue
		case bytes.HasPrefix(line, []byte("gpgsig")):
			in, other = false, true
			continue
		}
		in, other = false, false
		payload = append(payload, line...)
	}
	return payload, sig, nil
}

// committerTime reads the committer's date from the commit's headers:
// "committer NAME <EMAIL> UNIX-SECONDS ZONE".
func committerTime(payload []byte) (time.Time, *RefusedError) {
	for _, line := range bytes.Split(payload, []byte("\n")) {
		if len(line) == 0 {
			break
		}
		rest, ok := bytes.CutPrefix(line, []byte("committer "))
		if !ok {
			continue
		}
		gt := bytes.LastIndexByte(rest, '>')
		if gt >= 0 {
			f := bytes.Fields(rest[gt+1:])
			if len(f) == 2 {
				if secs, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
					return time.Unix(secs, 0), nil
				}
			}
		}
		return time.Time{}, refuse(BadSignature, "the commit's committer line has no readable date")
	}
	return time.Time{}, refuse(BadSignature, "the commit has no committer")
}
