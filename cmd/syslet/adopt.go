package main

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/syslet/syslet/pkg/app/adopt"
	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/redact"
	"github.com/syslet/syslet/pkg/unit"
)

// cmdAdopt prints v1 specs for hand-written quadlet files (and the build
// contexts of .build files) on stdout; what the first apply of them would
// still change goes to stderr. It reads only; nothing is written.
func cmdAdopt(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("adopt", stderr)
	pos, err := parseInterspersed(fs, args)
	if err == nil && len(pos) == 0 {
		err = fmt.Errorf("%w: syslet adopt FILE… (.container, .volume, .network, .build)", errUsage)
	}
	if err != nil {
		fmt.Fprintln(stderr, "syslet adopt:", err)
		return exitError
	}
	var files []adopt.File
	for _, p := range pos {
		data, err := readUnit(p)
		if err != nil {
			fmt.Fprintln(stderr, "syslet adopt:", redact.Escape(err.Error()))
			return exitError
		}
		f := adopt.File{Path: p, Data: data}
		if strings.HasSuffix(p, ".build") {
			if f.Context, err = buildContext(p, data); err != nil {
				fmt.Fprintln(stderr, "syslet adopt:", redact.Escape(err.Error()))
				return exitError
			}
		}
		files = append(files, f)
	}
	res := adopt.Convert(files)
	stdout.Write(res.Specs)
	for _, n := range res.Notes {
		fmt.Fprintln(stderr, "syslet adopt: note:", redact.Line(n))
	}
	for _, f := range res.Failed {
		fmt.Fprintln(stderr, "syslet adopt: not adopted:", redact.Escape(f))
	}
	if len(res.Failed) > 0 {
		return exitInvalid
	}
	fmt.Fprintf(stderr, "syslet adopt: %d file(s) adopted", len(files))
	if len(res.ExternalSecrets) > 0 {
		fmt.Fprintf(stderr, ", %d podman secret(s) declared external (%s: syslet checks they exist and never changes them)",
			len(res.ExternalSecrets), redact.Escape(strings.Join(res.ExternalSecrets, ", ")))
	}
	if len(res.Notes) == 0 {
		fmt.Fprint(stderr, "; the rendered units mean exactly what the files say (the first apply is metadata-only)")
	}
	fmt.Fprintln(stderr)
	return exitOK
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

// buildContext reads the build directory of a .build file — its
// SetWorkingDirectory=, or syslet's /etc/containers/builds/<name> — without
// following symlinks.
func buildContext(p string, data []byte) (map[string]adopt.ContextFile, error) {
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
	out := map[string]adopt.ContextFile{}
	for fp, f := range tree {
		if f.Link != "" || !f.Mode.IsRegular() {
			continue
		}
		out[strings.TrimPrefix(fp, dir+"/")] = adopt.ContextFile{Data: f.Data, Mode: uint32(f.Mode.Perm())}
	}
	return out, nil
}
