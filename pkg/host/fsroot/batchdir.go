package fsroot

import (
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
)

// WriteDir writes the config dir p in its versioned layout (Root.WriteDir
// says which). A dir that is not there yet is built in place, with no sync
// of its own: the batch syncs once at its end. One whose current version
// already holds exactly these files, each with its link and nothing else
// beside them, is left alone. Anything else, an earlier version or
// something in the way, is prepared and switched as an apply does it. A
// render of thousands of config dirs synced each one's files and
// directories, twice over when nothing had changed.
func (b *Batch) WriteDir(p string, files []host.DirFile) error {
	hp := clean(p)
	parent, base := split(hp)
	pfd, err := b.dirs.open(parent)
	if err != nil {
		return b.r.WriteDir(p, files) // it names the problem
	}
	m, err := lstatAt(pfd, base)
	switch {
	case errors.Is(err, unix.ENOENT):
		if err := buildDir(pfd, base, files); err != nil {
			return fmt.Errorf("writing config dir %s: %w", hp, err)
		}
		return nil
	case err == nil && m.IsDir() && dirHolds(pfd, base, hp, files):
		return nil
	}
	return b.r.WriteDir(p, files)
}

// buildDir makes dirfd/name a new config dir holding files as its first
// version, without syncing: the layout Root.WriteDir gives a new one.
func buildDir(dirfd int, name string, files []host.DirFile) error {
	dfd, err := mkdirSub(dirfd, name)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	vname := layout.VersionName(1)
	if err := writeVersion(dfd, vname, files, false); err != nil {
		return err
	}
	return linkVersion(dfd, vname, files)
}

// dirHolds reports whether the config dir dirfd/name is exactly files:
// ..data names a version holding those files (content and mode) and
// nothing else, and beside it are only that version and each file's link.
func dirHolds(dirfd int, name, hp string, files []host.DirFile) bool {
	dfd, err := openSub(dirfd, name)
	if err != nil {
		return false
	}
	defer unix.Close(dfd)
	cur, err := readlinkAt(dfd, layout.DataLink)
	if _, ok := layout.Version(cur); err != nil || !ok {
		return false
	}
	want := []string{layout.DataLink, cur}
	for _, f := range files {
		if !layout.Internal(f.Name) {
			want = append(want, f.Name)
			if l, err := readlinkAt(dfd, f.Name); err != nil || l != layout.FileLink(f.Name) {
				return false
			}
		}
	}
	if !sameNames(dfd, want) {
		return false
	}
	vfd, err := openSub(dfd, cur)
	if err != nil {
		return false
	}
	defer unix.Close(vfd)
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	if !sameNames(vfd, names) {
		return false
	}
	for _, f := range files {
		if same, _ := holds(vfd, f.Name, hp+"/"+f.Name, f.Content, f.Mode); !same {
			return false
		}
	}
	return true
}

// sameNames reports whether the directory holds exactly names.
func sameNames(dirfd int, names []string) bool {
	got, err := readNames(dirfd)
	if err != nil || len(got) != len(names) {
		return false
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(names))
	return slices.Equal(got, want)
}
