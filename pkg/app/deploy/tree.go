package deploy

import (
	"bufio"
	"fmt"
	"io"
	"sync"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/parallel"
	"github.com/syslet/syslet/render"
)

// WriteTree writes what a host would get — unit files (a template's
// instances as links to it) and their drop-ins, config files, config
// directories in their versioned layout, build contexts — under dir
// as if it were "/", naming each path on w. It removes nothing already
// there. Every path is checked before the first write, so a symlink in
// the way fails with nothing written rather than half-way. The files are
// written as one batch: no sync per file, one of the filesystem at the
// end (fsroot.Batch).
func WriteTree(dir string, out *render.Output, w io.Writer) error {
	root := fsroot.New(dir)
	if err := root.Check(treePaths(out)...); err != nil {
		return fmt.Errorf("nothing was written: %w", err)
	}
	// Unit files (one directory) and the rest (a directory per container
	// or build) are written side by side, and the unit files themselves
	// in as many shards as there are CPUs, each a batch of its own:
	// creating files is most of the time, and the kernel writes them in
	// parallel (even in one directory, whose lock it holds only to add
	// the name). Each shard names what it wrote, and the shards are listed
	// in order.
	shards := parallel.Parts(len(out.Units), 1024)
	unitLines := make([][]string, shards)
	unitErrs := make([]error, shards)
	batches := make([]*fsroot.Batch, shards)
	var wg sync.WaitGroup
	wg.Go(func() {
		parallel.Run(shards, len(out.Units), func(shard, lo, hi int) {
			batches[shard] = root.NewBatch()
			unitErrs[shard] = writeUnits(root, batches[shard], out.Units[lo:hi], &unitLines[shard])
		})
	})
	rest := root.NewBatch()
	var restLines []string
	restErr := func() error {
		for _, f := range out.Files {
			if err := rest.WriteFile(f.Path, f.Content, f.Mode); err != nil {
				return err
			}
			restLines = append(restLines, f.Path)
		}
		for _, d := range out.Dirs {
			if err := rest.WriteDir(d.Path, d.Installed()); err != nil {
				return err
			}
			restLines = append(restLines, fmt.Sprintf("%s/ (%d files)", d.Path, len(d.Files)))
		}
		return nil
	}()
	wg.Wait()
	listed := listWritten(w, append(unitLines, restLines))
	errs := unitErrs
	for _, b := range batches {
		if b != nil {
			errs = append(errs, b.Close())
		}
	}
	for _, err := range append(errs, restErr, rest.Close(), listed) {
		if err != nil {
			return err
		}
	}
	return nil
}

// treePaths are the paths WriteTree writes (an instance's link is
// checked by writing it).
func treePaths(out *render.Output) []string {
	var paths []string
	for _, u := range out.Units {
		if u.Link == "" {
			paths = append(paths, u.Path)
		}
		for _, d := range u.DropIns {
			paths = append(paths, d.Path)
		}
	}
	for _, f := range out.Files {
		paths = append(paths, f.Path)
	}
	for _, d := range out.Dirs {
		paths = append(paths, d.Path)
	}
	return paths
}

// listWritten names on w each path written, a line each, in order. A
// hundred thousand of them for a big set: one write of the lot, not a
// system call each.
func listWritten(w io.Writer, parts [][]string) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, lines := range parts {
		for _, l := range lines {
			view.Printf(bw, "%s\n", l)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("listing what was written: %w", err)
	}
	return nil
}

// writeUnits writes units (their files, an instance's link, their
// drop-ins) in batch, naming each path in lines.
func writeUnits(root fsroot.Root, batch *fsroot.Batch, units []*render.Unit, lines *[]string) error {
	for _, u := range units {
		if u.Link != "" {
			if err := root.WriteLink(u.Path, u.Link); err != nil {
				return err
			}
			*lines = append(*lines, u.Path+" -> "+u.Link)
		} else {
			if err := batch.WriteFile(u.Path, u.Bytes(), 0o644); err != nil {
				return err
			}
			*lines = append(*lines, u.Path)
		}
		for _, d := range u.DropIns {
			if err := batch.WriteFile(d.Path, d.Content, 0o644); err != nil {
				return err
			}
			*lines = append(*lines, d.Path)
		}
	}
	return nil
}
