package webhookd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/syslet/syslet/pkg/bounded"
)

// seenSet remembers the last max delivery ids, so a captured delivery
// cannot be replayed while its id is remembered. Memory is bounded: the
// oldest id is forgotten first. Replays of older deliveries still cannot
// move a host backwards: a commit older than the one applied is never
// deployed over it (see worker).
//
// With a file (openSeenSet) the ids also survive a restart: each new one
// is appended to it and fsynced before add returns, so a delivery
// accepted just before a crash is refused after it. The file holds the
// sha256 of each id, one per line, never the ids themselves; it is 0600
// and rewritten with only the remembered ids once it holds twice as many
// lines, so it stays bounded too.
type seenSet struct {
	mu   sync.Mutex
	max  int
	ids  map[[sha256.Size]byte]struct{}
	ring [][sha256.Size]byte
	next int

	file  string   // "" remembers in memory only
	f     *os.File // the file, open for appending
	lines int      // lines in the file
	// onError hears a failure to persist an id (the id is still
	// remembered until the daemon stops).
	onError func(error)
}

func newSeenSet(max int) *seenSet {
	return &seenSet{max: max, ids: make(map[[sha256.Size]byte]struct{}, max), ring: make([][sha256.Size]byte, 0, max)}
}

// seenLine is the length of one line of the file: a hex digest and a
// newline. openSeenSet reads at most the last 2*max+1 lines, so a file
// grown by other means costs no more.
const seenLine = 2*sha256.Size + 1

// openSeenSet is newSeenSet backed by file: the ids it holds are
// remembered again, and every new one is persisted.
func openSeenSet(max int, file string, onError func(error)) (*seenSet, error) {
	s := newSeenSet(max)
	s.file, s.onError = file, onError
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, fmt.Errorf("replay memory: %w", err)
	}
	f, err := openState(file)
	if err != nil {
		return nil, fmt.Errorf("replay memory: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("replay memory: %w", err)
	}
	s.f = f
	if err := s.load(); err != nil {
		f.Close()
		return nil, fmt.Errorf("replay memory %s: %w", file, err)
	}
	return s, nil
}

// load reads the file's ids, oldest first, keeping the last max (a torn
// last line from a crash is skipped).
func (s *seenSet) load() error {
	fi, err := s.f.Stat()
	if err != nil {
		return err
	}
	off := max(int64(0), fi.Size()-int64(2*s.max+1)*seenLine)
	b := make([]byte, fi.Size()-off)
	if _, err := s.f.ReadAt(b, off); err != nil && err != io.EOF {
		return err
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		var k [sha256.Size]byte
		if len(l) != 2*sha256.Size {
			continue
		}
		if _, err := hex.Decode(k[:], l); err != nil {
			continue
		}
		s.lines++
		s.remember(k)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		// A torn line: the next one starts on a line of its own.
		if _, err := s.f.Write([]byte("\n")); err != nil {
			return err
		}
	}
	return nil
}

// addAll records every one of ids — the several identities of one
// delivery (its id, its signed body) — and reports whether all were new;
// when one was seen, none is recorded. Each new one is persisted.
func (s *seenSet) addAll(ids ...string) bool {
	ks := make([][sha256.Size]byte, len(ids))
	for i, id := range ids {
		ks[i] = sha256.Sum256([]byte(id))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range ks {
		if _, ok := s.ids[k]; ok {
			return false
		}
	}
	for _, k := range ks {
		s.remember(k)
		if s.f != nil {
			if err := s.persist(k); err != nil && s.onError != nil {
				s.onError(fmt.Errorf("replay memory %s: %w", s.file, err))
			}
		}
	}
	return true
}

// remember adds k, forgetting the oldest id when full.
func (s *seenSet) remember(k [sha256.Size]byte) {
	if _, ok := s.ids[k]; ok {
		return
	}
	if len(s.ring) < s.max {
		s.ring = append(s.ring, k)
	} else {
		delete(s.ids, s.ring[s.next])
		s.ring[s.next] = k
		s.next = (s.next + 1) % s.max
	}
	s.ids[k] = struct{}{}
}

// persist appends k to the file and fsyncs it; past twice max lines the
// file is rewritten with the remembered ids only.
func (s *seenSet) persist(k [sha256.Size]byte) error {
	if s.lines+1 >= 2*s.max {
		return s.compact()
	}
	line := make([]byte, 0, seenLine)
	line = hex.AppendEncode(line, k[:])
	if _, err := s.f.Write(append(line, '\n')); err != nil {
		return err
	}
	s.lines++
	return s.f.Sync()
}

// compact replaces the file, atomically, with the remembered ids, oldest
// first.
func (s *seenSet) compact() error {
	var b bytes.Buffer
	for _, k := range append(append([][sha256.Size]byte{}, s.ring[s.next:]...), s.ring[:s.next]...) {
		b.WriteString(hex.EncodeToString(k[:]))
		b.WriteByte('\n')
	}
	if err := bounded.WriteState(s.file, b.Bytes(), 0o600); err != nil {
		return err
	}
	f, err := os.OpenFile(s.file, os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	s.f.Close()
	s.f, s.lines = f, len(s.ring)
	return nil
}

// openState opens (creating) the replay memory for reading and appending:
// webhookd's own state, so never through a symlink planted at its name and
// never blocking on a FIFO; only a regular file will do.
func openState(p string) (*os.File, error) {
	return bounded.OpenState(p, os.O_APPEND, 0o600)
}

// close releases the file.
func (s *seenSet) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}
