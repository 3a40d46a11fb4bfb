package runlog

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/syslet/syslet/pkg/backup"
	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/layout"
)

// DefaultMaxSize is the size past which the journal is rotated at the start
// of a run; one older generation is kept.
const DefaultMaxSize = 4 << 20

// Journal appends to the run journal under a root directory.
type Journal struct {
	path    string // the current file; the rotated one is path + ".1"
	MaxSize int64
	now     func() time.Time
}

// Open returns the journal under root ("/" on a host). Nothing is created
// until a run is started.
func Open(root string) *Journal {
	return &Journal{path: layout.Under(root, layout.Journal), MaxSize: DefaultMaxSize, now: time.Now}
}

// Path is the journal's current file.
func (j *Journal) Path() string { return j.path }

// NewRunID returns a sortable, unique run id: UTC time plus random bits.
func NewRunID(t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Run is one apply being recorded.
type Run struct {
	ID string
	f  *os.File
	j  *Journal
	// reserved says Begin preallocated room that End gives back.
	reserved bool
}

// Begin rotates the journal if it is too large, then writes and fsyncs the
// run's intent. The caller records each action with Action and closes the
// run with End.
//
// Before the intent it reserves room in the journal's file for every
// record the run can write (fallocate, keeping the file's size), so a disk
// that fills up during the apply cannot keep it from journalling what it
// did: a run that cannot have that room fails here, before any change.
// End gives back what was not used.
func (j *Journal) Begin(intent Record) (*Run, error) {
	r, err := j.open(&intent)
	if err != nil {
		return nil, err
	}
	if err := r.reserve(intent); err != nil {
		r.f.Close()
		return nil, err
	}
	if err := r.write(intent); err != nil {
		r.f.Close()
		return nil, err
	}
	return r, nil
}

// Room reserved for a run's records: the intent's line, one action line
// per action (its target, a generous error message), step and end lines.
const (
	reserveBase      = 16 << 10
	reservePerAction = 1 << 10
)

// reserve preallocates room for the run's records past the file's end. A
// filesystem that cannot preallocate is not an error: only a full one is.
func (r *Run) reserve(intent Record) error {
	line, err := json.Marshal(intent)
	if err != nil {
		return fmt.Errorf("encoding a journal line: %w", err)
	}
	n := int64(reserveBase + len(line))
	for _, a := range intent.Actions {
		n += int64(reservePerAction + len(a.Target))
	}
	fi, err := r.f.Stat()
	if err != nil {
		return fmt.Errorf("reserving room in the run journal %s: %w", r.j.path, err)
	}
	err = unix.Fallocate(int(r.f.Fd()), unix.FALLOC_FL_KEEP_SIZE, fi.Size(), n)
	switch {
	case err == nil:
		r.reserved = true
	case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS):
	default:
		return fmt.Errorf("reserving %d bytes for this run's records in the run journal %s: %w", n, r.j.path, err)
	}
	return nil
}

// unreserve gives back the room reserve took and the run did not use.
func (r *Run) unreserve() {
	if !r.reserved {
		return
	}
	// A truncate to the current size frees the blocks preallocated past
	// it (ext4, xfs, tmpfs).
	if fi, err := r.f.Stat(); err == nil {
		_ = r.f.Truncate(fi.Size())
	}
}

// open prepares the directory, rotates, opens the file for appending and
// stamps the intent.
func (j *Journal) open(intent *Record) (*Run, error) {
	if err := os.MkdirAll(filepath.Dir(j.path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the run journal directory: %w", err)
	}
	if err := os.Chmod(filepath.Dir(j.path), 0o700); err != nil {
		return nil, fmt.Errorf("securing the run journal directory: %w", err)
	}
	if fi, err := os.Lstat(j.Path()); err == nil && fi.Mode().IsRegular() && j.MaxSize > 0 && fi.Size() > j.MaxSize {
		if err := os.Rename(j.Path(), j.Path()+".1"); err != nil {
			return nil, fmt.Errorf("rotating the run journal: %w", err)
		}
	}
	// Never through a symlink (root would append to whatever it names),
	// never blocking on a FIFO planted there: only a regular file is the
	// journal.
	f, err := os.OpenFile(j.Path(), os.O_RDWR|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			err = &bounded.NotRegularError{Path: j.Path(), Mode: fs.ModeSymlink}
		}
		return nil, fmt.Errorf("opening the run journal: %w", err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = &bounded.NotRegularError{Path: j.Path(), Mode: fi.Mode()}
		}
		return nil, fmt.Errorf("opening the run journal: %w", err)
	}
	if err := endLine(f); err != nil {
		f.Close()
		return nil, err
	}
	if intent.Run == "" {
		intent.Run = NewRunID(j.now())
	}
	intent.Type = TypeIntent
	return &Run{ID: intent.Run, f: f, j: j}, nil
}

func (r *Run) write(recs ...Record) error {
	var b []byte
	for _, rec := range recs {
		rec.Run = r.ID
		if rec.Time.IsZero() {
			rec.Time = r.j.now().UTC()
		}
		line, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("encoding a journal line: %w", err)
		}
		b = append(append(b, line...), '\n')
	}
	if _, err := r.f.Write(b); err != nil {
		return fmt.Errorf("writing the run journal: %w", err)
	}
	if err := r.f.Sync(); err != nil {
		return fmt.Errorf("syncing the run journal: %w", err)
	}
	return nil
}

// endLine terminates a torn last line left by a crash mid-write, so the
// next record starts on a line of its own.
func endLine(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], fi.Size()-1); err != nil {
		return nil // opened write-only on some systems; the reader skips a glued line
	}
	if last[0] != '\n' {
		_, err = f.Write([]byte{'\n'})
	}
	return err
}

// Record writes a run that executed nothing — its intent and its end — in
// one write and one fsync.
func (j *Journal) Record(intent, end Record) (string, error) {
	r, err := j.open(&intent)
	if err != nil {
		return "", err
	}
	end.Type = TypeEnd
	err = r.write(intent, end)
	if cerr := r.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing the run journal: %w", cerr)
	}
	return r.ID, err
}

// Step records that a step begins.
func (r *Run) Step(step int) error { return r.write(Record{Type: TypeStep, Step: step}) }

// Landed is one action's result, for Actions.
type Landed struct {
	Action Action
	Result string
	Error  string
	Took   time.Duration
	// Backup is the export a volume's delete took first.
	Backup *backup.Entry
}

// Actions records actions' results, one line each, in one write and one
// fsync: the executor lands one action as it ends, or the file writes of a
// step together.
func (r *Run) Actions(ls []Landed) error {
	if len(ls) == 0 {
		return nil
	}
	recs := make([]Record, len(ls))
	for k, l := range ls {
		i := l.Action.Index
		recs[k] = Record{Type: TypeAction, Index: &i, Step: l.Action.Step, Op: l.Action.Op, Target: l.Action.Target,
			Result: l.Result, Error: l.Error, Millis: l.Took.Milliseconds(), Backup: l.Backup}
	}
	return r.write(recs...)
}

// End closes the run.
func (r *Run) End(rec Record) error {
	rec.Type = TypeEnd
	err := r.write(rec)
	r.unreserve()
	if cerr := r.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing the run journal: %w", cerr)
	}
	return err
}

// Close releases the file without closing the run (what a crash leaves).
func (r *Run) Close() error { return r.f.Close() }
