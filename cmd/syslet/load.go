package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/syslet/syslet/pkg/quadletcheck"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// loaded is the result of the host-independent half of the pipeline:
// read, pre-render validation, render, post-render validation.
type loaded struct {
	srcs   []spec.Source
	specs  []*spec.Spec
	out    *render.Output
	report report.Report
}

// load reads and validates specs from path ("-" = stdin, "" = default).
// The returned error is only for sources that cannot be read; invalid
// specs are findings in the report.
func load(path, root string, stdin io.Reader) (*loaded, error) {
	if path == "" {
		path = filepath.Join(root, spec.DefaultSource)
	}
	srcs, err := spec.ReadSources(path, stdin)
	if err != nil {
		if spec.IsNotExist(err) && path == filepath.Join(root, spec.DefaultSource) {
			return nil, fmt.Errorf("no PATH given and %s does not exist: pass a spec file or directory, or --stdin", path)
		}
		return nil, err
	}
	l := &loaded{srcs: srcs}
	l.specs, l.report = spec.Load(srcs)
	l.out = render.Render(l.specs)
	l.report.Merge(render.Check(l.out))
	l.report.Sort()
	return l, nil
}

// checkPodman runs the rendered unit set through podman's quadlet
// converter, gating keys by the podman release the specs are for. It is a
// step of its own because an apply on a host learns that release from the
// host, after loading.
func (l *loaded) checkPodman(p unit.Podman) {
	l.report.Merge(quadletcheck.Check(l.out, p, l.report))
	l.report.Sort()
}

// podmanFlag parses --podman: the podman release specs are checked against.
func podmanFlag(s string) (unit.Podman, error) {
	p, err := unit.ParsePodman(s)
	if err != nil {
		return p, fmt.Errorf("%w: --podman: %v", errUsage, err)
	}
	if p.Less(unit.OldestPodman) {
		return p, fmt.Errorf("%w: --podman %s: syslet supports podman %s and later", errUsage, s, unit.OldestPodman)
	}
	return p, nil
}

// printFindings writes findings one per line and a count.
func printFindings(w io.Writer, rep report.Report) {
	for _, f := range rep.Findings {
		fmt.Fprintln(w, f.String())
	}
	if n := rep.Errors(); n > 0 {
		fmt.Fprintf(w, "%d error(s): the specs are invalid; nothing was changed\n", n)
	}
}
