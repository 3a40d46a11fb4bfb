package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/syslet/syslet/pkg/layout"
)

// PrepareLink prepares making p a symlink to target (a name in p's own
// directory: an instance's link to its template) like PrepareFile
// prepares a file: the new link is made next to p under a temporary name, what is at
// p (a link, or a regular file: a hand-written instance taken over) is
// kept for Undo as a hard link, and the directory is fsynced; Swap renames
// the link over p. A directory at p is refused, and no symlink on the way
// to p is followed.
func (r Root) PrepareLink(p, target string) (*PreparedFile, error) {
	hp := clean(p)
	if target == "" || strings.Contains(target, "/") {
		return nil, fmt.Errorf("linking %s: the target %q must be a name beside it", hp, target)
	}
	s, dfd, fail, err := r.beginPrepare(hp, "linking")
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	m, err := lstatAt(dfd, s.base)
	switch {
	case errors.Is(err, unix.ENOENT):
	case err != nil:
		return fail(&fs.PathError{Op: "lstat", Path: hp, Err: err})
	case m.IsDir():
		return fail(errors.New("a directory is in the way"))
	default:
		if err := s.keepOld(dfd); err != nil {
			return fail(err)
		}
	}
	tmp := tempName(layout.TempPrefix)
	if err := unix.Symlinkat(target, dfd, tmp); err != nil {
		return fail(err)
	}
	s.tmp = tmp
	if err := unix.Fsync(dfd); err != nil {
		return fail(err)
	}
	return s, nil
}

// WriteLink makes p a symlink to target atomically: PrepareLink, Swap and
// Settle in one go.
func (r Root) WriteLink(p, target string) error {
	s, err := r.PrepareLink(p, target)
	if err != nil {
		return err
	}
	return complete(s)
}
