package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"path"

	"golang.org/x/sys/unix"

	"github.com/syslet/syslet/pkg/layout"
)

// Preparing splits a write in two: Prepare* writes every byte the write
// will install next to its target, under temporary names (pkg/layout's),
// and fsyncs it, while nothing a reader of the target sees changes; Swap
// then only renames. An apply prepares all its writes before it stops
// anything, so a full disk or any other write error ends it while every
// container still runs what it ran, and the swap after the stop cannot run
// out of space (a rename allocates nothing). What a swap replaced is kept
// (a hard link to the old file, the old version of a config dir) until
// Settle, so Undo can put it back when the run cannot finish.
//
// Each prepared write is used from one goroutine at a time.

// Prepared is one prepared write: a file or a link (*PreparedFile), or a
// config dir (a new one, or the next version of one that exists).
type Prepared interface {
	// Swap puts the prepared bytes in place: renames only.
	Swap() error
	// Undo puts back what the target was before Swap (after Swap), or
	// removes what was prepared (before it).
	Undo() error
	// Settle makes the write final: it removes what Undo would have put
	// back (after Swap), or what was prepared (before it).
	Settle() error
}

// complete runs a prepared write to its end in one go: Swap, Undo when
// the swap fails (the target is as it was), Settle. WriteFile, WriteDir
// and WriteLink are their Prepare and complete; the executor calls the
// three steps itself, to swap many writes at once.
func complete(s Prepared) error {
	if err := s.Swap(); err != nil {
		s.Undo()
		return err
	}
	return s.Settle()
}

// PreparedFile is one file write, prepared by PrepareFile (or a link,
// by PrepareLink).
type PreparedFile struct {
	r    Root
	hp   string // the target, as a host path
	dir  string // its directory, as a host path
	base string
	tmp  string // the prepared content
	// bak is a hard link to the file at the target when it was prepared
	// ("" when there was none); aside is the name a directory in the way
	// of the target is renamed to by Swap ("" when there is none).
	bak, aside string
	created    string // the topmost directory the preparing made ("" none)
	state      prepState
}

// prepState is how far a prepared write has got.
type prepState int

const (
	prepared prepState = iota
	swapped            // in place; Undo puts back what was there
	settled            // settled, undone or discarded: nothing more to do
)

// beginPrepare starts preparing hp as one file: its directory opened,
// the directories it had to make recorded (removed again if the
// preparing fails). fail removes whatever the preparing made and wraps
// err as "<verb> hp: err". The caller closes dfd.
func (r Root) beginPrepare(hp, verb string) (s *PreparedFile, dfd int, fail func(error) (*PreparedFile, error), err error) {
	dir, base := split(hp)
	s = &PreparedFile{r: r, hp: hp, dir: dir, base: base}
	dfd, created, err := r.openDirCreated(dir, true)
	s.created = created
	if err != nil {
		s.removeCreated()
		return nil, -1, nil, fmt.Errorf("%s %s: %w", verb, hp, err)
	}
	fail = func(err error) (*PreparedFile, error) {
		s.discard(dfd)
		s.removeCreated()
		return nil, fmt.Errorf("%s %s: %w", verb, hp, err)
	}
	return s, dfd, fail, nil
}

// keepOld keeps what is at the target's name (a file, or a symlink itself:
// linkat without AT_SYMLINK_FOLLOW) as a hard link, for Undo.
func (s *PreparedFile) keepOld(dfd int) error {
	bak := tempName(layout.BackupPrefix)
	if err := unix.Linkat(dfd, s.base, dfd, bak, 0); err != nil {
		return err
	}
	s.bak = bak
	return nil
}

// PrepareFile writes data with mode next to p and fsyncs it, creating p's
// parent directories (0755) as needed; nothing at p changes. A symlink on
// the way or at p is an error naming it, as for WriteFile.
func (r Root) PrepareFile(p string, data []byte, mode uint32) (*PreparedFile, error) {
	hp := clean(p)
	s, dfd, fail, err := r.beginPrepare(hp, "writing")
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
	tmp := tempName(layout.TempPrefix)
	if err := writeTemp(dfd, tmp, data, fs.FileMode(mode)); err != nil {
		return fail(err)
	}
	s.tmp = tmp
	if err := unix.Fsync(dfd); err != nil {
		return fail(err)
	}
	return s, nil
}

// Swap renames the prepared content over the target (a directory in the
// way is renamed aside first) and fsyncs the directory.
func (s *PreparedFile) Swap() error {
	if s.state != prepared {
		return fmt.Errorf("writing %s: not prepared", s.hp)
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
// what was prepared (before it).
func (s *PreparedFile) Undo() error {
	if s.state == settled {
		return nil
	}
	dfd, err := s.r.openDir(s.dir, false)
	if err != nil {
		return fmt.Errorf("putting back %s: %w", s.hp, err)
	}
	defer unix.Close(dfd)
	if s.state == prepared {
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

// Settle forgets what Undo would have put back (after Swap), or removes
// what was prepared (before it).
func (s *PreparedFile) Settle() error {
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

// discard removes the prepared names (before Swap).
func (s *PreparedFile) discard(dfd int) {
	s.state = settled
	for _, n := range []string{s.tmp, s.bak} {
		if n != "" {
			unix.Unlinkat(dfd, n, 0)
		}
	}
	unix.Fsync(dfd)
}

// removeCreated removes the directories the preparing made for the
// target, deepest first, as long as they are empty.
func (s *PreparedFile) removeCreated() { s.r.removeEmpty(s.dir, s.created) }

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
