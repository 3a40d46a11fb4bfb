package bounded

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/syslet/syslet/pkg/filemode"
)

// ErrEscapes is matched by errors.Is for every *EscapeError.
var ErrEscapes = errors.New("leads outside its directory")

// EscapeError is a name inside a directory that leads outside it through
// a symlink (a relative link climbing out with "..", or an absolute link).
type EscapeError struct {
	Path string // the name as asked for, joined to its directory
	Dir  string
}

func (e *EscapeError) Error() string {
	return fmt.Sprintf("%s leads outside %s through a symlink: syslet reads it only from inside the directory", e.Path, e.Dir)
}

func (e *EscapeError) Is(target error) bool { return target == ErrEscapes }

// maxLinks is how many symlinks one resolution may follow (the kernel's
// own limit).
const maxLinks = 40

// OpenBeneath opens name, a path relative to the directory dir, for
// reading as OpenAt does, following symlinks only while they stay inside
// dir: every component is opened with O_NOFOLLOW relative to the one
// before, a link is read and its target resolved in turn, and a link that
// is absolute or climbs above dir is an *EscapeError. The file is then
// checked to be regular and within k's cap. It works on any kernel
// (openat2's RESOLVE_BENEATH, done by hand).
func OpenBeneath(dir, name string, k Kind) (*os.File, fs.FileInfo, error) {
	p := path.Join(dir, name)
	root, err := retry(func() (int, error) {
		return unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	stack := []int{root} // the directories walked down into, dir first
	var names []string   // their names below dir
	defer func() {
		for _, fd := range stack {
			unix.Close(fd)
		}
	}()
	comps := strings.Split(name, "/")
	links := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) == 1 {
				return nil, nil, &EscapeError{Path: p, Dir: dir}
			}
			unix.Close(stack[len(stack)-1])
			stack, names = stack[:len(stack)-1], names[:len(names)-1]
			continue
		}
		cur := stack[len(stack)-1]
		var st unix.Stat_t
		if err := unix.Fstatat(cur, c, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return nil, nil, openError(cur, c, p, false, err)
		}
		if filemode.FromStat(st.Mode)&fs.ModeSymlink != 0 {
			if links++; links > maxLinks {
				return nil, nil, &fs.PathError{Op: "open", Path: p, Err: unix.ELOOP}
			}
			target, err := readlink(cur, c)
			if err != nil {
				return nil, nil, &fs.PathError{Op: "readlink", Path: p, Err: err}
			}
			if strings.HasPrefix(target, "/") {
				return nil, nil, &EscapeError{Path: p, Dir: dir}
			}
			comps = append(strings.Split(target, "/"), comps...)
			continue
		}
		if (len(comps) > 0 || k.dir != nil) && filemode.FromStat(st.Mode).IsDir() {
			fd, err := retry(func() (int, error) {
				return unix.Openat(cur, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			})
			if err != nil {
				return nil, nil, openError(cur, c, p, false, err)
			}
			stack, names = append(stack, fd), append(names, c)
			continue
		}
		if k.dir != nil {
			return nil, nil, &NotRegularError{Path: p, Mode: filemode.FromStat(st.Mode), Dir: true}
		}
		if len(comps) > 0 {
			return nil, nil, &fs.PathError{Op: "open", Path: p, Err: unix.ENOTDIR}
		}
		if m := filemode.FromStat(st.Mode); !m.IsRegular() {
			return nil, nil, &NotRegularError{Path: p, Mode: m} // refused without being opened
		}
		fd, _, err := OpenAt(cur, c, p, Kind{What: k.What, Max: k.Max})
		if err != nil {
			return nil, nil, err
		}
		_ = unix.SetNonblock(fd, false)
		f := os.NewFile(uintptr(fd), p)
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		return f, fi, nil
	}
	if k.dir != nil {
		*k.dir = path.Join(append([]string{dir}, names...)...)
		return nil, nil, nil
	}
	// The name resolved to dir itself, or to a directory inside it.
	return nil, nil, &NotRegularError{Path: p, Mode: fs.ModeDir}
}

// DirBeneath resolves name, a path relative to dir, to a directory inside
// dir as OpenBeneath resolves a file: symlinks are followed only while
// they stay inside dir. It returns the directory's path, dir joined with
// the real names below it (no link among them).
func DirBeneath(dir, name string) (string, error) {
	var out string
	_, _, err := OpenBeneath(dir, name, Kind{What: "a directory", dir: &out})
	if err != nil {
		return "", err
	}
	if out == "" {
		return "", &NotRegularError{Path: path.Join(dir, name), Dir: true}
	}
	return out, nil
}

func readlink(dirfd int, name string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
