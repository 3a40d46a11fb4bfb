package fsroot

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// WriteLink makes p a symlink to target (a name in p's own directory: an
// instance's link to its template), atomically: a link of the same name is
// replaced by a rename, a regular file too (a hand-written instance taken
// over), a directory never. No symlink on the way to p is followed.
func (r Root) WriteLink(p, target string) error {
	if target == "" || strings.Contains(target, "/") {
		return fmt.Errorf("linking %s: the target %q must be a name beside it", clean(p), target)
	}
	dir, base := split(p)
	dfd, err := r.openDir(dir, true)
	if err != nil {
		return fmt.Errorf("linking %s: %w", clean(p), err)
	}
	defer unix.Close(dfd)
	if m, err := lstatAt(dfd, base); err == nil && m.IsDir() {
		return fmt.Errorf("linking %s: a directory is in the way", clean(p))
	}
	if err := replaceLink(dfd, base, target); err != nil {
		return fmt.Errorf("linking %s: %w", clean(p), err)
	}
	if err := unix.Fsync(dfd); err != nil {
		return fmt.Errorf("linking %s: %w", clean(p), err)
	}
	return nil
}
