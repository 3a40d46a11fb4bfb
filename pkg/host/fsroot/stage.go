package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
)

// Staging splits a write in two: Stage writes every byte the write will
// install next to its target, under temporary names (pkg/layout's), and
// fsyncs it, while nothing a reader of the target sees changes; Swap then
// only renames. An apply stages all its writes before it stops anything,
// so a full disk or any other write error ends it while every container
// still runs what it ran, and the swap after the stop cannot run out of
// space (a rename allocates nothing). What a swap replaced is kept (a
// hard link to the old file, the old version of a config dir) until
// Release, so Undo can put it back when the run cannot finish.
//
// Each staged write is used from one goroutine at a time.

// StagedFile is one file write, staged by StageFile.
type StagedFile struct {
	r    Root
	hp   string // the target, as a host path
	dir  string // its directory, as a host path
	base string
	tmp  string // the staged content
	// bak is a hard link to the file at the target when it was staged
	// ("" when there was none); aside is the name a directory in the way
	// of the target is renamed to by Swap ("" when there is none).
	bak, aside string
	created    string // the topmost directory the staging made ("" none)
	state      stageState
}

type stageState int

const (
	staged  stageState = iota
	swapped            // in place; Undo puts back what was there
	settled            // released, undone or discarded: nothing more to do
)

// beginStage starts staging hp as one file: its directory opened, the
// directories it had to make recorded (removed again if the staging
// fails). fail removes whatever the staging made and wraps err as
// "<verb> hp: err". The caller closes dfd.
func (r Root) beginStage(hp, verb string) (s *StagedFile, dfd int, fail func(error) (*StagedFile, error), err error) {
	dir, base := split(hp)
	s = &StagedFile{r: r, hp: hp, dir: dir, base: base}
	dfd, created, err := r.openDirCreated(dir, true)
	s.created = created
	if err != nil {
		s.removeCreated()
		return nil, -1, nil, fmt.Errorf("%s %s: %w", verb, hp, err)
	}
	fail = func(err error) (*StagedFile, error) {
		s.discard(dfd)
		s.removeCreated()
		return nil, fmt.Errorf("%s %s: %w", verb, hp, err)
	}
	return s, dfd, fail, nil
}

// keepOld keeps what is at the staged name (a file, or a symlink itself:
// linkat without AT_SYMLINK_FOLLOW) as a hard link, for Undo.
func (s *StagedFile) keepOld(dfd int) error {
	bak := tempName(layout.BackupPrefix)
	if err := unix.Linkat(dfd, s.base, dfd, bak, 0); err != nil {
		return err
	}
	s.bak = bak
	return nil
}

// StageFile writes data with mode next to p and fsyncs it, creating p's
// parent directories (0755) as needed; nothing at p changes. A symlink on
// the way or at p is an error naming it, as for WriteFile.
func (r Root) StageFile(p string, data []byte, mode uint32) (*StagedFile, error) {
	hp := clean(p)
	s, dfd, fail, err := r.beginStage(hp, "writing")
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	m, err := lstatAt(dfd, s.base)
	switch {
	case errors.Is(err, unix.ENOENT):
	case err != nil:
		return fail(&fs.PathError{Op: "lstat", Path: hp, Err: err})
	case m&fs.ModeSymlink != 0:
		return fail(&SymlinkError{Path: hp})
	case m.IsDir():
		s.aside = tempName(layout.BackupPrefix)
	default:
		if err := s.keepOld(dfd); err != nil {
			return fail(err)
		}
	}
	tmp, err := stageAt(dfd, data, fs.FileMode(mode))
	if err != nil {
		return fail(err)
	}
	s.tmp = tmp
	if err := unix.Fsync(dfd); err != nil {
		return fail(err)
	}
	return s, nil
}

// stageAt writes data into a new temporary file of dirfd and fsyncs it.
func stageAt(dirfd int, data []byte, mode fs.FileMode) (string, error) {
	tmp := tempName(layout.TempPrefix)
	if err := writeTemp(dirfd, tmp, data, mode); err != nil {
		return "", err
	}
	return tmp, nil
}

// Swap renames the staged content over the target (a directory in the
// way is renamed aside first) and fsyncs the directory.
func (s *StagedFile) Swap() error {
	if s.state != staged {
		return fmt.Errorf("writing %s: not staged", s.hp)
	}
	dfd, err := s.r.openDir(s.dir, false)
	if err != nil {
		return fmt.Errorf("writing %s: %w", s.hp, err)
	}
	defer unix.Close(dfd)
	if s.aside != "" {
		if err := unix.Renameat(dfd, s.base, dfd, s.aside); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("writing %s: moving the directory in the way aside: %w", s.hp, err)
		}
	}
	if err := unix.Renameat(dfd, s.tmp, dfd, s.base); err != nil {
		if s.aside != "" {
			unix.Renameat(dfd, s.aside, dfd, s.base)
		}
		return fmt.Errorf("writing %s: %w", s.hp, err)
	}
	s.state = swapped
	if err := unix.Fsync(dfd); err != nil {
		return fmt.Errorf("writing %s: %w", s.hp, err)
	}
	return nil
}

// Undo puts back what the target was before Swap (after Swap), or removes
// what was staged (before it).
func (s *StagedFile) Undo() error {
	if s.state == settled {
		return nil
	}
	dfd, err := s.r.openDir(s.dir, false)
	if err != nil {
		return fmt.Errorf("putting back %s: %w", s.hp, err)
	}
	defer unix.Close(dfd)
	if s.state == staged {
		s.discard(dfd)
		s.removeCreated()
		return nil
	}
	s.state = settled
	switch {
	case s.bak != "":
		err = unix.Renameat(dfd, s.bak, dfd, s.base)
	case s.aside != "":
		if err = ignoreMissing(unix.Unlinkat(dfd, s.base, 0)); err == nil {
			err = unix.Renameat(dfd, s.aside, dfd, s.base)
		}
	default:
		err = ignoreMissing(unix.Unlinkat(dfd, s.base, 0))
	}
	if err != nil {
		return fmt.Errorf("putting back %s: %w", s.hp, err)
	}
	if err := unix.Fsync(dfd); err != nil {
		return fmt.Errorf("putting back %s: %w", s.hp, err)
	}
	s.removeCreated()
	return nil
}

// Release forgets what Undo would have put back (after Swap), or removes
// what was staged (before it).
func (s *StagedFile) Release() error {
	if s.state != swapped {
		return s.Undo()
	}
	s.state = settled
	if s.bak == "" && s.aside == "" {
		return nil
	}
	dfd, err := s.r.openDir(s.dir, false)
	if err != nil {
		return fmt.Errorf("writing %s: %w", s.hp, err)
	}
	defer unix.Close(dfd)
	if s.bak != "" {
		err = ignoreMissing(unix.Unlinkat(dfd, s.bak, 0))
	}
	if s.aside != "" && err == nil {
		err = removeAllAt(dfd, s.aside)
	}
	if err == nil {
		err = unix.Fsync(dfd)
	}
	if err != nil {
		return fmt.Errorf("writing %s: removing what it replaced: %w", s.hp, err)
	}
	return nil
}

// discard removes the staged names (before Swap).
func (s *StagedFile) discard(dfd int) {
	s.state = settled
	for _, n := range []string{s.tmp, s.bak} {
		if n != "" {
			unix.Unlinkat(dfd, n, 0)
		}
	}
	unix.Fsync(dfd)
}

// removeCreated removes the directories the staging made for the target,
// deepest first, as long as they are empty.
func (s *StagedFile) removeCreated() { s.r.removeEmpty(s.dir, s.created) }

// removeEmpty removes dir and its parents up to and including top while
// they are empty; top "" removes nothing.
func (r Root) removeEmpty(dir, top string) {
	if top == "" {
		return
	}
	for d := dir; len(d) >= len(top); d = path.Dir(d) {
		parent, name := split(d)
		pfd, err := r.openDir(parent, false)
		if err != nil {
			return
		}
		err = unix.Unlinkat(pfd, name, unix.AT_REMOVEDIR)
		if err == nil {
			unix.Fsync(pfd)
		}
		unix.Close(pfd)
		if err != nil || d == top {
			return
		}
	}
}

// StagedDir is one config dir write, staged by StageDir.
type StagedDir struct {
	r      Root
	hp     string // the config dir, as a host path
	parent string // its parent directory
	base   string

	// A config dir that exists is staged inside it: the new version
	// directory, a link to it that Swap renames over ..data, a link to
	// the old version for Undo, and a temporary link per file name that
	// gets a link of its own.
	inPlace bool
	version string // the new version directory's name
	newData string // temporary link → version
	oldData string // temporary link → the version ..data named ("" none)
	// dataAside: ..data is not a link (a directory, a file); Swap renames
	// it aside to this name.
	dataAside string
	links     []stagedLink
	// stale are the per-file links of names the new version drops, each
	// with a hard link kept for Undo: Swap removes them, as the old
	// writer did right after the switch.
	stale []stagedLink

	// A config dir that does not exist yet (or with something other than
	// a directory in its place) is built whole under a temporary name in
	// the parent and renamed into place; aside is the name what was in
	// its place is moved to.
	tmpDir string
	aside  string

	created string // the topmost directory the staging made ("" none)
	state   stageState
}

// stagedLink is a name inside a config dir and its temporary link; bak is
// a hard link to the entry that was at name ("" none), aside the name a
// directory at name is moved to by Swap.
type stagedLink struct {
	name, tmp, bak, aside string
	done                  bool // Swap has put it in place (or removed it)
}

// StageDir writes files as the next version of the config directory p and
// stages the links that switch to it, fsynced; what a reader of p sees
// does not change until Swap.
func (r Root) StageDir(p string, files []host.DirFile) (*StagedDir, error) {
	hp := clean(p)
	parent, base := split(hp)
	s := &StagedDir{r: r, hp: hp, parent: parent, base: base}
	pfd, created, err := r.openDirCreated(parent, true)
	s.created = created
	if err != nil {
		s.r.removeEmpty(parent, created)
		return nil, fmt.Errorf("writing config dir %s: %w", hp, err)
	}
	defer unix.Close(pfd)
	m, err := lstatAt(pfd, base)
	switch {
	case err == nil && m&fs.ModeSymlink != 0:
		err = &SymlinkError{Path: hp}
	case err == nil && m.IsDir():
		s.inPlace = true
		err = s.stageInPlace(pfd, files)
	case err == nil || errors.Is(err, unix.ENOENT):
		if err == nil {
			s.aside = tempName(layout.BackupPrefix)
		}
		err = s.stageWhole(pfd, files)
	}
	if err == nil {
		err = unix.Fsync(pfd)
	}
	if err != nil {
		s.discard(pfd)
		return nil, fmt.Errorf("writing config dir %s: %w", hp, err)
	}
	return s, nil
}

// stageWhole builds the complete config dir under a temporary name.
func (s *StagedDir) stageWhole(pfd int, files []host.DirFile) error {
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

// stageInPlace stages the next version inside the existing config dir.
func (s *StagedDir) stageInPlace(pfd int, files []host.DirFile) error {
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
		l := stagedLink{name: f.Name, tmp: tempName(layout.DirTempPrefix)}
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
		l := stagedLink{name: n}
		if err := keep(dfd, n, &l); err != nil {
			return err
		}
		s.stale = append(s.stale, l)
	}
	return unix.Fsync(dfd)
}

// keep prepares for putting back what is at dirfd/name: a hard link to a
// file or link, or (a directory) the name Swap moves it aside to.
func keep(dirfd int, name string, l *stagedLink) error {
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

// mkdirSub makes the new directory dirfd/name (0755) and opens it, never
// through a symlink planted in its place.
func mkdirSub(dirfd int, name string) (int, error) {
	if err := unix.Mkdirat(dirfd, name, 0o755); err != nil {
		return -1, err
	}
	return openSub(dirfd, name)
}

// writeVersion writes files into the new version directory vname of the
// config dir dirfd. Synced (an apply's staging), each file and the
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

// Swap switches the config dir to the staged version: one rename of
// ..data, then the renames of the new per-file links; the links of names
// the version drops are removed. A new config dir is renamed into place
// whole.
func (s *StagedDir) Swap() error {
	if s.state != staged {
		return fmt.Errorf("writing config dir %s: not staged", s.hp)
	}
	if err := s.swap(); err != nil {
		return fmt.Errorf("writing config dir %s: %w", s.hp, err)
	}
	return nil
}

func (s *StagedDir) swap() error {
	pfd, err := s.r.openDir(s.parent, false)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	if !s.inPlace {
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
// Swap), or removes what was staged (before it).
func (s *StagedDir) Undo() error {
	if s.state == settled {
		return nil
	}
	pfd, err := s.r.openDir(s.parent, false)
	if err != nil {
		return fmt.Errorf("putting back config dir %s: %w", s.hp, err)
	}
	defer unix.Close(pfd)
	if s.state == staged {
		s.discard(pfd)
		return nil
	}
	s.state = settled
	if err := s.undo(pfd); err != nil {
		return fmt.Errorf("putting back config dir %s: %w", s.hp, err)
	}
	return nil
}

func (s *StagedDir) undo(pfd int) error {
	if !s.inPlace {
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

// Release removes what Undo would have needed — the old version, the kept
// links — once the run no longer needs to put the old version back (after
// Swap); before Swap it removes what was staged.
func (s *StagedDir) Release() error {
	if s.state != swapped {
		return s.Undo()
	}
	s.state = settled
	if err := s.release(); err != nil {
		return fmt.Errorf("writing config dir %s: removing the old version: %w", s.hp, err)
	}
	return nil
}

func (s *StagedDir) release() error {
	pfd, err := s.r.openDir(s.parent, false)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	if !s.inPlace {
		if s.aside != "" {
			if err := removeAllAt(pfd, s.aside); err != nil {
				return err
			}
		}
		return unix.Fsync(pfd)
	}
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

// discard removes everything the staging made (before Swap).
func (s *StagedDir) discard(pfd int) {
	s.state = settled
	if !s.inPlace {
		if s.tmpDir != "" {
			removeAllAt(pfd, s.tmpDir)
			unix.Fsync(pfd)
		}
		s.r.removeEmpty(s.parent, s.created)
		return
	}
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
