package podman

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A volume's data directory as a tar, for a podman without the volume
// export and import endpoints (ExportVolume): what podman's own export of
// a local volume writes — every entry relative to the directory, with its
// mode, owner and modification time — and the reverse, which never writes
// outside the directory nor through a symlink.

// tarDir writes the tree under dir to w.
func tarDir(dir string, w io.Writer) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		hdr.Name = filepath.ToSlash(rel)
		if fi.IsDir() {
			hdr.Name += "/"
		}
		hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyN(tw, f, hdr.Size)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// untarDir unpacks the tar read from r under dir. An entry that would
// land outside dir, or be written through a symlink, is an error.
func untarDir(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	type dirTime struct {
		path string
		t    time.Time
	}
	var dirs []dirTime
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(filepath.FromSlash(hdr.Name))
		if name == "." {
			continue
		}
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, ".."+string(filepath.Separator)) {
			return fmt.Errorf("tar entry %q leaves the volume", hdr.Name)
		}
		target := filepath.Join(dir, name)
		if err := noLinkBetween(dir, filepath.Dir(target)); err != nil {
			return fmt.Errorf("tar entry %q: %w", hdr.Name, err)
		}
		mode := fs.FileMode(hdr.Mode).Perm() | fs.FileMode(hdr.Mode)&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.Mkdir(target, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			dirs = append(dirs, dirTime{target, hdr.ModTime})
		case tar.TypeReg:
			_ = os.Remove(target)
			f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			_ = os.Remove(target)
			if err := os.Symlink(hdr.Linkname, target); err != nil {
				return err
			}
		case tar.TypeLink:
			old := filepath.Join(dir, filepath.Clean(filepath.FromSlash(hdr.Linkname)))
			if rel, err := filepath.Rel(dir, old); err != nil || strings.HasPrefix(rel, "..") {
				return fmt.Errorf("tar entry %q links outside the volume", hdr.Name)
			}
			_ = os.Remove(target)
			if err := os.Link(old, target); err != nil {
				return err
			}
		case tar.TypeFifo:
			_ = os.Remove(target)
			if err := syscall.Mkfifo(target, uint32(mode.Perm())); err != nil {
				return err
			}
		default:
			continue // devices have no place in a volume's data
		}
		if err := os.Lchown(target, hdr.Uid, hdr.Gid); err != nil {
			return err
		}
		if hdr.Typeflag == tar.TypeSymlink {
			continue
		}
		if err := os.Chmod(target, mode); err != nil {
			return err
		}
		if hdr.Typeflag != tar.TypeDir {
			_ = os.Chtimes(target, hdr.ModTime, hdr.ModTime)
		}
	}
	// Directories last: writing into one changes its time.
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Chtimes(dirs[i].path, dirs[i].t, dirs[i].t)
	}
	return nil
}

// noLinkBetween refuses a symlink on the way from dir down to p.
func noLinkBetween(dir, p string) error {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." {
		return err
	}
	cur := dir
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symlink: refused", cur)
		}
	}
	return nil
}
