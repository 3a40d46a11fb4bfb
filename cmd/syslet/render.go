package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/syslet/syslet/pkg/app/deploy"
	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// cmdRender writes what a host would get — unit files, config files,
// config directories in their versioned layout, build contexts — under
// --out as if it were "/". It does not remove anything already there.
func cmdRender(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("render", stderr)
	outDir := fs.String("out", "", "directory standing in for / (required)")
	podman := fs.String("podman", unit.OldestPodman.String(), "podman release to check against")
	maxInput := fs.Int64("max-input", spec.DefaultMaxInput, "")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage
	}
	path, err := oneSource(pos, false)
	if err == nil && (path == "" || *outDir == "") {
		err = fmt.Errorf("%w: syslet render PATH --out DIR", errUsage)
	}
	var release unit.Podman
	if err == nil {
		release, err = podmanFlag(*podman)
	}
	if err == nil {
		*outDir, err = outRoot(*outDir)
	}
	if err != nil {
		fmt.Fprintln(stderr, "syslet render:", err)
		return exitUsage
	}
	l, err := load.Path(path, load.Options{Stdin: stdin, MaxInput: *maxInput})
	if err != nil {
		fmt.Fprintln(stderr, "syslet render:", err)
		return exitError
	}
	l.CheckPodman(release)
	if l.Report.HasErrors() {
		deploy.PrintFindings(stderr, l.Report)
		return exitInvalid
	}
	deploy.PrintFindings(stderr, l.Report) // warnings
	root := fsroot.New(*outDir)
	// Everything is checked before the first write, so a symlink in the
	// way fails the run with nothing written rather than half-way.
	var paths []string
	for _, u := range l.Out.Units {
		paths = append(paths, u.Path)
	}
	for _, f := range l.Out.Files {
		paths = append(paths, f.Path)
	}
	for _, d := range l.Out.Dirs {
		paths = append(paths, d.Path)
	}
	if err := root.Check(paths...); err != nil {
		fmt.Fprintln(stderr, "syslet render: nothing was written:", err)
		return exitError
	}
	n := 0
	for _, u := range l.Out.Units {
		if err := root.WriteFile(u.Path, u.File.Bytes(), 0o644); err != nil {
			fmt.Fprintln(stderr, "syslet render:", err)
			return exitError
		}
		fmt.Fprintln(stdout, u.Path)
		n++
	}
	for _, f := range l.Out.Files {
		if err := root.WriteFile(f.Path, f.Content, f.Mode); err != nil {
			fmt.Fprintln(stderr, "syslet render:", err)
			return exitError
		}
		fmt.Fprintln(stdout, f.Path)
		n++
	}
	for _, d := range l.Out.Dirs {
		if err := root.WriteDir(d.Path, d.Installed()); err != nil {
			fmt.Fprintln(stderr, "syslet render:", err)
			return exitError
		}
		fmt.Fprintf(stdout, "%s/ (%d files)\n", d.Path, len(d.Files))
		n++
	}
	fmt.Fprintf(stderr, "rendered %d units, %d files, %d config dirs under %s\n", len(l.Out.Units), len(l.Out.Files), len(l.Out.Dirs), *outDir)
	return exitOK
}

// outRoot cleans --out and refuses the live root: render writes a tree for
// inspection, never the host itself (an apply does that, with its checks).
func outRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if abs == "/" {
		return "", fmt.Errorf("%w: --out %q is the host's root; render writes a tree for inspection — apply to change the host", errUsage, dir)
	}
	return abs, nil
}
