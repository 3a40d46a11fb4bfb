package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
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
	return check(srcs), nil
}

// check runs the host-independent checks on sources already read (also
// used by push, which reads a fleet's directories itself).
func check(srcs []spec.Source) *loaded {
	l := &loaded{srcs: srcs}
	l.specs, l.report = spec.Load(srcs)
	l.out = render.Render(l.specs)
	l.report.Merge(render.Check(l.out))
	l.report.Sort()
	return l
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
