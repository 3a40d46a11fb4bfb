package fsroot

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
)

// A config dir is prepared one of two ways, each its own type: a dir that
// exists gets its next version inside it (preparedVersion, version.go),
// switched by one rename of ..data; a dir that does not exist yet, or
// something other than a directory in its place, is built whole under a
// temporary name beside it (preparedNewDir) and renamed into place.

// dirTarget is what both ways share: where the config dir is, what the
// preparing made on the way to it, and how far its write has got.
type dirTarget struct {
	r      Root
	hp     string // the config dir, as a host path
	parent string // its parent directory
	base   string

	created string // the topmost directory the preparing made ("" none)
	state   prepState
}

// PrepareDir writes files as the next version of the config directory p
// and prepares the links that switch to it, fsynced; what a reader of p
// sees does not change until Swap.
func (r Root) PrepareDir(p string, files []host.DirFile) (Prepared, error) {
	hp := clean(p)
	parent, base := split(hp)
	d := dirTarget{r: r, hp: hp, parent: parent, base: base}
	pfd, created, err := r.openDirCreated(parent, true)
	d.created = created
	if err != nil {
		r.removeEmpty(parent, created)
		return nil, fmt.Errorf("writing config dir %s: %w", hp, err)
	}
	defer unix.Close(pfd)
	var s interface {
		Prepared
		discard(pfd int)
	}
	m, err := lstatAt(pfd, base)
	switch {
	case err == nil && m&fs.ModeSymlink != 0:
		err = &SymlinkError{Path: hp}
	case err == nil && m.IsDir():
		v := &preparedVersion{dirTarget: d}
		s, err = v, v.prepare(pfd, files)
	case err == nil || errors.Is(err, unix.ENOENT):
		n := &preparedNewDir{dirTarget: d}
		if err == nil {
			n.aside = tempName(layout.BackupPrefix)
		}
		s, err = n, n.prepare(pfd, files)
	}
	if err == nil {
		err = unix.Fsync(pfd)
	}
	if err != nil {
		if s != nil {
			s.discard(pfd)
		} else {
			r.removeEmpty(parent, created)
		}
		return nil, fmt.Errorf("writing config dir %s: %w", hp, err)
	}
	return s, nil
}

// swapWith runs swap on the parent directory of a prepared config dir.
func (d *dirTarget) swapWith(swap func(pfd int) error) error {
	if d.state != prepared {
		return fmt.Errorf("writing config dir %s: not prepared", d.hp)
	}
	if err := d.inParent(swap); err != nil {
		return fmt.Errorf("writing config dir %s: %w", d.hp, err)
	}
	return nil
}

// undoWith puts the config dir back with undo (after Swap), or removes
// what was prepared with discard (before it).
func (d *dirTarget) undoWith(discard func(pfd int), undo func(pfd int) error) error {
	if d.state == settled {
		return nil
	}
	pfd, err := d.r.openDir(d.parent, false)
	if err != nil {
		return fmt.Errorf("putting back config dir %s: %w", d.hp, err)
	}
	defer unix.Close(pfd)
	if d.state == prepared {
		discard(pfd)
		return nil
	}
	d.state = settled
	if err := undo(pfd); err != nil {
		return fmt.Errorf("putting back config dir %s: %w", d.hp, err)
	}
	return nil
}

// settleWith removes with settle what Undo would have needed (after
// Swap); before Swap it is Undo.
func (d *dirTarget) settleWith(undo func() error, settle func(pfd int) error) error {
	if d.state != swapped {
		return undo()
	}
	d.state = settled
	if err := d.inParent(settle); err != nil {
		return fmt.Errorf("writing config dir %s: removing the old version: %w", d.hp, err)
	}
	return nil
}

// inParent runs op on the config dir's parent directory.
func (d *dirTarget) inParent(op func(pfd int) error) error {
	pfd, err := d.r.openDir(d.parent, false)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	return op(pfd)
}

// preparedNewDir is a config dir built whole under a temporary name in its
// parent; Swap renames it into place.
type preparedNewDir struct {
	dirTarget
	tmpDir string
	// aside is the name what was in the dir's place (a file) is moved to
	// by Swap ("" when nothing was there).
	aside string
}

// prepare builds the complete config dir under a temporary name.
func (s *preparedNewDir) prepare(pfd int, files []host.DirFile) error {
	tmp := tempName(layout.TempPrefix)
	if err := unix.Mkdirat(pfd, tmp, 0o755); err != nil {
		return err
	}
	s.tmpDir = tmp
	dfd, err := openSub(pfd, tmp)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	vname := layout.VersionName(1)
	if err := writeVersion(dfd, vname, files, true); err != nil {
		return err
	}
	if err := linkVersion(dfd, vname, files); err != nil {
		return err
	}
	return unix.Fsync(dfd)
}

// Swap renames the new config dir into place (what was in its way aside).
func (s *preparedNewDir) Swap() error { return s.swapWith(s.swap) }

func (s *preparedNewDir) swap(pfd int) error {
	if s.aside != "" {
		if err := unix.Renameat(pfd, s.base, pfd, s.aside); err != nil && !errors.Is(err, unix.ENOENT) {
			return err
		}
	}
	if err := unix.Renameat(pfd, s.tmpDir, pfd, s.base); err != nil {
		if s.aside != "" {
			unix.Renameat(pfd, s.aside, pfd, s.base)
		}
		return err
	}
	s.state = swapped
	return unix.Fsync(pfd)
}

// Undo removes the new config dir and puts back what was in its place
// (after Swap), or removes what was prepared (before it).
func (s *preparedNewDir) Undo() error { return s.undoWith(s.discard, s.undo) }

func (s *preparedNewDir) undo(pfd int) error {
	if err := removeAllAt(pfd, s.base); err != nil {
		return err
	}
	if s.aside != "" {
		if err := unix.Renameat(pfd, s.aside, pfd, s.base); err != nil {
			return err
		}
	}
	if err := unix.Fsync(pfd); err != nil {
		return err
	}
	s.r.removeEmpty(s.parent, s.created)
	return nil
}

// Settle removes what was in the dir's place (after Swap), or what was
// prepared (before it).
func (s *preparedNewDir) Settle() error { return s.settleWith(s.Undo, s.settle) }

func (s *preparedNewDir) settle(pfd int) error {
	if s.aside != "" {
		if err := removeAllAt(pfd, s.aside); err != nil {
			return err
		}
	}
	return unix.Fsync(pfd)
}

// discard removes everything the preparing made (before Swap).
func (s *preparedNewDir) discard(pfd int) {
	s.state = settled
	if s.tmpDir != "" {
		removeAllAt(pfd, s.tmpDir)
		unix.Fsync(pfd)
	}
	s.r.removeEmpty(s.parent, s.created)
}

// linkVersion points a new config dir's ..data at its version vname and
// gives each file but syslet's own its link through ..data.
func linkVersion(dfd int, vname string, files []host.DirFile) error {
	if err := unix.Symlinkat(vname, dfd, layout.DataLink); err != nil {
		return err
	}
	for _, f := range files {
		if layout.Internal(f.Name) {
			continue
		}
		if err := unix.Symlinkat(layout.FileLink(f.Name), dfd, f.Name); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	return nil
}

// mkdirSub makes the new directory dirfd/name (0755) and opens it, never
// through a symlink planted in its place.
func mkdirSub(dirfd int, name string) (int, error) {
	if err := unix.Mkdirat(dirfd, name, 0o755); err != nil {
		return -1, err
	}
	return openSub(dirfd, name)
}

// writeVersion writes files into the new version directory vname of the
// config dir dirfd. Synced (an apply's preparing), each file and the
// version are fsynced; a batch syncs once at its end instead.
func writeVersion(dirfd int, vname string, files []host.DirFile, synced bool) error {
	vfd, err := mkdirSub(dirfd, vname)
	if err != nil {
		return err
	}
	defer unix.Close(vfd)
	write := createAt
	if synced {
		write = writeTemp
	}
	for _, f := range files {
		if err := write(vfd, f.Name, f.Content, fs.FileMode(f.Mode)); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	if !synced {
		return nil
	}
	return unix.Fsync(vfd)
}
