package filemode

import (
	"io/fs"
	"testing"

	"golang.org/x/sys/unix"
)

// Every file type stat(2) reports is named, and as the same type fs
// knows it by.
func TestFromStatAndDescribe(t *testing.T) {
	for _, tc := range []struct {
		stat uint32
		want string
		mode fs.FileMode
	}{
		{unix.S_IFREG | 0o640, "a regular file", 0o640},
		{unix.S_IFDIR | 0o755, "a directory", fs.ModeDir | 0o755},
		{unix.S_IFLNK | 0o777, "a symlink", fs.ModeSymlink | 0o777},
		{unix.S_IFIFO | 0o600, "a FIFO", fs.ModeNamedPipe | 0o600},
		{unix.S_IFSOCK | 0o600, "a socket", fs.ModeSocket | 0o600},
		{unix.S_IFCHR | 0o600, "a character device", fs.ModeDevice | fs.ModeCharDevice | 0o600},
		{unix.S_IFBLK | 0o600, "a block device", fs.ModeDevice | 0o600},
	} {
		m := FromStat(tc.stat)
		if m != tc.mode {
			t.Errorf("FromStat(%o) = %v, want %v", tc.stat, m, tc.mode)
		}
		if got := Describe(m); got != tc.want {
			t.Errorf("Describe(%v) = %q, want %q", m, got, tc.want)
		}
	}
}
