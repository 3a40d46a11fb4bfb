package bounded

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// OpenState opens (creating, with perm) a file syslet keeps its own state
// in for writing: never through a symlink planted at its name, never
// blocking on a FIFO, and only a regular file will do. flag adds to
// O_RDWR|O_CREATE (os.O_APPEND, say).
func OpenState(p string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, perm)
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, &NotRegularError{Path: p, Mode: fs.ModeSymlink}
	case errors.Is(err, unix.EISDIR):
		return nil, &NotRegularError{Path: p, Mode: fs.ModeDir}
	case err != nil:
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &NotRegularError{Path: p, Mode: fi.Mode()}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// WriteState replaces one of syslet's own files (a saved plan, a
// generation, webhookd's status, a metrics textfile) with data, mode perm:
// a new file beside it (created exclusively, so nothing planted at a
// temporary name is followed), written and fsynced, renamed over p, and
// the directory fsynced. A crash or a power cut leaves the old content or
// the new one, never a mix.
func WriteState(p string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(p)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(p)+"-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // gone after the rename; a leftover otherwise
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
