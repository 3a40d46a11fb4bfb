package deploy

import (
	"bufio"
	"fmt"
	"io"
	"sync"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/host/fsroot"
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
	if err := root.Check(paths...); err != nil {
		return fmt.Errorf("nothing was written: %w", err)
	}
	// Unit files (one directory) and the rest (a directory per container
	// or build) are written side by side: creating files and directories
	// is most of the time, and the kernel takes them in parallel in
	// different directories. Each names what it wrote, in order.
	units, rest := root.NewBatch(), root.NewBatch()
	var unitLines []string
	var unitErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		unitErr = func() error {
			for _, u := range out.Units {
				if u.Link != "" {
					if err := root.WriteLink(u.Path, u.Link); err != nil {
						return err
					}
					unitLines = append(unitLines, u.Path+" -> "+u.Link)
				} else {
					if err := units.WriteFile(u.Path, u.File.Bytes(), 0o644); err != nil {
						return err
					}
					unitLines = append(unitLines, u.Path)
				}
				for _, d := range u.DropIns {
					if err := units.WriteFile(d.Path, d.Content, 0o644); err != nil {
						return err
					}
					unitLines = append(unitLines, d.Path)
				}
			}
			return nil
		}()
	})
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
	// A line per path, a hundred thousand of them for a big set: one
	// write of the lot, not a system call each.
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, l := range unitLines {
		view.Printf(bw, "%s\n", l)
	}
	for _, l := range restLines {
		view.Printf(bw, "%s\n", l)
	}
	listed := bw.Flush()
	if listed != nil {
		listed = fmt.Errorf("listing what was written: %w", listed)
	}
	for _, err := range []error{unitErr, restErr, units.Close(), rest.Close(), listed} {
		if err != nil {
			return err
		}
	}
	return nil
}
