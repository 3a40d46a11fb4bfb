package push

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyProblem says why a host key was refused.
type HostKeyProblem int

const (
	// KeyUnknown: no key of the host is known.
	KeyUnknown HostKeyProblem = iota
	// KeyChanged: the host is known with another key (or another key type).
	KeyChanged
	// KeyRevoked: the key is marked @revoked.
	KeyRevoked
)

// HostKeyError is a refused host key. It is returned from the key exchange,
// so the connection ends before any authentication is attempted.
type HostKeyError struct {
	Addr        string // host:port as dialed
	Problem     HostKeyProblem
	Type        string // the presented key's type, e.g. ssh-ed25519
	Fingerprint string // SHA256 fingerprint of the presented key
	Known       []knownhosts.KnownKey
	Files       []string // the known_hosts files consulted
}

func (e *HostKeyError) Error() string {
	switch e.Problem {
	case KeyChanged:
		var want []string
		for _, k := range e.Known {
			want = append(want, fmt.Sprintf("%s %s (%s:%d)", k.Key.Type(), ssh.FingerprintSHA256(k.Key), k.Filename, k.Line))
		}
		return fmt.Sprintf("host key of %s CHANGED: it presented %s %s, known_hosts has %s; refused before authenticating (if the host was reinstalled, remove the old line)",
			e.Addr, e.Type, e.Fingerprint, strings.Join(want, ", "))
	case KeyRevoked:
		return fmt.Sprintf("host key of %s is REVOKED: %s %s (%s:%d); refused before authenticating",
			e.Addr, e.Type, e.Fingerprint, e.Known[0].Filename, e.Known[0].Line)
	}
	return fmt.Sprintf("host key of %s is unknown: %s %s is not in %s; refused before authenticating (check the fingerprint on the host with `ssh-keygen -lf /etc/ssh/ssh_host_%s_key.pub`, then add it or push with --accept-new)",
		e.Addr, e.Type, e.Fingerprint, strings.Join(e.Files, ", "), keyFileName(e.Type))
}

func keyFileName(typ string) string {
	switch {
	case strings.Contains(typ, "ed25519"):
		return "ed25519"
	case strings.Contains(typ, "ecdsa"):
		return "ecdsa"
	case strings.Contains(typ, "rsa"):
		return "rsa"
	}
	return "*"
}

// HostKeys is the host key policy: known_hosts files, and whether a
// first-seen key may be pinned. It is safe for concurrent use; pins made
// by one connection are seen by the next.
type HostKeys struct {
	// Files are the known_hosts files, the first being where AcceptNew
	// appends. Missing files count as empty.
	Files []string
	// AcceptNew pins the key of a host that has none in Files (never a
	// changed key).
	AcceptNew bool
	// Pinned is called after a key was pinned (for a notice); may be nil.
	Pinned func(addr, typ, fingerprint, file string)

	mu sync.Mutex
}

// database reads the known_hosts files that exist.
func (k *HostKeys) database() (ssh.HostKeyCallback, error) {
	var existing []string
	for _, f := range k.Files {
		if _, err := os.Stat(f); err == nil {
			existing = append(existing, f)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("known_hosts: %w", err)
		}
	}
	cb, err := knownhosts.New(existing...)
	if err != nil {
		return nil, fmt.Errorf("reading known_hosts: %w", err)
	}
	return cb, nil
}

// Check is an ssh.HostKeyCallback. addr is the host:port dialed.
func (k *HostKeys) Check(addr string, remote net.Addr, key ssh.PublicKey) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	db, err := k.database()
	if err != nil {
		return err
	}
	err = db(addr, remote, key)
	if err == nil {
		return nil
	}
	herr := &HostKeyError{Addr: addr, Type: key.Type(), Fingerprint: ssh.FingerprintSHA256(key), Files: k.Files}
	var kerr *knownhosts.KeyError
	var rerr *knownhosts.RevokedError
	switch {
	case errors.As(err, &rerr):
		herr.Problem, herr.Known = KeyRevoked, []knownhosts.KnownKey{rerr.Revoked}
		return herr
	case errors.As(err, &kerr) && len(kerr.Want) > 0:
		herr.Problem, herr.Known = KeyChanged, kerr.Want
		return herr
	case errors.As(err, &kerr):
		if !k.AcceptNew || len(k.Files) == 0 {
			herr.Problem = KeyUnknown
			return herr
		}
		if err := k.pin(addr, key); err != nil {
			return err
		}
		if k.Pinned != nil {
			k.Pinned(addr, key.Type(), herr.Fingerprint, k.Files[0])
		}
		return nil
	}
	return fmt.Errorf("checking host key of %s: %w", addr, err)
}

// pin appends the key to the first known_hosts file (created 0600 with a
// 0700 directory if missing), in the hashed-less form ssh writes too.
func (k *HostKeys) pin(addr string, key ssh.PublicKey) error {
	f := k.Files[0]
	if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
		return fmt.Errorf("pinning host key: %w", err)
	}
	fh, err := os.OpenFile(f, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("pinning host key: %w", err)
	}
	line := knownhosts.Line([]string{addr}, key) + "\n"
	// A file whose last line lacks its newline would glue our line onto it.
	if fi, err := fh.Stat(); err == nil && fi.Size() > 0 {
		if last, err := lastByte(f); err == nil && last != '\n' {
			line = "\n" + line
		}
	}
	if _, err := fh.WriteString(line); err != nil {
		fh.Close()
		return fmt.Errorf("pinning host key in %s: %w", f, err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("pinning host key in %s: %w", f, err)
	}
	return nil
}

func lastByte(path string) (byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, fi.Size()-1); err != nil {
		return 0, err
	}
	return b[0], nil
}

// probeKey is a key no known_hosts line can hold: checking it makes
// knownhosts list every key it knows for an address.
type probeKey struct{}

func (probeKey) Type() string                        { return "syslet-probe@syslet" }
func (probeKey) Marshal() []byte                     { return []byte("syslet-probe") }
func (probeKey) Verify([]byte, *ssh.Signature) error { return errors.New("probe key") }

// firstSeen is the order of host key algorithms for a host known_hosts has
// no key of: ed25519 first, as ssh(1) does, so the key shown (and pinned
// by AcceptNew) is the one people compare fingerprints of.
var firstSeen = []string{
	ssh.KeyAlgoED25519,
	ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521,
	ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256,
}

// Algorithms returns the host key algorithms to offer for addr: those of
// the keys known_hosts has for it, so that a server with several keys
// presents the one we know rather than the one it prefers (which would
// look like a changed key). For an unknown host: firstSeen.
func (k *HostKeys) Algorithms(addr string) []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	db, err := k.database()
	if err != nil {
		return slices.Clone(firstSeen)
	}
	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	remote := &net.TCPAddr{IP: net.ParseIP(host), Port: port}
	if remote.IP == nil {
		remote.IP = net.IPv4zero
	}
	var kerr *knownhosts.KeyError
	if !errors.As(db(addr, remote, probeKey{}), &kerr) || len(kerr.Want) == 0 {
		return slices.Clone(firstSeen)
	}
	var algs []string
	seen := map[string]bool{}
	add := func(a ...string) {
		for _, s := range a {
			if !seen[s] {
				seen[s] = true
				algs = append(algs, s)
			}
		}
	}
	for _, w := range kerr.Want {
		switch t := w.Key.Type(); t {
		case ssh.KeyAlgoRSA:
			add(ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA)
		default:
			add(t)
		}
	}
	return algs
}
