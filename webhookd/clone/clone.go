package clone

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/webhookd/config"
)

// Checkout is a repository's private clone. Only the repository's worker
// uses it, one call at a time.
type Checkout interface {
	// Fetch brings the configured branch from the remote and returns its tip.
	Fetch(ctx context.Context) (tip string, err error)
	// Contains reports whether commit is reachable from (or equal to) from.
	// A commit that is not in the clone at all is not reachable.
	Contains(from, commit string) (bool, error)
	// RawCommit returns the commit object's bytes as git stores them (no
	// object header), at most commitsig.MaxCommit+1 of them: what a
	// signature check reads, before anything is checked out.
	RawCommit(commit string) ([]byte, error)
	// Checkout makes the work tree exactly commit (detached HEAD, no
	// untracked files) and returns the work tree's directory.
	Checkout(commit string) (dir string, err error)
	// Repack keeps the clone's packs few (repack.go): the worker calls it
	// between deploys, after a fetch.
	Repack(ctx context.Context) (Repacked, error)
}

// ErrNotOnBranch: the pushed commit is not reachable from the configured branch.
var ErrNotOnBranch = errors.New("commit is not on the configured branch")

// FetchTimeout bounds one fetch, so an unreachable or stalled remote fails
// a deploy instead of holding the repository's worker forever.
const FetchTimeout = 5 * time.Minute

// gitCheckout is Checkout over go-git, in dir.
type gitCheckout struct {
	cfg  *config.Repo
	dir  string
	repo *git.Repository
	// raw is repo's storage without the screen (screen.go): RawCommit
	// reads through it, bounded, for the signature check.
	raw *filesystem.Storage
}

// New returns the private clone of cfg in dir (created on first use).
func New(cfg *config.Repo, dir string) Checkout {
	return &gitCheckout{cfg: cfg, dir: dir}
}

func (g *gitCheckout) open() (*git.Repository, error) {
	if g.repo != nil {
		return g.repo, nil
	}
	_, err := git.PlainOpen(g.dir)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		if err := os.MkdirAll(filepath.Dir(g.dir), 0o700); err != nil {
			return nil, fmt.Errorf("creating %s: %w", filepath.Dir(g.dir), err)
		}
		_, err = git.PlainInit(g.dir, false)
	}
	if err != nil {
		return nil, fmt.Errorf("opening checkout %s: %w", g.dir, err)
	}
	// go-git reads the clone through the screen from here on.
	r, raw, err := openScreened(g.dir)
	if err != nil {
		return nil, fmt.Errorf("opening checkout %s: %w", g.dir, err)
	}
	// The remote follows the configuration: a changed url takes effect on the next fetch.
	rem, err := r.Remote("origin")
	if err == nil && (len(rem.Config().URLs) != 1 || rem.Config().URLs[0] != g.cfg.URL) {
		if err := r.DeleteRemote("origin"); err != nil {
			return nil, fmt.Errorf("updating remote of %s: %w", g.dir, err)
		}
		err = git.ErrRemoteNotFound
	}
	if errors.Is(err, git.ErrRemoteNotFound) {
		_, err = r.CreateRemote(&gitconfig.RemoteConfig{Name: "origin", URLs: []string{g.cfg.URL}})
	}
	if err != nil {
		return nil, fmt.Errorf("setting remote of %s: %w", g.dir, err)
	}
	g.repo, g.raw = r, raw
	return r, nil
}

func (g *gitCheckout) trackingRef() plumbing.ReferenceName {
	return plumbing.NewRemoteReferenceName("origin", g.cfg.Branch)
}

func (g *gitCheckout) Fetch(ctx context.Context) (string, error) {
	r, err := g.open()
	if err != nil {
		return "", err
	}
	auth, err := authFor(g.cfg)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	spec := gitconfig.RefSpec(fmt.Sprintf("+%s:%s", plumbing.NewBranchReferenceName(g.cfg.Branch), g.trackingRef()))
	err = r.FetchContext(ctx, &git.FetchOptions{
		RemoteName: "origin",
		RefSpecs:   []gitconfig.RefSpec{spec},
		Auth:       auth,
		Tags:       git.NoTags,
		Force:      true,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return "", fmt.Errorf("fetching %s from %s: %w", g.cfg.Branch, g.cfg.RedactedURL(), err)
	}
	ref, err := r.Reference(g.trackingRef(), true)
	if err != nil {
		return "", fmt.Errorf("reading %s after fetch: %w", g.trackingRef(), err)
	}
	return ref.Hash().String(), nil
}

func (g *gitCheckout) Contains(from, commit string) (bool, error) {
	r, err := g.open()
	if err != nil {
		return false, err
	}
	// Both ends are screened here, for a refusal that names the commit
	// plainly; the storage screens every other commit go-git reads.
	for _, h := range []string{from, commit} {
		raw, err := g.RawCommit(h)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if err := commitsig.Screen(h, raw); err != nil {
			return false, err
		}
	}
	tip, err := r.CommitObject(plumbing.NewHash(from))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading commit %s: %w", from, err)
	}
	c, err := r.CommitObject(plumbing.NewHash(commit))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading commit %s: %w", commit, err)
	}
	ok, err := c.IsAncestor(tip)
	if err != nil {
		return false, fmt.Errorf("walking history of %s: %w", from, err)
	}
	return ok, nil
}

func (g *gitCheckout) RawCommit(commit string) ([]byte, error) {
	if _, err := g.open(); err != nil {
		return nil, err
	}
	obj, err := g.raw.EncodedObject(plumbing.CommitObject, plumbing.NewHash(commit))
	if err != nil {
		return nil, fmt.Errorf("reading commit %s: %w", commit, err)
	}
	raw, err := commitsig.ReadCommit(obj.Reader())
	if err != nil {
		return nil, fmt.Errorf("reading commit %s: %w", commit, err)
	}
	return raw, nil
}

func (g *gitCheckout) Checkout(commit string) (string, error) {
	r, err := g.open()
	if err != nil {
		return "", err
	}
	wt, err := r.Worktree()
	if err != nil {
		return "", err
	}
	h := plumbing.NewHash(commit)
	if err := wt.Checkout(&git.CheckoutOptions{Hash: h, Force: true}); err != nil {
		return "", fmt.Errorf("checking out %s: %w", commit, err)
	}
	// Files the commit does not track (left by an interrupted checkout, or
	// put there by hand) must not reach the deploy.
	if err := wt.Clean(&git.CleanOptions{Dir: true}); err != nil {
		return "", fmt.Errorf("cleaning work tree of %s: %w", g.dir, err)
	}
	head, err := r.Head()
	if err != nil {
		return "", err
	}
	if head.Hash() != h {
		return "", fmt.Errorf("checkout of %s left HEAD at %s", commit, head.Hash())
	}
	return g.dir, nil
}
