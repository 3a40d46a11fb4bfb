package adopt

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/unit"
)

// Read reads the hand-written quadlet files at paths, and for each .build
// file its context directory, into what Convert takes. It only reads.
func Read(paths []string) ([]File, error) {
	var files []File
	for _, p := range paths {
		data, err := readUnit(p)
		if err != nil {
			return nil, err
		}
		f := File{Path: p, Data: data}
		if strings.HasSuffix(p, ".build") {
			if f.Context, err = readContext(p, data); err != nil {
				return nil, err
			}
		}
		files = append(files, f)
	}
	return files, nil
}

// readUnit reads a unit file: a regular file of bounded size.
func readUnit(p string) ([]byte, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > fsroot.MaxFileSize {
		return nil, fmt.Errorf("%s is not a regular unit file", p)
	}
	return os.ReadFile(p)
}

// readContext reads the build directory of a .build file — its
// SetWorkingDirectory=, or syslet's /etc/containers/builds/<name> — without
// following symlinks.
func readContext(p string, data []byte) (map[string]ContextFile, error) {
	uf, err := unit.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	dir, _ := uf.Last(unit.Build, unit.KeySetWorkingDirectory)
	if !path.IsAbs(dir) {
		dir = layout.BuildDirOf(strings.TrimSuffix(filepath.Base(p), ".build"))
	}
	tree, err := fsroot.New("/").ReadTree(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]ContextFile{}
	for fp, f := range tree {
		if f.Link != "" || !f.Mode.IsRegular() {
			continue
		}
		out[strings.TrimPrefix(fp, dir+"/")] = ContextFile{Data: f.Data, Mode: uint32(f.Mode.Perm())}
	}
	return out, nil
}
