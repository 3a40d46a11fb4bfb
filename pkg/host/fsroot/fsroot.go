package fsroot

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/syslet/syslet/pkg/filemode"
	"github.com/syslet/syslet/pkg/host"
)

// Root is a directory standing in for "/".
type Root struct{ Dir string }

// New returns a Root at dir (cleaned: "/." and "//" are "/").
func New(dir string) Root { return Root{Dir: filepath.Clean(dir)} }

// Path maps an absolute host path to the real path under the root. It is
// for messages and tests; every file operation of this package resolves
// the path component by component instead.
func (r Root) Path(p string) string {
	return filepath.Join(r.Dir, filepath.FromSlash(clean(p)))
}

// clean makes p an absolute, clean host path: "..", "." and repeated
// slashes cannot lead outside the root.
func clean(p string) string { return path.Clean("/" + p) }

// components splits a clean host path into its names ("/" has none).
func components(p string) []string {
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

// SymlinkError is a symlink where syslet expects a directory or a file.
// syslet never follows one inside the trees it manages: a link planted
// there could redirect a root-owned write or removal anywhere.
type SymlinkError struct {
	Path string // host path of the link
}

func (e *SymlinkError) Error() string {
	return fmt.Sprintf("%s is a symlink where syslet expects a directory or file; syslet does not follow symlinks in the trees it manages (remove it, or replace it with a real directory)", e.Path)
}

// ErrSymlink is matched by errors.Is for every *SymlinkError.
var ErrSymlink = errors.New("symlink in a managed path")

func (e *SymlinkError) Is(target error) bool { return target == ErrSymlink }

// openDir opens the host directory p beneath the root, one component at a
// time with O_NOFOLLOW: no symlink is followed anywhere below the root
// (the guarantee of openat2's RESOLVE_NO_SYMLINKS, on any kernel), and as
// the path is clean there is no ".." to climb out with (RESOLVE_BENEATH).
// With create, missing directories are made (0755) on the way.
func (r Root) openDir(p string, create bool) (int, error) {
	fd, _, err := r.openDirCreated(p, create)
	return fd, err
}

// openDirCreated is openDir that also returns the topmost directory it
// created on the way ("" when it created none), so a prepared write
// that is discarded can remove what it made.
func (r Root) openDirCreated(p string, create bool) (int, string, error) {
	created := ""
	fd, err := unix.Open(r.Dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) && create {
		// The root itself is the operator's choice (`render --out DIR`
		// may name a directory still to be made); only what lies beneath
		// it is resolved without symlinks.
		if err = os.MkdirAll(r.Dir, 0o755); err == nil {
			fd, err = unix.Open(r.Dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		}
	}
	if err != nil {
		return -1, "", &fs.PathError{Op: "open", Path: r.Dir, Err: err}
	}
	comps := components(clean(p))
	for i, c := range comps {
		next, err := openSub(fd, c)
		if errors.Is(err, unix.ENOENT) && create {
			err = unix.Mkdirat(fd, c, 0o755)
			if err == nil && created == "" {
				created = "/" + strings.Join(comps[:i+1], "/")
			}
			if err == nil || errors.Is(err, unix.EEXIST) {
				next, err = openSub(fd, c)
			}
		}
		if err != nil {
			err = describe(fd, "/"+strings.Join(comps[:i+1], "/"), c, err)
			unix.Close(fd)
			return -1, created, err
		}
		unix.Close(fd)
		fd = next
	}
	return fd, created, nil
}

func openSub(dirfd int, name string) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return fd, err
	}
}

// describe turns a failed open of dirfd/name into an error naming the
// host path: a symlink is a *SymlinkError, anything else a PathError.
func describe(dirfd int, hostPath, name string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		if m, serr := lstatAt(dirfd, name); serr == nil {
			if m&fs.ModeSymlink != 0 {
				return &SymlinkError{Path: hostPath}
			}
			if !m.IsDir() {
				return &fs.PathError{Op: "open", Path: hostPath, Err: fmt.Errorf("not a directory (%s): %w", filemode.Describe(m), unix.ENOTDIR)}
			}
		}
	}
	return &fs.PathError{Op: "open", Path: hostPath, Err: err}
}

// lstatAt is fstatat(AT_SYMLINK_NOFOLLOW) as an fs.FileMode.
func lstatAt(dirfd int, name string) (fs.FileMode, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, err
	}
	return filemode.FromStat(st.Mode), nil
}

func split(p string) (dir, base string) {
	p = clean(p)
	return path.Dir(p), path.Base(p)
}

// WriteFile replaces p atomically with data and mode, creating parent
// directories (0755) as needed. A directory in the way is removed: every
// path syslet writes lies in a tree it owns. A symlink anywhere on the
// way, or at p itself, is an error naming it. It is PrepareFile, Swap and
// Settle in one go.
func (r Root) WriteFile(p string, data []byte, mode uint32) error {
	s, err := r.PrepareFile(p, data, mode)
	if err != nil {
		return err
	}
	return complete(s)
}

// tempName is a short random name: it must fit NAME_MAX whatever the
// length of the name it stands in for.
func tempName(prefix string) string {
	b := make([]byte, 8)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// writeTemp creates dirfd/name (which must not exist) with data and mode,
// and fsyncs it; on any error the file is removed again.
func writeTemp(dirfd int, name string, data []byte, mode fs.FileMode) error {
	fd, err := unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	fail := func(err error) error {
		f.Close()
		unix.Unlinkat(dirfd, name, 0)
		// The temporary name means nothing to the reader; the caller
		// names the target.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return pe.Err
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	// The file is created 0600 and umask never applies to fchmod, so the
	// final mode is exactly the one asked for.
	if err := f.Chmod(mode.Perm()); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		unix.Unlinkat(dirfd, name, 0)
		return err
	}
	return nil
}

// removeAllAt removes dirfd/name and, for a directory, everything in it,
// never following a symlink: a link is removed, not what it points to.
func removeAllAt(dirfd int, name string) error {
	m, err := lstatAt(dirfd, name)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	if !m.IsDir() {
		return ignoreMissing(unix.Unlinkat(dirfd, name, 0))
	}
	cfd, err := openSub(dirfd, name)
	if err != nil {
		return err
	}
	names, err := readNames(cfd)
	if err == nil {
		for _, n := range names {
			if err = removeAllAt(cfd, n); err != nil {
				break
			}
		}
	}
	unix.Close(cfd)
	if err != nil {
		return err
	}
	return ignoreMissing(unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR))
}

func ignoreMissing(err error) error {
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// WriteDir installs files as the next version of the config directory p
// and switches to it with one rename of the ..data link, so a process
// reading the directory sees the old set or the new set, never a mix.
// Per-file links are added or removed right after the switch (files with
// an internal name, such as syslet's digest manifest, get none); old
// versions are deleted last. It is PrepareDir, Swap and Settle in one go.
func (r Root) WriteDir(p string, files []host.DirFile) error {
	s, err := r.PrepareDir(p, files)
	if err != nil {
		return err
	}
	return complete(s)
}

// Remove deletes p (a file, a symlink or a whole directory, never what a
// symlink points to) and then every parent directory left empty, up to
// but not including stop. A missing p is not an error: the goal is that
// it does not exist. A symlink on the way to p is an error naming it.
func (r Root) Remove(p, stop string) error {
	p = clean(p)
	dir, base := split(p)
	dfd, err := r.openDir(dir, false)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing %s: %w", p, err)
	}
	err = removeAllAt(dfd, base)
	if err == nil {
		err = unix.Fsync(dfd)
	}
	unix.Close(dfd)
	if err != nil {
		return fmt.Errorf("removing %s: %w", p, err)
	}
	if stop == "" {
		return nil
	}
	limit := clean(stop)
	for d := dir; strings.HasPrefix(d, limit+"/"); d = path.Dir(d) {
		parent, name := split(d)
		pfd, err := r.openDir(parent, false)
		if err != nil {
			break
		}
		err = unix.Unlinkat(pfd, name, unix.AT_REMOVEDIR) // fails on a non-empty directory
		if err == nil {
			unix.Fsync(pfd)
		}
		unix.Close(pfd)
		if err != nil {
			break
		}
	}
	return nil
}

// Exists reports whether p exists (without following any symlink).
func (r Root) Exists(p string) bool {
	dir, base := split(p)
	dfd, err := r.openDir(dir, false)
	if err != nil {
		return false
	}
	defer unix.Close(dfd)
	_, err = lstatAt(dfd, base)
	return err == nil
}

// Check verifies, before anything is written, that each of the given
// host paths can be written without meeting a symlink: no existing
// component of any of them is a link. It returns every problem at once,
// so `syslet render --out` fails before writing instead of half-way.
func (r Root) Check(paths ...string) error {
	var errs []error
	// seen: checked already; absent: not there, nor anything below it (a
	// fresh tree's hundred thousand files are not looked for one by one).
	seen, absent := map[string]bool{}, map[string]bool{}
	d := r.dirs(false)
	defer d.close()
	for _, p := range paths {
		comps := components(clean(p))
		for i := range comps {
			hp := "/" + strings.Join(comps[:i+1], "/")
			if absent[hp] {
				break
			}
			if seen[hp] {
				continue
			}
			seen[hp] = true
			parent, base := split(hp)
			pfd, err := d.open(parent)
			if err != nil {
				absent[parent] = true
				break // reported for the parent already, or missing
			}
			m, err := lstatAt(pfd, base)
			if err != nil {
				absent[hp] = true
				break // missing: nothing below it exists either
			}
			if m&fs.ModeSymlink != 0 {
				errs = append(errs, &SymlinkError{Path: hp})
				break
			}
		}
	}
	return errors.Join(errs...)
}

// dirCache resolves directories beneath the root as openDir does, keeping
// the ones it opened so that the next path below them is resolved from
// there rather than from the root again: writing or checking a hundred
// thousand paths would otherwise open every component of every one. A
// descriptor it returns is valid until the next open.
type dirCache struct {
	r      Root
	create bool
	fds    map[string]int
}

// maxCachedDirs bounds the descriptors a dirCache holds.
const maxCachedDirs = 256

func (r Root) dirs(create bool) *dirCache {
	return &dirCache{r: r, create: create, fds: map[string]int{}}
}

func (d *dirCache) open(p string) (int, error) {
	if fd, ok := d.fds[p]; ok {
		return fd, nil
	}
	if p == "/" {
		fd, err := d.r.openDir("/", d.create)
		if err != nil {
			return -1, err
		}
		d.put(p, fd)
		return fd, nil
	}
	parent, base := split(p)
	pfd, err := d.open(parent)
	if err != nil {
		return -1, err
	}
	fd, err := openSub(pfd, base)
	if errors.Is(err, unix.ENOENT) && d.create {
		if err = unix.Mkdirat(pfd, base, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
			fd, err = openSub(pfd, base)
		}
	}
	if err != nil {
		return -1, describe(pfd, p, base, err)
	}
	d.put(p, fd)
	return fd, nil
}

func (d *dirCache) put(p string, fd int) {
	if len(d.fds) >= maxCachedDirs {
		d.close()
	}
	d.fds[p] = fd
}

func (d *dirCache) close() {
	for _, fd := range d.fds {
		unix.Close(fd)
	}
	clear(d.fds)
}
