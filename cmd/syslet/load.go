package main

import (
	"errors"
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
func load(path, root string, stdin io.Reader, maxInput int64) (*loaded, error) {
	if path == "" {
		path = filepath.Join(root, spec.DefaultSource)
	}
	srcs, err := spec.ReadSourcesMax(path, stdin, maxInput)
	var ie *spec.InputError
	if errors.As(err, &ie) {
		// Unusable input is invalid input (exit 2), reported like a finding.
		l := &loaded{out: &render.Output{}}
		l.report.Errorf(ie.Source, "", ie.Rule, "%s", ie.Msg)
		return l, nil
	}
	if err != nil {
		if spec.IsNotExist(err) && path == filepath.Join(root, spec.DefaultSource) {
			return nil, fmt.Errorf("no PATH given and %s does not exist: pass a spec file or directory, or --stdin", path)
		}
		return nil, err
	}
	l := &loaded{srcs: srcs}
	name := path
	if path == "-" {
		name = spec.StdinName
	}
	l.report = spec.CheckInput(name, srcs)
	if l.report.HasErrors() {
		l.out = &render.Output{}
		return l, nil
	}
	specs, rep := spec.Load(srcs)
	l.specs = specs
	l.report.Merge(rep)
	l.out = render.Render(l.specs)
	l.report.Merge(render.Check(l.out))
	l.report.Sort()
	return l, nil
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
