package generation

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/pkg/layout"
)

// Generation is one run that ended ok, as a rollback needs it.
type Generation struct {
	// Run is the run journal's id of the run that made it.
	Run    string    `json:"run"`
	Time   time.Time `json:"time"`
	Source string    `json:"source"`
	// Signer is who signed the commit the input came from, when checked.
	Signer *commitsig.Signer `json:"signer,omitempty"`
	// InputDigest and PlanDigest are the run journal's digests of the
	// input it applied and the plan it ran.
	InputDigest string `json:"inputDigest"`
	PlanDigest  string `json:"planDigest"`
	// Images maps each container (by unit file name, "web.container") to
	// the image it ran when the run ended.
	Images map[string]Image `json:"images"`
	// Input is the validated spec stream the run applied.
	Input []byte `json:"input"`
}

// Image is the image a container ran: its ID (what a rollback pins), the
// name it was started by and, for an image pulled from a registry, its
// manifest digest there (what the tag named when it was pulled).
type Image struct {
	ID     string `json:"id"`
	Name   string `json:"name,omitempty"`
	Digest string `json:"digest,omitempty"`
}

// Defaults of a Store's bounds.
const (
	DefaultKeep     = 5
	DefaultMaxBytes = 64 << 20
	// maxFile bounds one generation file when read: the input is bounded
	// by the spec input limit (16 MiB by default), a generation by a
	// little more.
	maxFile = 80 << 20
)

// fileKind is a generation file as syslet reads it: regular, no link
// followed, never a FIFO, at most maxFile bytes.
var fileKind = bounded.Kind{What: "a generation file", Max: maxFile}

// Store is the generations of a host under a root.
type Store struct {
	dir string
	// Keep is how many generations are kept (at least one).
	Keep int
	// MaxBytes bounds the files of all generations together; the newest
	// is kept whatever its size.
	MaxBytes int64
}

// Open returns the store under root ("/" on a host). Nothing is created
// until a generation is recorded.
func Open(root string) *Store {
	return &Store{dir: layout.Under(root, layout.Generations), Keep: DefaultKeep, MaxBytes: DefaultMaxBytes}
}

// fileName is where a generation lives: its time first, to the
// nanosecond (run ids sort by the second only), then its run.
func fileName(g Generation) string { return fmt.Sprintf("%020d-%s.json", g.Time.UnixNano(), g.Run) }

// runOf is the run a generation file name names, "" for any other name.
func runOf(name string) string {
	rest, ok := strings.CutSuffix(name, ".json")
	stamp, run, found := strings.Cut(rest, "-")
	if !ok || !found || len(stamp) != 20 || !validRun(run) || strings.Trim(stamp, "0123456789") != "" {
		return ""
	}
	return run
}

// Record stores g and drops what the bounds no longer hold.
func (s *Store) Record(g Generation) error {
	if !validRun(g.Run) {
		return fmt.Errorf("generation: bad run id %q", g.Run)
	}
	if g.Time.IsZero() {
		g.Time = time.Now()
	}
	data, err := json.Marshal(g)
	if err != nil {
		return fmt.Errorf("generation %s: %w", g.Run, err)
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("generations: %w", err)
	}
	if err := os.Chmod(s.dir, 0o700); err != nil {
		return fmt.Errorf("generations: %w", err)
	}
	if err := bounded.WriteState(filepath.Join(s.dir, fileName(g)), data, 0o600); err != nil {
		return fmt.Errorf("recording generation %s: %w", g.Run, err)
	}
	return s.prune()
}

// entries lists the generation files, oldest first, with their sizes.
func (s *Store) entries() ([]os.DirEntry, error) {
	ents, err := bounded.ReadDir(s.dir, "the generations directory", 10000)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("generations: %w", err)
	}
	ents = slices.DeleteFunc(ents, func(e os.DirEntry) bool {
		return runOf(e.Name()) == "" || !e.Type().IsRegular()
	})
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, nil
}

// prune drops the oldest generations past Keep, then past MaxBytes.
func (s *Store) prune() error {
	ents, err := s.entries()
	if err != nil {
		return err
	}
	keep := max(s.Keep, 1)
	var total int64
	cut := 0
	for i := len(ents) - 1; i >= 0; i-- {
		fi, err := ents[i].Info()
		if err != nil {
			continue
		}
		total += fi.Size()
		if len(ents)-i > keep || (s.MaxBytes > 0 && total > s.MaxBytes && i < len(ents)-1) {
			cut = i + 1
			break
		}
	}
	for _, e := range ents[:cut] {
		if err := os.Remove(filepath.Join(s.dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("generations: %w", err)
		}
	}
	return nil
}

// List returns the kept generations, oldest first. A file that cannot be
// read as a generation is skipped: one torn file must not hide the rest.
func (s *Store) List() ([]*Generation, error) {
	ents, err := s.entries()
	if err != nil {
		return nil, err
	}
	var out []*Generation
	for _, e := range ents {
		g, err := s.read(e.Name())
		if err != nil {
			continue
		}
		out = append(out, g)
	}
	return out, nil
}

// Latest returns the newest generation that can be read (as List skips a
// torn file, so does Latest); nil when there is none. It reads from the
// newest down and stops at the first: a converged run asks for it on
// every apply, and decoding every kept input for one was ~3 % of its CPU.
func (s *Store) Latest() (*Generation, error) {
	ents, err := s.entries()
	if err != nil {
		return nil, err
	}
	for i := len(ents) - 1; i >= 0; i-- {
		if g, err := s.read(ents[i].Name()); err == nil {
			return g, nil
		}
	}
	return nil, nil
}

// Find returns the generation of run (a unique prefix of at least 8
// characters will do).
func (s *Store) Find(run string) (*Generation, error) {
	gens, err := s.List()
	if err != nil {
		return nil, err
	}
	var found *Generation
	for _, g := range gens {
		if g.Run == run {
			return g, nil
		}
		if len(run) >= 8 && strings.HasPrefix(g.Run, run) {
			if found != nil {
				return nil, fmt.Errorf("%q names more than one generation", run)
			}
			found = g
		}
	}
	if found == nil {
		return nil, fmt.Errorf("no generation of run %q is kept", run)
	}
	return found, nil
}

// read reads one generation file: a regular file, no link followed,
// bounded.
func (s *Store) read(name string) (*Generation, error) {
	data, err := bounded.ReadFile(filepath.Join(s.dir, name), fileKind)
	if err != nil {
		return nil, err
	}
	var g Generation
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("generation %s: %w", name, err)
	}
	if runOf(name) != g.Run {
		return nil, fmt.Errorf("generation %s: names run %q", name, g.Run)
	}
	return &g, nil
}

// validRun reports whether s can be a run id and so a file name: letters,
// digits and dashes only.
func validRun(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '-' || '0' <= r && r <= '9' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z') {
			return false
		}
	}
	return true
}

// ImageIDs lists the image IDs the generations need: what syslet must
// never delete while they are kept.
func ImageIDs(gens []*Generation) map[string]bool {
	out := map[string]bool{}
	for _, g := range gens {
		for _, im := range g.Images {
			if im.ID != "" {
				out[im.ID] = true
			}
		}
	}
	return out
}
