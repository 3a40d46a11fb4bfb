package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
)

// Root is a directory standing in for "/".
type Root struct{ Dir string }

// New returns a Root at dir.
func New(dir string) Root { return Root{Dir: dir} }

// Path maps an absolute host path to the real path under the root.
func (r Root) Path(p string) string {
	return filepath.Join(r.Dir, filepath.FromSlash(path.Clean("/"+p)))
}

// ReadTree reads every directory, regular file and symlink under the given
// host directories. Missing directories read as empty. File contents are
// read whole: they are unit files and config files, small by nature.
func (r Root) ReadTree(dirs ...string) (map[string]host.File, error) {
	out := map[string]host.File{}
	for _, d := range dirs {
		base := r.Path(d)
		err := filepath.WalkDir(base, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == base {
					return fs.SkipDir
				}
				return err
			}
			rel, err := filepath.Rel(base, p)
			if err != nil {
				return err
			}
			hp := path.Join(d, filepath.ToSlash(rel))
			info, err := e.Info()
			if err != nil {
				return err
			}
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				t, err := os.Readlink(p)
				if err != nil {
					return err
				}
				out[hp] = host.File{Mode: info.Mode(), Link: t}
			case e.IsDir():
				out[hp] = host.File{Mode: info.Mode()}
			case e.Type().IsRegular():
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				out[hp] = host.File{Mode: info.Mode(), Data: data, ModTime: info.ModTime()}
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading %s: %w", d, err)
		}
	}
	return out, nil
}

// WriteFile replaces p atomically with data and mode, creating parent
// directories (0755) as needed. A directory in the way is removed first:
// every path syslet writes lies in a tree it owns.
func (r Root) WriteFile(p string, data []byte, mode uint32) error {
	full := r.Path(p)
	dir := filepath.Dir(full)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if fi, err := os.Lstat(full); err == nil && fi.IsDir() {
		if err := os.RemoveAll(full); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	if err := writeAtomic(full, data, fs.FileMode(mode)); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return nil
}

func writeAtomic(full string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(full)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(full)+".syslet-*")
	if err != nil {
		return err
	}
	clean := func() { tmp.Close(); os.Remove(tmp.Name()) }
	if _, err := tmp.Write(data); err != nil {
		clean()
		return err
	}
	// CreateTemp makes 0600 and umask never applies to Chmod, so the
	// final mode is exactly the one asked for.
	if err := tmp.Chmod(mode); err != nil {
		clean()
		return err
	}
	if err := tmp.Sync(); err != nil {
		clean()
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), full); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WriteDir installs files as the next version of the config directory p
// and switches to it with one rename of the ..data link, so a process
// reading the directory sees the old set or the new set, never a mix.
// Per-file links are added or removed after the switch; old versions are
// deleted last.
func (r Root) WriteDir(p string, files []host.DirFile) error {
	full := r.Path(p)
	if err := r.writeDir(full, files); err != nil {
		return fmt.Errorf("writing config dir %s: %w", p, err)
	}
	return nil
}

func (r Root) writeDir(full string, files []host.DirFile) error {
	if fi, err := os.Lstat(full); err == nil && !fi.IsDir() {
		if err := os.Remove(full); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(full, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(full)
	if err != nil {
		return err
	}
	next := 1
	for _, e := range ents {
		if n, ok := layout.Version(e.Name()); ok && n >= next {
			next = n + 1
		}
	}
	vname := layout.VersionName(next)
	vdir := filepath.Join(full, vname)
	if err := os.Mkdir(vdir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := writeAtomic(filepath.Join(vdir, f.Name), f.Content, fs.FileMode(f.Mode)); err != nil {
			return err
		}
	}
	if err := syncDir(vdir); err != nil {
		return err
	}
	if err := replaceLink(full, layout.DataLink, vname); err != nil {
		return err
	}
	want := map[string]bool{}
	for _, f := range files {
		want[f.Name] = true
		if err := replaceLink(full, f.Name, layout.FileLink(f.Name)); err != nil {
			return err
		}
	}
	for _, e := range ents {
		n := e.Name()
		_, isVersion := layout.Version(n)
		switch {
		case isVersion && n != vname:
			if err := os.RemoveAll(filepath.Join(full, n)); err != nil {
				return err
			}
		case !layout.Internal(n) && !want[n]:
			if err := os.RemoveAll(filepath.Join(full, n)); err != nil {
				return err
			}
		}
	}
	return syncDir(full)
}

// replaceLink points dir/name at target through a temporary link and a
// rename, so the name never disappears.
func replaceLink(dir, name, target string) error {
	link := filepath.Join(dir, name)
	if cur, err := os.Readlink(link); err == nil && cur == target {
		return nil
	}
	if fi, err := os.Lstat(link); err == nil && fi.IsDir() {
		if err := os.RemoveAll(link); err != nil {
			return err
		}
	}
	tmp := filepath.Join(dir, "..tmp-"+name)
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Remove deletes p (a file or a whole directory) and then every parent
// directory left empty, up to but not including stop. A missing p is not
// an error: the goal is that it does not exist.
func (r Root) Remove(p, stop string) error {
	full := r.Path(p)
	if err := os.RemoveAll(full); err != nil {
		return fmt.Errorf("removing %s: %w", p, err)
	}
	if stop == "" {
		return syncDir(filepath.Dir(full))
	}
	limit := r.Path(stop)
	for dir := filepath.Dir(full); strings.HasPrefix(dir, limit+string(filepath.Separator)); dir = filepath.Dir(dir) {
		ents, err := os.ReadDir(dir)
		if err != nil || len(ents) > 0 {
			break
		}
		if err := os.Remove(dir); err != nil {
			break
		}
	}
	if err := syncDir(existingParent(full)); err != nil {
		return fmt.Errorf("removing %s: %w", p, err)
	}
	return nil
}

func existingParent(p string) string {
	for d := filepath.Dir(p); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			return d
		}
	}
}

// Exists reports whether p exists (without following a final symlink).
func (r Root) Exists(p string) bool {
	_, err := os.Lstat(r.Path(p))
	return err == nil
}
