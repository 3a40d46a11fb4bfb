package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/layout"
)

// Holder is what the apply lock records about the run holding it, so that
// a waiting run can say whom it waits for.
type Holder struct {
	PID    int       `json:"pid"`
	Since  time.Time `json:"since"`
	Source string    `json:"source"`
	Run    string    `json:"run,omitempty"`
}

func (h Holder) String() string {
	if h.PID == 0 {
		return "an unknown process"
	}
	if h.Since.IsZero() {
		return fmt.Sprintf("pid %d (source %s)", h.PID, h.Source)
	}
	return fmt.Sprintf("pid %d (source %s, since %s)", h.PID, h.Source, h.Since.Local().Format("15:04:05"))
}

// ErrLockTimeout is returned when the apply lock was not free in time.
var ErrLockTimeout = errors.New("apply lock not acquired")

// lock is a held apply lock: the lock file and the directory holding it,
// both flock(2)ed. The file alone is what earlier versions lock (so they
// and this one exclude each other) and holds the holder's record; the
// directory is what a waiting run still finds locked when the file was
// deleted by hand while held (a new file at the same path would be a
// second, free lock).
type lock struct{ f, dir *os.File }

// unlock clears the holder record and lets the lock go.
func (l *lock) unlock() {
	_ = l.f.Truncate(0)
	l.f.Close()
	l.dir.Close()
}

// record writes the holder into the lock file (for waiters to read).
func (l *lock) record(h Holder) {
	b, _ := json.Marshal(h)
	if err := l.f.Truncate(0); err == nil {
		_, _ = l.f.WriteAt(append(b, '\n'), 0)
	}
}

// lockPollInterval is how often a waiting run retries the lock: flock(2)
// cannot be interrupted by a context, so the wait polls instead of blocking.
const lockPollInterval = 100 * time.Millisecond

// acquire takes the apply lock: one apply at a time per host. A run that
// has to wait says for whom, once; it gives up when ctx ends, when stop is
// closed (a first SIGINT/SIGTERM), or after timeout (0: wait for ever).
// The lock file is taken first, then its directory, by every run: a run
// never holds the directory while it waits for a file.
func acquire(ctx context.Context, stop <-chan struct{}, root string, timeout time.Duration, me Holder, v view.Operation) (*lock, error) {
	p := layout.Under(root, layout.LockFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("creating lock directory: %w", err)
	}
	dir, err := openLockDir(filepath.Dir(p))
	if err != nil {
		return nil, fmt.Errorf("opening apply lock directory: %w", err)
	}
	f, err := openLock(p)
	if err != nil {
		dir.Close()
		return nil, fmt.Errorf("opening apply lock: %w", err)
	}
	give := func(err error) (*lock, error) {
		f.Close()
		dir.Close()
		return nil, err
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(lockPollInterval)
	defer tick.Stop()
	tries, haveFile := 0, false
	for {
		err := error(nil)
		if !haveFile {
			err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			haveFile = err == nil
		}
		if haveFile {
			if err = syscall.Flock(int(dir.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
				l := &lock{f: f, dir: dir}
				l.record(me)
				return l, nil
			}
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return give(fmt.Errorf("taking apply lock: %w", err))
		}
		holder := whoHolds(f, dir)
		// The first miss is not worth a word: a --diff probing the lock
		// holds it for microseconds.
		if tries++; tries == 2 {
			v.Waiting(holder.String())
		}
		select {
		case <-tick.C:
		case <-deadline:
			return give(fmt.Errorf("%w within %s: held by %s", ErrLockTimeout, timeout, holder))
		case <-stop:
			return give(fmt.Errorf("%w: interrupted while waiting for %s", ErrInterrupted, holder))
		case <-ctx.Done():
			return give(fmt.Errorf("%w: interrupted while waiting for %s: %w", ErrInterrupted, holder, ctx.Err()))
		}
	}
}

// lockKind is the apply lock as a file syslet reads: a regular file,
// never through a symlink, never a FIFO (an open of one would block, and
// a first SIGTERM could not end the wait).
var lockKind = bounded.Kind{What: "the apply lock"}

// openLock opens (creating) the lock file for locking and recording the
// holder: never through a symlink, never blocking on a FIFO, and only a
// regular file.
func openLock(p string) (*os.File, error) {
	return bounded.OpenState(p, 0, 0o644)
}

// openLockDir opens the lock's directory for its flock: only a directory,
// never blocking (a FIFO planted in its place would block a plain open).
func openLockDir(p string) (*os.File, error) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// whoHolds names the holder of the apply lock: from the lock file's
// record, and when that says nothing — the file was deleted while held and
// made again, and who has it locked now is a run waiting like this one —
// from the kernel's table of locks, as the process holding the directory.
func whoHolds(f, dir *os.File) Holder {
	if h := readHolder(f); h.PID != 0 {
		return h
	}
	if pid := flockHolder(dir); pid > 0 {
		return Holder{PID: pid, Source: "unknown: the lock file was deleted while it was held"}
	}
	return Holder{}
}

// flockHolder reads /proc/locks for the pid holding an exclusive flock on
// f's inode; 0 when it cannot tell.
func flockHolder(f *os.File) int {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return 0
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0
	}
	// "1: FLOCK  ADVISORY  WRITE 1234 00:1a:5678 0 EOF": major and minor
	// in hex, the inode in decimal.
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	for _, line := range strings.Split(string(b), "\n") {
		fs := strings.Fields(line)
		if len(fs) >= 6 && fs[1] == "FLOCK" && fs[3] == "WRITE" && fs[5] == id {
			if pid, err := strconv.Atoi(fs[4]); err == nil {
				return pid
			}
		}
	}
	return 0
}

func readHolder(f *os.File) Holder {
	var h Holder
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	_ = json.Unmarshal(b[:n], &h)
	return h
}

// held reports whether another process holds the apply lock right now,
// and who. It never waits. A lock file that is not a regular file (a FIFO,
// a symlink) is an error naming it: no apply can take that lock either.
func held(root string) (Holder, bool, error) {
	p := layout.Under(root, layout.LockFile)
	dir, err := openLockDir(filepath.Dir(p))
	if errors.Is(err, fs.ErrNotExist) {
		return Holder{}, false, nil
	}
	if err != nil {
		return Holder{}, false, fmt.Errorf("reading the apply lock: %w", err)
	}
	defer dir.Close()
	f, _, err := bounded.Open(p, lockKind)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f = nil
	case err != nil:
		return Holder{}, false, fmt.Errorf("reading the apply lock: %w", err)
	default:
		defer f.Close()
	}
	busy := f != nil && syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil
	if syscall.Flock(int(dir.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil {
		busy = true
	}
	if !busy {
		return Holder{}, false, nil
	}
	if f == nil {
		f = dir // no record to read: the kernel's table says who
	}
	return whoHolds(f, dir), true, nil
}
