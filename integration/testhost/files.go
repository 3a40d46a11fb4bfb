package testhost

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Files in and out of a guest: one file through ssh, whole trees as tar
// streams (no scp or sftp needed in the guest).

// WriteFile writes data to path in the guest (parent directories are created).
func (h *Host) WriteFile(path string, data []byte, mode fs.FileMode) error {
	cmd := fmt.Sprintf("mkdir -p %s && cat > %s && chmod %o %s", Quote(filepath.Dir(path)), Quote(path), mode.Perm(), Quote(path))
	if r := h.RunInput(bytes.NewReader(data), cmd); !r.OK() {
		return fmt.Errorf("testhost: write %s: %s", path, r)
	}
	return nil
}

// ReadFile returns the content of path in the guest.
func (h *Host) ReadFile(path string) ([]byte, error) {
	r := h.Run("cat " + Quote(path))
	if !r.OK() {
		return nil, fmt.Errorf("testhost: read %s: %s", path, r)
	}
	return []byte(r.Stdout), nil
}

// CopyIn copies the host file or directory src to dst in the guest, like `cp -a`: a file becomes the
// file dst; a directory's contents go into the directory dst (created if missing). Modes are kept,
// everything is owned by root.
func (h *Host) CopyIn(src, dst string) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeTar(pw, src, fi, filepath.Base(dst))) }()
	var cmd string
	if fi.IsDir() {
		cmd = fmt.Sprintf("mkdir -p %s && tar -x --no-same-owner -C %s", Quote(dst), Quote(dst))
	} else {
		cmd = fmt.Sprintf("mkdir -p %s && tar -x --no-same-owner -C %s", Quote(filepath.Dir(dst)), Quote(filepath.Dir(dst)))
	}
	r := h.RunInput(pr, cmd)
	pr.Close()
	if !r.OK() {
		return fmt.Errorf("testhost: copy %s to guest %s: %s", src, dst, r)
	}
	return nil
}

// writeTar writes src as a tar stream: a directory as its contents (names relative to it), a file as
// one entry named fileName.
func writeTar(w io.Writer, src string, fi fs.FileInfo, fileName string) error {
	tw := tar.NewWriter(w)
	add := func(path, name string, fi fs.FileInfo) error {
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			var err error
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		hdr.Name, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = name, 0, 0, "root", "root"
		if fi.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := io.Copy(tw, f); err != nil {
				return err
			}
		}
		return nil
	}
	if !fi.IsDir() {
		if err := add(src, fileName, fi); err != nil {
			return err
		}
		return tw.Close()
	}
	err := filepath.Walk(src, func(path string, fi fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		return add(path, filepath.ToSlash(rel), fi)
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// CopyOut copies the guest file or directory src to dst on this machine: a file becomes the file dst;
// a directory's contents go into the directory dst.
func (h *Host) CopyOut(src, dst string) error {
	r := h.Run("test -d " + Quote(src) + " && echo dir || { test -e " + Quote(src) + " && echo file; }")
	if !r.OK() {
		return fmt.Errorf("testhost: copy from guest: %s does not exist: %s", src, r)
	}
	isDir := strings.TrimSpace(r.Stdout) == "dir"
	var cmd string
	if isDir {
		cmd = "tar -c -C " + Quote(src) + " ."
	} else {
		cmd = "tar -c -C " + Quote(filepath.Dir(src)) + " " + Quote(filepath.Base(src))
	}
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan Result, 1)
	go func() {
		res := h.stream(nil, pw, &stderr, cmd)
		pw.Close()
		done <- res
	}()
	xerr := readTar(pr, dst, isDir)
	io.Copy(io.Discard, pr)
	res := <-done
	res.Stderr = stderr.String()
	if !res.OK() {
		return fmt.Errorf("testhost: copy guest %s to %s: %s", src, dst, res)
	}
	if xerr != nil {
		return fmt.Errorf("testhost: copy guest %s to %s: %w", src, dst, xerr)
	}
	return nil
}

func readTar(r io.Reader, dst string, isDir bool) error {
	tr := tar.NewReader(r)
	if isDir {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
	} else if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		target := dst
		if isDir {
			name := filepath.Clean(hdr.Name)
			if name == "." {
				continue
			}
			if !filepath.IsLocal(name) {
				return fmt.Errorf("unsafe path %q in archive", hdr.Name)
			}
			target = filepath.Join(dst, name)
		}
		mode := fs.FileMode(hdr.Mode).Perm()
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, mode|0o700); err != nil {
				return err
			}
		case tar.TypeSymlink:
			os.Remove(target)
			if err := os.Symlink(hdr.Linkname, target); err != nil {
				return err
			}
		case tar.TypeLink:
			// A second name of a file already copied (syslet keeps a hard
			// link to a file it is about to replace).
			from := filepath.Clean(hdr.Linkname)
			if !isDir || !filepath.IsLocal(from) {
				return fmt.Errorf("unsafe hard link %q in archive", hdr.Linkname)
			}
			os.Remove(target)
			if err := os.Link(filepath.Join(dst, from), target); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
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
			if err := os.Chmod(target, mode); err != nil {
				return err
			}
		default:
			// devices, fifos: not needed by the tests
		}
	}
}
