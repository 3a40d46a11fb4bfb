package bounded

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/syslet/syslet/pkg/digest"
	"github.com/syslet/syslet/pkg/filemode"
)

// Kind is a kind of file syslet reads, with its cap.
type Kind struct {
	// What names the kind in messages: "a unit file", "the run journal".
	What string
	// Max is the most bytes of one such file syslet reads.
	Max int64
	// Follow allows a symlink at the file's own name: files at a path the
	// operator configured (the SSH host key, an age identity file). Never
	// set for syslet's own state or a managed tree.
	Follow bool

	dir *string // DirBeneath: resolve to a directory, and say which
}

// ErrLimit is matched by errors.Is for every *LimitError.
var ErrLimit = errors.New("over its cap")

// ErrNotRegular is matched by errors.Is for every *NotRegularError.
var ErrNotRegular = errors.New("not a regular file")

// LimitError is a file or a tree larger than its cap.
type LimitError struct {
	Path string // the file, or the top of the tree
	What string // the kind: "a unit file", "a managed tree"
	Cap  string // the cap as said: "16 MiB", "1 GiB of content in total"
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: larger than %s, the cap of %s", e.Path, e.Cap, e.What)
}

func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// NotRegularError is a path that syslet reads only as a regular file but
// that is a symlink, a FIFO, a device, a socket or a directory.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
	// Dir says a directory was expected.
	Dir bool
}

func (e *NotRegularError) Error() string {
	if e.Dir {
		return fmt.Sprintf("%s is %s, not a directory: syslet reads it only as a real directory, never through a symlink", e.Path, filemode.Describe(e.Mode))
	}
	return fmt.Sprintf("%s is %s, not a regular file: syslet reads it only as a regular file, never through a symlink", e.Path, filemode.Describe(e.Mode))
}

func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// Size spells a byte count for a cap: "16 MiB", "4096 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func tooLarge(path string, k Kind) error {
	return &LimitError{Path: path, What: k.What, Cap: Size(k.Max)}
}

const openFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC

// OpenAt opens dirfd/name (host path p, for messages) for reading: a
// regular file only, without following a symlink at name and without
// blocking on a FIFO. A missing file is an error matching fs.ErrNotExist.
func OpenAt(dirfd int, name, p string, k Kind) (int, unix.Stat_t, error) {
	flags := openFlags
	if !k.Follow {
		flags |= unix.O_NOFOLLOW
	}
	var st unix.Stat_t
	fd, err := retry(func() (int, error) { return unix.Openat(dirfd, name, flags, 0) })
	if err != nil {
		return -1, st, openError(dirfd, name, p, k.Follow, err)
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, st, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	if m := filemode.FromStat(st.Mode); !m.IsRegular() {
		unix.Close(fd)
		return -1, st, &NotRegularError{Path: p, Mode: m}
	}
	if k.Max > 0 && st.Size > k.Max {
		unix.Close(fd)
		return -1, st, tooLarge(p, k)
	}
	return fd, st, nil
}

// openError words a failed open: a symlink refused by O_NOFOLLOW, or a
// socket (which open refuses with ENXIO), is a *NotRegularError, a missing
// file matches fs.ErrNotExist.
func openError(dirfd int, name, p string, follow bool, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENXIO) {
		var st unix.Stat_t
		flags := unix.AT_SYMLINK_NOFOLLOW
		if follow && errors.Is(err, unix.ENXIO) {
			flags = 0
		}
		if unix.Fstatat(dirfd, name, &st, flags) == nil && !filemode.FromStat(st.Mode).IsRegular() {
			return &NotRegularError{Path: p, Mode: filemode.FromStat(st.Mode)}
		}
	}
	if errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return &fs.PathError{Op: "open", Path: p, Err: err}
}

func retry(f func() (int, error)) (int, error) {
	for {
		fd, err := f()
		if !errors.Is(err, unix.EINTR) {
			return fd, err
		}
	}
}

// Open opens path as OpenAt does, as an *os.File (blocking again: it is a
// regular file).
func Open(path string, k Kind) (*os.File, fs.FileInfo, error) {
	fd, _, err := OpenAt(unix.AT_FDCWD, path, path, k)
	if err != nil {
		return nil, nil, err
	}
	_ = unix.SetNonblock(fd, false)
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// ReadFile reads the regular file at path, at most k.Max bytes.
func ReadFile(path string, k Kind) ([]byte, error) {
	fd, st, err := OpenAt(unix.AT_FDCWD, path, path, k)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	return ReadFD(fd, path, st.Size, k)
}

// ReadFD reads an open regular file of the given size to its end, into a
// buffer of its size (one byte more, so a file that grew is read on, up
// to the cap), straight from the descriptor.
func ReadFD(fd int, p string, size int64, k Kind) ([]byte, error) {
	data := make([]byte, 0, size+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := unix.Read(fd, data[len(data):cap(data)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: p, Err: err}
		}
		if n == 0 {
			return data, nil
		}
		data = data[:len(data)+n]
		if k.Max > 0 && int64(len(data)) > k.Max {
			return nil, tooLarge(p, k)
		}
	}
}

// DigestFD streams an open regular file through sha256, at most k.Max
// bytes, and returns its digest and length: a file too large to keep in
// memory is compared by this, never read whole.
func DigestFD(fd int, p string, k Kind) (digest.Sum, int64, error) {
	h := sha256.New()
	buf := make([]byte, 256<<10)
	var n int64
	for {
		m, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return digest.Sum{}, 0, &fs.PathError{Op: "read", Path: p, Err: err}
		}
		if m == 0 {
			break
		}
		n += int64(m)
		if k.Max > 0 && n > k.Max {
			return digest.Sum{}, 0, tooLarge(p, k)
		}
		h.Write(buf[:m])
	}
	var s digest.Sum
	h.Sum(s[:0])
	return s, n, nil
}

// Budget is the total of one tree: how much content may be read from it
// (kept or streamed), how much of that may be kept in memory, and how many
// entries it may hold. It is safe for concurrent use: a tree's
// subdirectories are read side by side.
type Budget struct {
	Tree string // the top of the tree, for messages
	What string // "a managed tree", "a build context"

	maxRead, maxKept, maxEntries int64
	read, kept, entries          atomic.Int64
}

// NewBudget returns the budget of the tree at top: at most read bytes of
// content read, kept bytes of it held in memory, entries entries.
func NewBudget(top, what string, read, kept, entries int64) *Budget {
	return &Budget{Tree: top, What: what, maxRead: read, maxKept: kept, maxEntries: entries}
}

// Entry counts one entry of the tree.
func (b *Budget) Entry() error {
	if b.entries.Add(1) > b.maxEntries {
		return &LimitError{Path: b.Tree, What: b.What, Cap: fmt.Sprintf("%d entries", b.maxEntries)}
	}
	return nil
}

// Read counts n bytes read and streamed (not kept).
func (b *Budget) Read(n int64) error {
	if b.read.Add(n) > b.maxRead {
		return &LimitError{Path: b.Tree, What: b.What, Cap: Size(b.maxRead) + " of content in total"}
	}
	return nil
}

// Keep counts n bytes read and kept in memory.
func (b *Budget) Keep(n int64) error {
	if err := b.Read(n); err != nil {
		return err
	}
	if b.kept.Add(n) > b.maxKept {
		return &LimitError{Path: b.Tree, What: b.What, Cap: Size(b.maxKept) + " of content held in memory"}
	}
	return nil
}

// FileLines calls fn with each line of the open file f (of the given
// size) that lies in its last tail bytes, without its newline and
// surrounding white space, blank lines skipped; a partial first line of
// the tail is skipped too. A line longer than max is skipped without ever
// being held: lines are found by scanning, and a line spanning reads is
// read again, whole, only once its end shows it within the bound. It
// returns how many lines were skipped for their length. fn must not keep
// the slice.
func FileLines(f *os.File, size, tail int64, max int, fn func(line []byte)) (skipped int, err error) {
	from := max64(0, size-tail)
	skipFirst := false
	if from > 0 {
		var b [1]byte
		if _, err := f.ReadAt(b[:], from-1); err != nil {
			return 0, err
		}
		skipFirst = b[0] != '\n'
	}
	emit := func(line []byte) {
		if skipFirst {
			skipFirst = false
			return
		}
		if l := bytes.TrimSpace(line); len(l) > 0 {
			fn(l)
		}
	}
	// whole emits the line [start, end) that spans reads, or skips it.
	whole := func(start, end int64) error {
		if end-start > int64(max) {
			skipped++
			skipFirst = false
			return nil
		}
		line := make([]byte, end-start)
		if _, err := f.ReadAt(line, start); err != nil {
			return err
		}
		emit(line)
		return nil
	}
	buf := make([]byte, 256<<10)
	start := from // offset of the line being scanned
	off := from
	for off < size {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if n == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				size = off // the file shrank
				break
			}
			return skipped, err
		}
		chunk := buf[:n]
		for {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				break
			}
			end := off + int64(n-len(chunk)+i) // offset of this newline
			if start >= off {
				if end-start > int64(max) {
					skipped++
					skipFirst = false
				} else {
					emit(buf[start-off : end-off])
				}
			} else if err := whole(start, end); err != nil {
				return skipped, err
			}
			chunk = chunk[i+1:]
			start = end + 1
		}
		off += int64(n)
	}
	if size > start {
		if err := whole(start, size); err != nil {
			return skipped, err
		}
	}
	return skipped, nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// ReadDir lists the directory at path without following a symlink at its
// name and without blocking on a FIFO there (O_DIRECTORY refuses it); a
// missing directory matches fs.ErrNotExist. At most max entries are
// listed (max <= 0: no bound); more is a *LimitError.
func ReadDir(path, what string, max int) ([]fs.DirEntry, error) {
	fd, err := retry(func() (int, error) {
		return unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			var st unix.Stat_t
			if unix.Lstat(path, &st) == nil {
				return nil, &NotRegularError{Path: path, Mode: filemode.FromStat(st.Mode), Dir: true}
			}
		}
		if errors.Is(err, unix.ENOENT) {
			return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	n := -1
	if max > 0 {
		n = max + 1
	}
	ents, err := f.ReadDir(n)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if max > 0 && len(ents) > max {
		return nil, &LimitError{Path: path, What: what, Cap: fmt.Sprintf("%d entries", max)}
	}
	return ents, nil
}
