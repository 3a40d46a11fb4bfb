package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/syslet/syslet/pkg/commitsig"
)

// verifyCheckout is push --verify: the specs at dir must be the work tree
// of a git checkout whose HEAD carries a good signature by a key of the
// trust file (an allowed-signers file or an OpenPGP keyring, told apart
// by content), with nothing changed or added since — the same check
// webhookd makes before it checks a commit out. It returns who signed
// HEAD.
func verifyCheckout(dir, trustFile string) (commitsig.Signer, string, error) {
	signers, err := commitsig.LoadTrustFile(trustFile)
	if err != nil {
		return commitsig.Signer{}, "", fmt.Errorf("--verify: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return commitsig.Signer{}, "", err
	}
	r, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return commitsig.Signer{}, "", fmt.Errorf("--verify: %s is not in a git checkout: %w", dir, err)
	}
	head, err := r.Head()
	if err != nil {
		return commitsig.Signer{}, "", fmt.Errorf("--verify: reading HEAD of the checkout of %s: %w", dir, err)
	}
	commit := head.Hash().String()
	obj, err := r.Storer.EncodedObject(plumbing.CommitObject, head.Hash())
	if err != nil {
		return commitsig.Signer{}, commit, fmt.Errorf("--verify: reading commit %s: %w", commit, err)
	}
	raw, err := commitsig.ReadCommit(obj.Reader())
	if err != nil {
		return commitsig.Signer{}, commit, fmt.Errorf("--verify: reading commit %s: %w", commit, err)
	}
	s, err := signers.Verify(commit, raw, time.Now())
	if err != nil {
		return commitsig.Signer{}, commit, err
	}
	wt, err := r.Worktree()
	if err != nil {
		return commitsig.Signer{}, commit, fmt.Errorf("--verify: %w", err)
	}
	st, err := wt.Status()
	if err != nil {
		return commitsig.Signer{}, commit, fmt.Errorf("--verify: reading the checkout's status: %w", err)
	}
	if !st.IsClean() {
		n := 0
		for range st {
			n++
		}
		return commitsig.Signer{}, commit, fmt.Errorf("--verify: the checkout of %s has %d file(s) changed or not committed since the signed HEAD %.12s: commit (signed) or stash them; what is pushed must be what was signed", dir, n, commit)
	}
	return s, commit, nil
}
