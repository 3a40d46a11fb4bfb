package clone

import (
	"fmt"
	"path/filepath"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/syslet/syslet/pkg/commitsig"
)

// screenedStorage is the clone's object storage as go-git's object layer
// sees it: a commit object that is unsafe to decode (commitsig.Screen:
// over the cap, a NUL, an oversized signature header) is an error, never
// handed to go-git's parser, which decodes a signature header in time
// quadratic in its length. Checking the fetched tip is not enough: once a
// hostile commit is in the clone, every later fetch decodes it again while
// it lists the commits the clone has (the tips of its refs and up to 100
// ancestors of each), and a good commit on top of it has it as a parent.
// Through this storage those walks stop at it instead of hanging.
//
// Embedding the filesystem storage keeps what go-git looks for beside
// storage.Storer (writing fetched packs whole, among others).
type screenedStorage struct {
	*filesystem.Storage
}

func (s screenedStorage) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := s.Storage.EncodedObject(t, h)
	if err != nil || obj.Type() != plumbing.CommitObject {
		return obj, err
	}
	raw, err := commitsig.ReadCommit(obj.Reader())
	if err != nil {
		return nil, fmt.Errorf("reading commit %s: %w", h, err)
	}
	if err := commitsig.Screen(h.String(), raw); err != nil {
		return nil, err
	}
	return obj, nil
}

// openScreened opens the repository at dir (a work tree with .git in
// it) over a screenedStorage, and returns the plain storage beside it
// for reading raw objects.
func openScreened(dir string) (*git.Repository, *filesystem.Storage, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	wt := osfs.New(abs)
	dot, err := wt.Chroot(git.GitDirName)
	if err != nil {
		return nil, nil, err
	}
	st := filesystem.NewStorage(dot, cache.NewObjectLRUDefault())
	r, err := git.Open(screenedStorage{st}, wt)
	if err != nil {
		return nil, nil, err
	}
	return r, st, nil
}
