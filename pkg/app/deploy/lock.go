package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

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
	return fmt.Sprintf("pid %d (source %s, since %s)", h.PID, h.Source, h.Since.Local().Format("15:04:05"))
}

// ErrLockTimeout is returned when the apply lock was not free in time.
var ErrLockTimeout = errors.New("apply lock not acquired")

// lock is a held apply lock.
type lock struct{ f *os.File }

// release clears the holder record and unlocks.
func (l *lock) release() {
	_ = l.f.Truncate(0)
	l.f.Close()
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
func acquire(ctx context.Context, stop <-chan struct{}, root string, timeout time.Duration, me Holder, log io.Writer) (*lock, error) {
	p := layout.Under(root, layout.LockFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("creating lock directory: %w", err)
	}
	f, err := openLock(p)
	if err != nil {
		return nil, fmt.Errorf("opening apply lock: %w", err)
	}
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(lockPollInterval)
	defer tick.Stop()
	tries := 0
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			l := &lock{f: f}
			l.record(me)
			return l, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("taking apply lock: %w", err)
		}
		holder := readHolder(f)
		// The first miss is not worth a word: a --diff probing the lock
		// holds it for microseconds.
		if tries++; tries == 2 {
			view.Printf(log, "syslet: another apply is running: %s; waiting for it to finish\n", holder)
		}
		select {
		case <-tick.C:
		case <-deadline:
			f.Close()
			return nil, fmt.Errorf("%w within %s: held by %s", ErrLockTimeout, timeout, holder)
		case <-stop:
			f.Close()
			return nil, fmt.Errorf("%w: interrupted while waiting for %s", ErrInterrupted, holder)
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("%w: interrupted while waiting for %s: %w", ErrInterrupted, holder, ctx.Err())
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
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0o644)
	if errors.Is(err, syscall.ELOOP) {
		return nil, &bounded.NotRegularError{Path: p, Mode: fs.ModeSymlink}
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &bounded.NotRegularError{Path: p, Mode: fi.Mode()}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
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
	f, _, err := bounded.Open(layout.Under(root, layout.LockFile), lockKind)
	if errors.Is(err, fs.ErrNotExist) {
		return Holder{}, false, nil
	}
	if err != nil {
		return Holder{}, false, fmt.Errorf("reading the apply lock: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return readHolder(f), true, nil
	}
	return Holder{}, false, nil
}
