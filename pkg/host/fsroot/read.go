package fsroot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/filemode"
	"github.com/syslet/syslet/pkg/gcpolicy"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
)

// The bounds of reading a tree (pkg/bounded). A unit file — a file at the
// top of the unit directory — is read whole up to MaxFileSize, or refused.
// Any other file (a config or build-context file, a config dir's file) is
// kept in memory up to the tree's KeepFile and compared beyond that by its
// streamed sha256 (host.File.Streamed): syslet's own content comes from spec
// input, which is bounded anyway, so a larger file is only ever
// "different". Each tree (each directory ReadTree is given) holds at most
// TreeLimits in all.
const MaxFileSize = 16 << 20

// Limits bound one tree: its content read in all (kept or streamed), the
// part of it held in memory, its entries, and what of one file is kept.
type Limits struct {
	What                string // the kind of tree, for messages
	Read, Kept, Entries int64
	// KeepFile is the largest file kept in memory; a larger one is
	// digested. Zero: every file is kept, and one larger than Kept is
	// refused.
	KeepFile int64
}

// TreeLimits are the bounds of each tree syslet manages: far above any
// host's (a hundred thousand units make a few hundred thousand entries
// and tens of megabytes of content), far below what would exhaust memory
// or take long to read.
var TreeLimits = Limits{What: "a managed tree", Read: 512 << 20, Kept: 128 << 20, Entries: 2_000_000, KeepFile: 1 << 20}

var unitKind = bounded.Kind{What: "a unit file", Max: MaxFileSize}

// ReadTree reads every directory, regular file and symlink under the given
// host directories, without following any symlink: a link is reported
// with its target, never read through. Missing directories read as empty;
// a symlink on the way to one of them is an error naming it. Other file
// types (FIFOs, sockets, devices) are reported with their mode only and
// are never opened. Each directory is bounded by TreeLimits.
//
// The entries of each tree (the unit files at the top of the unit
// directory, a directory per container under the config root) are read
// side by side by a few workers: on a converged host reading the trees is
// the largest part of a run.
func (r Root) ReadTree(dirs ...string) (map[string]host.File, error) {
	return r.ReadTreeWithin(TreeLimits, dirs...)
}

// ReadTreeWithin is ReadTree with other bounds for each directory (adopt
// reads a build context, bounded as a spec's input is).
func (r Root) ReadTreeWithin(l Limits, dirs ...string) (map[string]host.File, error) {
	out := map[string]host.File{}
	type entry struct {
		dirfd int
		dir   string // host path of dirfd
		e     fs.DirEntry
		b     *bounded.Budget
	}
	var top, subdirs []entry
	// Errors that already name the tree (a cap) are not wrapped again.
	wrap := func(d string, err error) error {
		var le *bounded.LimitError
		if errors.As(err, &le) {
			return err
		}
		return fmt.Errorf("reading %s: %w", d, err)
	}
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
		b := bounded.NewBudget(d, l.What, l.Read, l.Kept, l.Entries)
		ents, err := readEntries(fd, b)
		if err != nil {
			return nil, wrap(d, err)
		}
		for _, e := range ents {
			if e.IsDir() {
				subdirs = append(subdirs, entry{fd, d, e, b})
			} else {
				top = append(top, entry{fd, d, e, b})
			}
		}
	}
	// The unit files at the top come first, then the subdirectories, all
	// shared out among a few workers, each into its own map: reading a
	// file is a few system calls, and a hundred thousand unit files read
	// one after the other were most of a converged run's time. Of the
	// errors met, the one of the earliest entry is reported.
	items := append(top, subdirs...)
	workers := min(runtime.GOMAXPROCS(0), len(items))
	parts := make([]map[string]host.File, workers)
	type failure struct {
		at  int
		err error
	}
	fails := make([]failure, workers)
	var failed atomic.Bool // one worker's error stops the others
	var wg sync.WaitGroup
	for w := range workers {
		parts[w] = make(map[string]host.File, len(top)/workers) // the files at the top at least
		wg.Go(func() {
			// Worker w takes every workers-th entry: they are alike (a
			// unit file each, or a directory per unit), so a fixed share
			// balances well enough.
			for i := w; i < len(items) && !failed.Load(); i += workers {
				it := items[i]
				if err := visit(it.dirfd, it.dir, it.e, parts[w], it.b, l); err != nil {
					fails[w] = failure{i, wrap(it.dir, err)}
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	first := failure{at: len(items)}
	for _, f := range fails {
		if f.err != nil && f.at < first.at {
			first = f
		}
	}
	if first.err != nil {
		return nil, first.err
	}
	n := len(out)
	for _, part := range parts {
		n += len(part)
	}
	all := make(map[string]host.File, n)
	maps.Copy(all, out)
	for _, part := range parts {
		maps.Copy(all, part)
	}
	return all, nil
}

func fstat(fd int) (fs.FileMode, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return filemode.FromStat(st.Mode), nil
}

// walk records everything inside the open directory dirfd (host path hp).
// The directory listing's entry types spare an lstat per entry: a regular
// file is opened without following a link and checked with fstat on the
// open descriptor (which also gives its mode and time), a directory is
// opened the same way, a link is read; only devices, FIFOs and sockets
// get an lstat. A converged run reads every managed file, so this is most
// of what it asks of the kernel.
func walk(dirfd int, hp string, out map[string]host.File, b *bounded.Budget, l Limits) error {
	ents, err := readEntries(dirfd, b)
	if err != nil {
		var le *bounded.LimitError
		if errors.As(err, &le) {
			return err
		}
		return fmt.Errorf("listing %s: %w", hp, err)
	}
	for _, e := range ents {
		if err := visit(dirfd, hp, e, out, b, l); err != nil {
			return err
		}
	}
	return nil
}

// visit records one entry of the open directory dirfd (host path hp), and
// everything below it when it is a directory.
func visit(dirfd int, hp string, e fs.DirEntry, out map[string]host.File, b *bounded.Budget, l Limits) error {
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
			record(out, p, host.File{Mode: m})
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
		record(out, p, host.File{Mode: fs.ModeSymlink | 0o777, Link: l})
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
		record(out, p, host.File{Mode: m})
		return walk(cfd, p, out, b, l)
	default:
		f, err := readFileAt(dirfd, n, p, b, l, hp == layout.UnitDir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		record(out, p, f)
	}
	return nil
}

// record keeps what was read at p, and tells the CLI's collector what it
// weighs in memory (gcpolicy.ExpectHost) as the tree is read, not after:
// a run reads the host while it still checks its specs, and a limit that
// learns of a hundred thousand installed units only once they are all
// read has the collector running without end meanwhile.
func record(out map[string]host.File, p string, f host.File) {
	out[p] = f
	// Told a MiB at a time.
	if n := read.Add(f.Weight(p)); n >= 1<<20 && read.CompareAndSwap(n, 0) {
		gcpolicy.ExpectHost(n)
	}
}

// read is what record was given and has not yet told the collector.
var read atomic.Int64

// readEntries lists a directory with the entry types the filesystem
// reports (no stat per entry), through a duplicate of dirfd so the
// caller's descriptor keeps its offset and stays open. Each entry counts
// against the tree's budget (nil: none), listed in batches so a directory
// of millions of entries is refused before it is held.
func readEntries(dirfd int, b *bounded.Budget) ([]fs.DirEntry, error) {
	dup, err := unix.Dup(dirfd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "dir")
	defer f.Close()
	if b == nil {
		return f.ReadDir(-1)
	}
	var all []fs.DirEntry
	for {
		ents, err := f.ReadDir(4096)
		for range ents {
			if err := b.Entry(); err != nil {
				return nil, err
			}
		}
		all = append(all, ents...)
		if errors.Is(err, io.EOF) {
			return all, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func readNames(dirfd int) ([]string, error) {
	ents, err := readEntries(dirfd, nil)
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
// blocking on a FIFO swapped in after the listing (pkg/bounded; the fstat
// on the open descriptor then refuses anything but a regular file). It
// returns the file with its mode and modification time. A unit file is
// read whole, up to MaxFileSize; any other file up to the tree's KeepFile,
// and a larger one is streamed through sha256 instead. Both count against
// the tree's budget.
func readFileAt(dirfd int, name, hp string, b *bounded.Budget, l Limits, isUnit bool) (host.File, error) {
	fd, st, err := bounded.OpenAt(dirfd, name, hp, bounded.Kind{What: "a file"})
	var nr *bounded.NotRegularError
	if errors.As(err, &nr) {
		return host.File{}, &fs.PathError{Op: "read", Path: hp, Err: fmt.Errorf("changed while being read")}
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return host.File{}, err
		}
		return host.File{}, describe(dirfd, hp, name, errors.Unwrap(err))
	}
	defer unix.Close(fd)
	f := host.File{Mode: filemode.FromStat(st.Mode), ModTime: st.Mtim.Nano()}
	if isUnit || l.KeepFile == 0 || st.Size <= l.KeepFile {
		k := unitKind
		if !isUnit {
			k = bounded.Kind{What: "a file of " + l.What, Max: l.KeepFile}
			if l.KeepFile == 0 {
				k.Max = l.Kept
			}
		}
		if st.Size > k.Max {
			return host.File{}, &bounded.LimitError{Path: hp, What: k.What, Cap: bounded.Size(k.Max)}
		}
		if err := b.Keep(st.Size); err != nil {
			return host.File{}, err
		}
		if f.Data, err = bounded.ReadFD(fd, hp, st.Size, k); err != nil {
			return host.File{}, err
		}
		return f, nil
	}
	if err := b.Read(st.Size); err != nil {
		return host.File{}, err
	}
	f.Streamed = &host.Streamed{}
	if f.Streamed.Sum, f.Streamed.Size, err = bounded.DigestFD(fd, hp, bounded.Kind{What: "a file of " + l.What, Max: st.Size + l.KeepFile}); err != nil {
		return host.File{}, err
	}
	return f, nil
}
