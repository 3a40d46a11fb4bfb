package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/syslet/syslet/pkg/host"
)

// MaxFileSize bounds what ReadTree reads of one file. Unit and config
// files are small by nature; a huge file planted in a managed tree is
// refused rather than read into memory.
const MaxFileSize = 64 << 20

// ReadTree reads every directory, regular file and symlink under the given
// host directories, without following any symlink: a link is reported
// with its target, never read through. Missing directories read as empty;
// a symlink on the way to one of them is an error naming it. Other file
// types (FIFOs, sockets, devices) are reported with their mode only and
// are never opened.
//
// The subdirectories of each tree (one per container under the config
// root) are walked side by side by a few workers, each into its own map,
// while the entries at the top (the unit files) are read by the caller:
// on a converged host reading the trees is the largest part of a run.
func (r Root) ReadTree(dirs ...string) (map[string]host.File, error) {
	out := map[string]host.File{}
	type entry struct {
		dirfd int
		dir   string // host path of dirfd
		e     fs.DirEntry
	}
	var top, subdirs []entry
	for _, d := range dirs {
		d = clean(d)
		fd, err := r.openDir(d, false)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", d, err)
		}
		defer unix.Close(fd)
		m, _ := fstat(fd)
		out[d] = host.File{Mode: m}
		ents, err := readEntries(fd)
		if err != nil {
			return nil, fmt.Errorf("reading %s: listing: %w", d, err)
		}
		for _, e := range ents {
			if e.IsDir() {
				subdirs = append(subdirs, entry{fd, d, e})
			} else {
				top = append(top, entry{fd, d, e})
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(subdirs))
	parts := make([]map[string]host.File, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		parts[w] = map[string]host.File{}
		wg.Go(func() {
			// Worker w takes every workers-th subdirectory: they are alike
			// (one per unit), so a fixed share balances well enough.
			for i := w; i < len(subdirs) && errs[w] == nil; i += workers {
				s := subdirs[i]
				if err := visit(s.dirfd, s.dir, s.e, parts[w]); err != nil {
					errs[w] = fmt.Errorf("reading %s: %w", s.dir, err)
				}
			}
		})
	}
	var topErr error
	for _, t := range top {
		if err := visit(t.dirfd, t.dir, t.e, out); err != nil {
			topErr = fmt.Errorf("reading %s: %w", t.dir, err)
			break
		}
	}
	wg.Wait()
	for _, err := range append([]error{topErr}, errs...) {
		if err != nil {
			return nil, err
		}
	}
	for _, part := range parts {
		maps.Copy(out, part)
	}
	return out, nil
}

func fstat(fd int) (fs.FileMode, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return fileMode(st.Mode), nil
}

// walk records everything inside the open directory dirfd (host path hp).
// The directory listing's entry types spare an lstat per entry: a regular
// file is opened without following a link and checked with fstat on the
// open descriptor (which also gives its mode and time), a directory is
// opened the same way, a link is read; only devices, FIFOs and sockets
// get an lstat. A converged run reads every managed file, so this is most
// of what it asks of the kernel.
func walk(dirfd int, hp string, out map[string]host.File) error {
	ents, err := readEntries(dirfd)
	if err != nil {
		return fmt.Errorf("listing %s: %w", hp, err)
	}
	for _, e := range ents {
		if err := visit(dirfd, hp, e, out); err != nil {
			return err
		}
	}
	return nil
}

// visit records one entry of the open directory dirfd (host path hp), and
// everything below it when it is a directory.
func visit(dirfd int, hp string, e fs.DirEntry, out map[string]host.File) error {
	n := e.Name()
	p := hp + "/" + n
	if hp == "/" {
		p = "/" + n
	}
	t := e.Type()
	if t&(fs.ModeSymlink|fs.ModeDir) == 0 && !t.IsRegular() {
		// A device, FIFO or socket: recorded with its mode, never
		// opened (or an entry replaced since the listing).
		m, err := lstatAt(dirfd, n)
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		if err != nil {
			return &fs.PathError{Op: "lstat", Path: p, Err: err}
		}
		if !m.IsRegular() && !m.IsDir() && m&fs.ModeSymlink == 0 {
			out[p] = host.File{Mode: m}
			return nil
		}
		t = m.Type()
	}
	switch {
	case t&fs.ModeSymlink != 0:
		l, err := readlinkAt(dirfd, n)
		if errors.Is(err, unix.ENOENT) {
			return nil // removed since the listing
		}
		if err != nil {
			return &fs.PathError{Op: "readlink", Path: p, Err: err}
		}
		out[p] = host.File{Mode: fs.ModeSymlink | 0o777, Link: l}
	case t.IsDir():
		cfd, err := openSub(dirfd, n)
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		if err != nil {
			return describe(dirfd, p, n, err)
		}
		defer unix.Close(cfd)
		m, err := fstat(cfd)
		if err != nil {
			return &fs.PathError{Op: "stat", Path: p, Err: err}
		}
		out[p] = host.File{Mode: m}
		return walk(cfd, p, out)
	default:
		f, err := readFileAt(dirfd, n, p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		out[p] = f
	}
	return nil
}

// readEntries lists a directory with the entry types the filesystem
// reports (no stat per entry), through a duplicate of dirfd so the
// caller's descriptor keeps its offset and stays open.
func readEntries(dirfd int) ([]fs.DirEntry, error) {
	dup, err := unix.Dup(dirfd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "dir")
	defer f.Close()
	return f.ReadDir(-1)
}

func readNames(dirfd int) ([]string, error) {
	ents, err := readEntries(dirfd)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names, nil
}

func readlinkAt(dirfd int, name string) (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// readFileAt reads a regular file without following a symlink and without
// blocking on a FIFO swapped in after the listing (O_NONBLOCK; the fstat
// on the open descriptor then refuses anything but a regular file). It
// returns the file with its mode and modification time. The read goes
// straight to the descriptor into a buffer of the file's size: no
// os.File, which would register the non-blocking descriptor with the
// runtime's poller and grow its buffer from 512 bytes.
func readFileAt(dirfd int, name, hp string) (host.File, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return host.File{}, &fs.PathError{Op: "open", Path: hp, Err: fs.ErrNotExist}
	}
	if err != nil {
		return host.File{}, describe(dirfd, hp, name, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || !fileMode(st.Mode).IsRegular() {
		return host.File{}, &fs.PathError{Op: "read", Path: hp, Err: fmt.Errorf("changed while being read")}
	}
	if st.Size > MaxFileSize {
		return host.File{}, &fs.PathError{Op: "read", Path: hp, Err: fmt.Errorf("larger than %d bytes", MaxFileSize)}
	}
	// One byte more than the size: a file that grew since the fstat is
	// read to its end (up to the limit), not cut.
	data := make([]byte, 0, st.Size+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := unix.Read(fd, data[len(data):cap(data)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return host.File{}, &fs.PathError{Op: "read", Path: hp, Err: err}
		}
		if n == 0 {
			break
		}
		data = data[:len(data)+n]
		if len(data) > MaxFileSize {
			return host.File{}, &fs.PathError{Op: "read", Path: hp, Err: fmt.Errorf("larger than %d bytes", MaxFileSize)}
		}
	}
	return host.File{Mode: fileMode(st.Mode), Data: data, ModTime: time.Unix(st.Mtim.Unix())}, nil
}
