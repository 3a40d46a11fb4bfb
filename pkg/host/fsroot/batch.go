package fsroot

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/layout"
)

// Batch writes many files and config dirs under the root, each as
// WriteFile and WriteDir do (never through a symlink; a file that exists
// is replaced atomically, by a rename) but without syncing each: Close
// syncs the root's filesystem once. It is for `syslet render --out`,
// which writes a whole host's tree for inspection, where a sync per file
// (two, with its directory's) cost minutes for a hundred thousand units.
// A new file or config dir is created in place (O_EXCL and mkdir, so
// nothing is ever overwritten that way), and one that already holds what
// it would get is left alone; an apply writes through WriteFile and
// WriteDir.
type Batch struct {
	r    Root
	dirs *dirCache
}

// NewBatch starts a batch of writes under r.
func (r Root) NewBatch() *Batch { return &Batch{r: r, dirs: r.dirs(true)} }

// WriteFile is Root.WriteFile without the syncs.
func (b *Batch) WriteFile(p string, data []byte, mode uint32) error {
	dir, base := split(p)
	fd, err := b.dirs.open(dir)
	if err == nil {
		err = createAt(fd, base, data, fs.FileMode(mode))
		if errors.Is(err, unix.EEXIST) {
			err = b.replace(fd, p, base, data, mode)
		}
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", clean(p), err)
	}
	return nil
}

// replace deals with a file that is there already (a tree rendered
// before): left alone when it holds data with mode already, else swapped
// for data by a temporary file renamed over it, atomic, synced with the
// rest at Close. Anything else in the way (a directory, a symlink) is
// handled as an apply handles it, prepared and synced, or named as an error.
func (b *Batch) replace(dirfd int, p, base string, data []byte, mode uint32) error {
	same, regular := holds(dirfd, base, p, data, mode)
	if !regular {
		return b.r.WriteFile(p, data, mode)
	}
	if same {
		return nil
	}
	tmp := tempName(layout.TempPrefix)
	if err := createAt(dirfd, tmp, data, fs.FileMode(mode)); err != nil {
		return err
	}
	// rename(2) replaces the name itself: a link planted since the check
	// is replaced, never followed.
	if err := unix.Renameat(dirfd, tmp, dirfd, base); err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return err
	}
	return nil
}

// holds reports whether dirfd/name is a regular file (no link followed,
// no FIFO blocked on) holding exactly data with mode, and whether it is a
// regular file at all.
func holds(dirfd int, name, p string, data []byte, mode uint32) (same, regular bool) {
	fd, st, err := bounded.OpenAt(dirfd, name, p, bounded.Kind{What: "a file"})
	if err != nil {
		return false, false
	}
	defer unix.Close(fd)
	if st.Size != int64(len(data)) || st.Mode&0o7777 != mode&0o7777 {
		return false, true
	}
	got, err := bounded.ReadFD(fd, p, st.Size, bounded.Kind{What: "a file", Max: st.Size})
	return err == nil && bytes.Equal(got, data), true
}

// createAt writes a new file dirfd/name: EEXIST when something is there.
func createAt(dirfd int, name string, data []byte, mode fs.FileMode) error {
	// Created with its mode when the umask leaves that mode as it is (the
	// usual 022 and a 0644 or 0600 file): a render writes a hundred
	// thousand of these, and a chmod each was a fifth of their system
	// calls. Otherwise it is created private and given its mode once
	// written: never readable by more than its mode says, even briefly.
	perm := uint32(mode.Perm())
	exact := perm&umask() == 0
	create := perm
	if !exact {
		create = 0o600
	}
	fd, err := unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, create)
	if err != nil {
		return err
	}
	// The descriptor is used as is, not as an *os.File: a render writes a
	// hundred thousand of these, and os.NewFile costs a system call and a
	// finalizer each.
	err = writeAll(fd, data)
	if err == nil && !exact {
		err = unix.Fchmod(fd, perm)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		unix.Unlinkat(dirfd, name, 0)
		if errors.Is(err, unix.EEXIST) {
			err = fmt.Errorf("writing: %w", err) // not "exists": it was ours
		}
	}
	return err
}

// umask is the process's file mode creation mask, read once from
// /proc/self/status (syslet never sets it): umask(2) can only be read by
// setting it, which would change it under the other threads' feet.
// Unknown, it is taken to strip every bit, so that each file gets its mode
// by fchmod. A variable, for the test that sets another.
var umask = sync.OnceValue(func() uint32 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0o777
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "Umask:"); ok {
			if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return uint32(m)
			}
		}
	}
	return 0o777
})

// writeAll writes data to fd, as many writes as it takes.
func writeAll(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// Close syncs what the batch wrote: the filesystem of the root, once.
func (b *Batch) Close() error {
	b.dirs.close()
	fd, err := unix.Open(b.r.Dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: b.r.Dir, Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return &fs.PathError{Op: "syncfs", Path: b.r.Dir, Err: err}
	}
	return nil
}
