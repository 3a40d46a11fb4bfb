package deploy

import (
	"fmt"
	"io"

	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/render"
)

// WriteTree writes what a host would get — unit files (a template's
// instances as links to it) and their drop-ins, config files, config
// directories in their versioned layout, build contexts — under dir
// as if it were "/", naming each path on w. It removes nothing already
// there. Every path is checked before the first write, so a symlink in
// the way fails with nothing written rather than half-way.
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
	for _, u := range out.Units {
		if u.Link != "" {
			if err := root.WriteLink(u.Path, u.Link); err != nil {
				return err
			}
			fmt.Fprintln(w, u.Path+" -> "+u.Link)
		} else {
			if err := root.WriteFile(u.Path, u.File.Bytes(), 0o644); err != nil {
				return err
			}
			fmt.Fprintln(w, u.Path)
		}
		for _, d := range u.DropIns {
			if err := root.WriteFile(d.Path, d.Content, 0o644); err != nil {
				return err
			}
			fmt.Fprintln(w, d.Path)
		}
	}
	for _, f := range out.Files {
		if err := root.WriteFile(f.Path, f.Content, f.Mode); err != nil {
			return err
		}
		fmt.Fprintln(w, f.Path)
	}
	for _, d := range out.Dirs {
		if err := root.WriteDir(d.Path, d.Installed()); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s/ (%d files)\n", d.Path, len(d.Files))
	}
	return nil
}
