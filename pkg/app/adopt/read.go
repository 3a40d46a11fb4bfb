package adopt

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// Read reads the hand-written quadlet files at paths — unit files, a
// template's instances (links to it, or copies), drop-in directories —
// and for each unit its own drop-in directory (NAME.KIND.d/*.conf), a
// .build's context directory and a .kube's YAML file, into what Convert
// takes. A drop-in directory given on its own is read with its unit. It
// only reads, and follows no link but an instance's.
func Read(paths []string) ([]File, error) {
	var files []File
	seen := map[string]bool{}
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		if fi.IsDir() {
			// A unit's drop-in directory is read with the unit, which must be
			// among the paths; any other directory (podman's users/, say,
			// which a glob of the unit directory gives) holds no unit.
			if strings.HasSuffix(p, ".d") && spec.KindOfFile(strings.TrimSuffix(filepath.Base(p), ".d")) != "" &&
				!contains(paths, strings.TrimSuffix(filepath.Clean(p), ".d")) {
				return nil, fmt.Errorf("%s is the drop-in directory of %s, which is not among the files to adopt", p, strings.TrimSuffix(filepath.Base(p), ".d"))
			}
			// A directory named as a unit is a mistake to say, not to skip.
			if spec.KindOfFile(filepath.Base(p)) != "" {
				return nil, fmt.Errorf("%s is a directory, not a quadlet unit file", p)
			}
			continue
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		f := File{Path: p}
		if fi.Mode()&os.ModeSymlink != 0 {
			t, err := os.Readlink(p)
			if err != nil {
				return nil, err
			}
			f.Link = t
			if !strings.Contains(t, "/") {
				// An instance's link to its template beside it reads as the template.
				if f.Data, err = readUnit(filepath.Join(filepath.Dir(p), t)); err != nil {
					return nil, err
				}
			}
		} else if f.Data, err = readUnit(p); err != nil {
			return nil, err
		}
		if f.DropIns, err = readDropIns(p + ".d"); err != nil {
			return nil, err
		}
		switch spec.KindOfFile(filepath.Base(p)) {
		case spec.Build:
			if f.Context, err = readContext(p, f.Data); err != nil {
				return nil, err
			}
		case spec.Kube:
			if f.Yaml, err = readYaml(p, f.Data); err != nil {
				return nil, err
			}
		}
		files = append(files, f)
	}
	if len(files) == 0 && len(paths) > 0 {
		return nil, fmt.Errorf("no quadlet unit file among %s: directories are skipped; give the unit files (syslet adopt DIR/*)", strings.Join(paths, " "))
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

func contains(paths []string, p string) bool {
	for _, q := range paths {
		if filepath.Clean(q) == p {
			return true
		}
	}
	return false
}

// readUnit reads a unit file: a regular file of bounded size.
func readUnit(p string) ([]byte, error) {
	return bounded.ReadFile(p, unitKind)
}

// readDropIns reads a unit's own drop-in directory: its regular *.conf
// files (nil when there is none).
func readDropIns(dir string) (map[string][]byte, error) {
	fi, err := os.Lstat(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a drop-in directory", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".conf") {
			continue
		}
		data, err := readUnit(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out[e.Name()] = data
	}
	return out, nil
}

// readYaml reads the YAML file a .kube's Yaml= names (relative to the
// unit's directory, as quadlet resolves it).
func readYaml(p string, data []byte) ([]byte, error) {
	uf, err := unit.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	y, ok := uf.Last(unit.Kube, unit.KeyYaml)
	if !ok {
		return nil, nil
	}
	if !path.IsAbs(y) {
		y = filepath.Join(filepath.Dir(p), y)
	}
	return bounded.ReadFile(y, yamlKind)
}

// yamlKind is the YAML file a .kube names: a regular file (a link the
// unit's author made is followed, as quadlet follows it), never a FIFO,
// bounded as a unit file.
var yamlKind = bounded.Kind{What: "a kube YAML file", Max: fsroot.MaxFileSize, Follow: true}

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
		dir = layout.BuildDirOf(unit.Base(filepath.Base(p)))
	}
	if err := contextDirAllowed(dir); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
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

// contextDirAllowed refuses a build context that is the whole filesystem
// or lies in one of the kernel's pseudo filesystems: podman would send
// all of it to the build, and adopt would copy it into a spec. Read
// anyway, it ends at the bound of a context (contextLimits) or at the
// first file only the kernel may read, which says less about the cause.
func contextDirAllowed(dir string) error {
	dir = path.Clean(dir)
	if dir == "/" {
		return fmt.Errorf("SetWorkingDirectory=/ makes the whole filesystem the build context; adopt reads a context only from a directory of its own (move the Containerfile and what it copies into one, and name it)")
	}
	for _, pseudo := range []string{"/proc", "/sys", "/dev"} {
		if dir == pseudo || strings.HasPrefix(dir, pseudo+"/") {
			return fmt.Errorf("SetWorkingDirectory=%s is in %s, a filesystem the kernel makes up, not a build context; adopt reads a context only from a directory of its own", dir, pseudo)
		}
	}
	return nil
}
