package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/syslet/syslet/pkg/app/deploy"
	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// cmdRender writes what a host would get — unit files, config files,
// config directories in their versioned layout, build contexts — under
// --out as if it were "/". It does not remove anything already there.
type renderOptions struct {
	out, podman string
	maxInput    int64
}

func (o *renderOptions) define(f *flags) {
	f.String(&o.out, "out", "", "write under `DIR` as if it were / (required; never / itself)")
	f.String(&o.podman, "podman", unit.OldestPodman.String(), "check the units against podman `VERSION`")
	f.Bytes(&o.maxInput, "max-input", spec.DefaultMaxInput, "refuse spec input larger than `BYTES`")
}

func cmdRender(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o renderOptions
	f := commandFlags("render")
	o.define(f)
	outDir, podman, maxInput := &o.out, &o.podman, &o.maxInput
	pos, err := parseInterspersed(f.FlagSet, args)
	var path string
	if err == nil {
		path, err = oneSource(pos, false)
	}
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
		return usage(stdout, stderr, "render", err)
	}
	l, err := load.Path(path, load.Options{Stdin: stdin, MaxInput: *maxInput})
	if err != nil {
		view.Error(stderr, "syslet render", err)
		return exitError
	}
	l.CheckPodman(release)
	if l.Report.HasErrors() {
		view.Findings(stderr, l.Report)
		return exitInvalid
	}
	view.Findings(stderr, l.Report) // warnings
	if err := deploy.WriteTree(*outDir, l.Out, stdout); err != nil {
		view.Error(stderr, "syslet render", err)
		return exitError
	}
	view.Printf(stderr, "rendered %d units, %d files, %d config dirs under %s\n", len(l.Out.Units), len(l.Out.Files), len(l.Out.Dirs), *outDir)
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
