package clone

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Repacking the private clone. go-git stores each fetch as a pack of its
// own and never repacks, and every object lookup searches every pack's
// index: a clone that fetches a change every minute for a year would hold
// half a million packs. Between deploys the worker rolls the small packs
// up into one, as `git repack --geometric=2` does: sorted by size, each
// pack must be at least twice as large as all smaller ones together, and
// the smallest packs that break that progression are merged. The number
// of packs then stays logarithmic in the clone's size, and an object is
// rewritten a logarithmic number of times over the clone's life.
//
// Bounds: a merge takes only packs that together hold at most
// repackMaxBytes (a large clone pack stays as it is), writes whole
// objects (no delta search: the memory a merge needs is one object and
// go-git's small caches, whatever the packs hold), and gives up when its
// context ends (the worker gives it RepackTimeout), leaving the clone
// exactly as it was. The new pack is
// complete on disk before any merged pack is deleted, so a kill at any
// moment leaves every object readable.
const (
	// MinPacks: below this many packs a clone is left alone; each
	// fetch then costs no repack at all.
	MinPacks       = 10
	repackFactor   = 2
	repackMaxBytes = 64 << 20
	// RepackTimeout bounds one repack; the worker runs none while a push
	// waits, so a repack delays a deploy by at most this.
	RepackTimeout = 2 * time.Minute
	// repackCache bounds the objects the merge keeps in memory, and
	// repackLargeObject is the size past which an object is streamed
	// rather than read whole.
	repackCache       = 8 << 20
	repackLargeObject = 1 << 20
)

// Repacked is what one repack did.
type Repacked struct {
	Packs  int           // packs in the clone before
	Merged int           // packs merged into one (0: nothing to do)
	Bytes  int64         // their size on disk
	After  int           // packs in the clone after
	Took   time.Duration // how long it took
}

// pack is one pack file of the clone.
type pack struct {
	hash plumbing.Hash
	size int64
}

// packDir is where a clone keeps its packs.
func packDir(gitDir string) string { return filepath.Join(gitDir, "objects", "pack") }

// listPacks returns the clone's packs, smallest first. A pack with a
// .keep file (set by hand) is never merged, so it is not listed.
func listPacks(gitDir string) ([]pack, error) {
	ents, err := os.ReadDir(packDir(gitDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []pack
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".pack")
		hex, ok2 := strings.CutPrefix(name, "pack-")
		if !ok || !ok2 || !plumbing.IsHash(hex) {
			continue
		}
		if _, err := os.Stat(filepath.Join(packDir(gitDir), name+".keep")); err == nil {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, pack{hash: plumbing.NewHash(hex), size: fi.Size()})
	}
	slices.SortFunc(out, func(a, b pack) int {
		return cmp.Or(cmp.Compare(a.size, b.size), strings.Compare(a.hash.String(), b.hash.String()))
	})
	return out, nil
}

// rollUp returns how many of packs (smallest first) to merge into one:
// those below the first pack that is at least factor times as large as
// all smaller ones together, as long as that rolled-up pack would itself
// keep the progression, within maxBytes. 0 or 1: nothing to merge.
func rollUp(packs []pack, factor, maxBytes int64) int {
	// From the largest down, the first pair out of progression.
	split := 0
	for i := len(packs) - 1; i > 0; i-- {
		if packs[i].size < factor*packs[i-1].size {
			split = i + 1
			break
		}
	}
	if split == 0 {
		return 0
	}
	// The rolled-up pack takes in the next ones while it is not factor
	// times smaller than them.
	var total int64
	for _, p := range packs[:split] {
		total += p.size
	}
	for split < len(packs) && factor*total >= packs[split].size {
		total += packs[split].size
		split++
	}
	// Within the byte bound: the smallest ones only.
	n, sum := 0, int64(0)
	for n < split && sum+packs[n].size <= maxBytes {
		sum += packs[n].size
		n++
	}
	return n
}

// Repack merges the clone's small packs into one (see above); it does
// nothing while the clone holds fewer than MinPacks packs. When ctx
// ends first, it stops and leaves the clone as it was.
func (g *gitCheckout) Repack(ctx context.Context) (Repacked, error) {
	t0 := time.Now()
	gitDir := filepath.Join(g.dir, ".git")
	// A tmp_pack_ file is what a killed fetch or repack left; the worker
	// is the clone's only user, so none is being written now.
	removeTmpPacks(gitDir)
	packs, err := listPacks(gitDir)
	rep := Repacked{Packs: len(packs), After: len(packs)}
	if err != nil || len(packs) < MinPacks {
		return rep, err
	}
	n := rollUp(packs, repackFactor, repackMaxBytes)
	if n < 2 {
		return rep, nil
	}
	merge := packs[:n]
	for _, p := range merge {
		rep.Bytes += p.size
	}
	// The merge reads through a storage of its own, with small caches;
	// the checkout's repository is opened afresh after it, since its
	// storage still indexes the merged packs.
	g.repo = nil
	st := filesystem.NewStorageWithOptions(osfs.New(gitDir), cache.NewObjectLRU(repackCache),
		filesystem.Options{LargeObjectThreshold: repackLargeObject})
	defer st.Close()
	var hashes []plumbing.Hash
	for _, p := range merge {
		hs, err := packObjects(gitDir, p.hash)
		if err != nil {
			return rep, err
		}
		hashes = append(hashes, hs...)
	}
	hashes = uniqueHashes(hashes)
	h, err := writePack(ctx, st, hashes)
	if err != nil {
		removeTmpPacks(gitDir)
		return rep, fmt.Errorf("repacking %d packs of %s: %w", n, g.dir, err)
	}
	// The new pack holds every object of the merged ones before any of
	// them goes.
	got, err := packObjects(gitDir, h)
	if err != nil || len(got) != len(hashes) {
		if !slices.ContainsFunc(merge, func(p pack) bool { return p.hash == h }) {
			st.DeleteOldObjectPackAndIndex(h, time.Time{})
		}
		return rep, fmt.Errorf("repacking %d packs of %s: the new pack holds %d of %d objects (%v); kept the old packs", n, g.dir, len(got), len(hashes), err)
	}
	for _, p := range merge {
		if p.hash == h {
			continue
		}
		if err := st.DeleteOldObjectPackAndIndex(p.hash, time.Time{}); err != nil {
			return rep, fmt.Errorf("removing merged pack %s of %s: %w", p.hash, g.dir, err)
		}
	}
	rep.Merged, rep.After, rep.Took = n, len(packs)-n+1, time.Since(t0)
	return rep, nil
}

// packObjects returns the objects a pack's index lists.
func packObjects(gitDir string, h plumbing.Hash) ([]plumbing.Hash, error) {
	f, err := os.Open(filepath.Join(packDir(gitDir), "pack-"+h.String()+".idx"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(f).Decode(idx); err != nil {
		return nil, fmt.Errorf("reading the index of pack %s: %w", h, err)
	}
	it, err := idx.Entries()
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []plumbing.Hash
	for {
		e, err := it.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e.Hash)
	}
}

func uniqueHashes(hs []plumbing.Hash) []plumbing.Hash {
	slices.SortFunc(hs, func(a, b plumbing.Hash) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(hs)
}

// writePack writes one pack of hashes (whole objects) into the storage
// and returns its hash; once ctx ends the write fails and the partial
// pack is left for removeTmpPacks.
func writePack(ctx context.Context, st *filesystem.Storage, hashes []plumbing.Hash) (h plumbing.Hash, err error) {
	w, err := st.PackfileWriter()
	if err != nil {
		return h, err
	}
	h, err = packfile.NewEncoder(ctxWriter{ctx: ctx, w: w}, st, false).Encode(hashes, 0)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return h, err
}

// removeTmpPacks removes what a failed pack write left.
func removeTmpPacks(gitDir string) {
	tmps, _ := filepath.Glob(filepath.Join(packDir(gitDir), "tmp_pack_*"))
	for _, f := range tmps {
		os.Remove(f)
	}
}

// ctxWriter fails every write once its context has ended, which ends
// the encoder writing through it.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, fmt.Errorf("stopped (%w); the clone is as it was", err)
	}
	return c.w.Write(p)
}
