package adopt

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
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

// unitKind is a hand-written quadlet as adopt reads it: a regular file,
// not through a symlink, never a FIFO, bounded as the planner bounds an
// installed unit.
var unitKind = bounded.Kind{What: "a unit file", Max: fsroot.MaxFileSize}

// contextLimits bound a build context: what a spec can hold at most
// (its input bound), since the context becomes one. A context directory
// such as "/" fails fast with the cap it passed, instead of reading the
// filesystem.
var contextLimits = fsroot.Limits{What: "a build context", Read: spec.DefaultMaxInput, Kept: spec.DefaultMaxInput, Entries: 100_000}

// readUnit reads a unit file: a regular file of bounded size.
func readUnit(p string) ([]byte, error) {
	return bounded.ReadFile(p, unitKind)
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
	tree, err := fsroot.New("/").ReadTreeWithin(contextLimits, dir)
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
