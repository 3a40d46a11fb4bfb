package fsroot

import (
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
)

// preparedVersion is the next version of a config dir that exists,
// prepared inside it: the new version directory, a link to it that Swap
// renames over ..data, a link to the old version for Undo, and a
// temporary link per file name that gets a link of its own.
type preparedVersion struct {
	dirTarget
	version string // the new version directory's name
	newData string // temporary link → version
	oldData string // temporary link → the version ..data named ("" none)
	// dataAside: ..data is not a link (a directory, a file); Swap renames
	// it aside to this name.
	dataAside string
	links     []fileLink
	// stale are the per-file links of names the new version drops, each
	// with a hard link kept for Undo: Swap removes them, as the old
	// writer did right after the switch.
	stale []fileLink
}

// fileLink is a name inside a config dir and its temporary link; bak is a
// hard link to the entry that was at name ("" none), aside the name a
// directory at name is moved to by Swap.
type fileLink struct {
	name, tmp, bak, aside string
	done                  bool // Swap has put it in place (or removed it)
}

// prepare writes the next version inside the existing config dir.
func (s *preparedVersion) prepare(pfd int, files []host.DirFile) error {
	dfd, err := openSub(pfd, s.base)
	if err != nil {
		return describe(pfd, s.hp, s.base, err)
	}
	defer unix.Close(dfd)
	ents, err := readNames(dfd)
	if err != nil {
		return err
	}
	next := 1
	for _, n := range ents {
		if v, ok := layout.Version(n); ok && v >= next {
			next = v + 1
		}
	}
	s.version = layout.VersionName(next)
	if err := writeVersion(dfd, s.version, files, true); err != nil {
		return err
	}
	s.newData = tempName(layout.DirTempPrefix)
	if err := unix.Symlinkat(s.version, dfd, s.newData); err != nil {
		return err
	}
	if cur, err := readlinkAt(dfd, layout.DataLink); err == nil {
		s.oldData = tempName(layout.DirTempPrefix)
		if err := unix.Symlinkat(cur, dfd, s.oldData); err != nil {
			return err
		}
	} else if _, serr := lstatAt(dfd, layout.DataLink); serr == nil {
		s.dataAside = tempName(layout.DirTempPrefix)
	}
	want := map[string]bool{}
	for _, f := range files {
		if layout.Internal(f.Name) {
			continue // syslet's own (layout.Digests): in the version only, no link
		}
		want[f.Name] = true
		if cur, err := readlinkAt(dfd, f.Name); err == nil && cur == layout.FileLink(f.Name) {
			continue
		}
		l := fileLink{name: f.Name, tmp: tempName(layout.DirTempPrefix)}
		if err := keep(dfd, f.Name, &l); err != nil {
			return err
		}
		s.links = append(s.links, l) // recorded first: a failure below discards its backup too
		if err := unix.Symlinkat(layout.FileLink(f.Name), dfd, l.tmp); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	for _, n := range ents {
		if layout.Internal(n) || want[n] {
			continue
		}
		l := fileLink{name: n}
		if err := keep(dfd, n, &l); err != nil {
			return err
		}
		s.stale = append(s.stale, l)
	}
	return unix.Fsync(dfd)
}

// keep prepares for putting back what is at dirfd/name: a hard link to a
// file or link, or (a directory) the name Swap moves it aside to.
func keep(dirfd int, name string, l *fileLink) error {
	m, err := lstatAt(dirfd, name)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case err != nil:
		return err
	case m.IsDir():
		l.aside = tempName(layout.DirTempPrefix)
		return nil
	}
	bak := tempName(layout.DirTempPrefix)
	// linkat without AT_SYMLINK_FOLLOW links a symlink itself.
	if err := unix.Linkat(dirfd, name, dirfd, bak, 0); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	l.bak = bak
	return nil
}

// Swap switches the config dir to the prepared version: one rename of
// ..data, then the renames of the new per-file links; the links of names
// the version drops are removed.
func (s *preparedVersion) Swap() error { return s.swapWith(s.swap) }

func (s *preparedVersion) swap(pfd int) error {
	dfd, err := openSub(pfd, s.base)
	if err != nil {
		return describe(pfd, s.hp, s.base, err)
	}
	defer unix.Close(dfd)
	if s.dataAside != "" {
		if err := unix.Renameat(dfd, layout.DataLink, dfd, s.dataAside); err != nil {
			return err
		}
	}
	if err := unix.Renameat(dfd, s.newData, dfd, layout.DataLink); err != nil {
		if s.dataAside != "" {
			unix.Renameat(dfd, s.dataAside, dfd, layout.DataLink)
		}
		return err
	}
	// From here on the switch has happened: a failure below is undone
	// by Undo like any other.
	s.state = swapped
	for i := range s.links {
		l := &s.links[i]
		if l.aside != "" {
			if err := unix.Renameat(dfd, l.name, dfd, l.aside); err != nil && !errors.Is(err, unix.ENOENT) {
				return err
			}
		}
		if err := unix.Renameat(dfd, l.tmp, dfd, l.name); err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
		l.done = true
	}
	for i := range s.stale {
		l := &s.stale[i]
		if l.aside != "" {
			if err := unix.Renameat(dfd, l.name, dfd, l.aside); err != nil && !errors.Is(err, unix.ENOENT) {
				return err
			}
		} else if err := ignoreMissing(unix.Unlinkat(dfd, l.name, 0)); err != nil {
			return fmt.Errorf("%s: %w", l.name, err)
		}
		l.done = true
	}
	return unix.Fsync(dfd)
}

// Undo switches back to the version the config dir had before Swap (after
// Swap), or removes what was prepared (before it).
func (s *preparedVersion) Undo() error { return s.undoWith(s.discard, s.undo) }

func (s *preparedVersion) undo(pfd int) error {
	dfd, err := openSub(pfd, s.base)
	if err != nil {
		return describe(pfd, s.hp, s.base, err)
	}
	defer unix.Close(dfd)
	var errs []error
	note := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case s.oldData != "":
		note(unix.Renameat(dfd, s.oldData, dfd, layout.DataLink))
	case s.dataAside != "":
		note(ignoreMissing(unix.Unlinkat(dfd, layout.DataLink, 0)))
		note(unix.Renameat(dfd, s.dataAside, dfd, layout.DataLink))
	default:
		note(ignoreMissing(unix.Unlinkat(dfd, layout.DataLink, 0)))
	}
	for _, l := range slices.Concat(s.links, s.stale) {
		if !l.done { // the swap stopped before it
			for _, n := range []string{l.tmp, l.bak} {
				if n != "" {
					note(ignoreMissing(unix.Unlinkat(dfd, n, 0)))
				}
			}
			continue
		}
		switch {
		case l.bak != "":
			note(unix.Renameat(dfd, l.bak, dfd, l.name))
		case l.aside != "":
			note(ignoreMissing(unix.Unlinkat(dfd, l.name, 0)))
			note(ignoreMissing(unix.Renameat(dfd, l.aside, dfd, l.name)))
		default:
			note(ignoreMissing(unix.Unlinkat(dfd, l.name, 0)))
		}
	}
	note(removeAllAt(dfd, s.version))
	note(unix.Fsync(dfd))
	return errors.Join(errs...)
}

// Settle removes what Undo would have needed — the old version, the kept
// links — once the run no longer needs to put the old version back (after
// Swap); before Swap it removes what was prepared.
func (s *preparedVersion) Settle() error { return s.settleWith(s.Undo, s.settle) }

func (s *preparedVersion) settle(pfd int) error {
	dfd, err := openSub(pfd, s.base)
	if err != nil {
		return describe(pfd, s.hp, s.base, err)
	}
	defer unix.Close(dfd)
	var gone []string
	for _, n := range []string{s.oldData, s.dataAside} {
		if n != "" {
			gone = append(gone, n)
		}
	}
	for _, l := range slices.Concat(s.links, s.stale) {
		for _, n := range []string{l.bak, l.aside} {
			if n != "" {
				gone = append(gone, n)
			}
		}
	}
	ents, err := readNames(dfd)
	if err != nil {
		return err
	}
	for _, n := range ents {
		if _, isVersion := layout.Version(n); isVersion && n != s.version {
			gone = append(gone, n)
		}
	}
	for _, n := range gone {
		if err := removeAllAt(dfd, n); err != nil {
			return err
		}
	}
	return unix.Fsync(dfd)
}

// discard removes everything the preparing made (before Swap).
func (s *preparedVersion) discard(pfd int) {
	s.state = settled
	dfd, err := openSub(pfd, s.base)
	if err != nil {
		return
	}
	defer unix.Close(dfd)
	names := []string{s.newData, s.oldData}
	for _, l := range slices.Concat(s.links, s.stale) {
		names = append(names, l.tmp, l.bak)
	}
	for _, n := range names {
		if n != "" {
			unix.Unlinkat(dfd, n, 0)
		}
	}
	if s.version != "" {
		removeAllAt(dfd, s.version)
	}
	unix.Fsync(dfd)
}
