package deploy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/syslet/syslet/pkg/quadletcheck"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// Loaded is the result of the host-independent half of the pipeline:
// read, pre-render validation, render, post-render validation.
type Loaded struct {
	Sources []spec.Source
	Specs   []*spec.Spec
	Out     *render.Output
	Report  report.Report
}

// Load reads and validates specs from path ("-" = stdin, "" = the stored
// default under root). The returned error is only for sources that cannot
// be read; invalid specs are findings in the report.
func Load(path, root string, stdin io.Reader) (*Loaded, error) {
	return LoadMax(path, root, stdin, spec.DefaultMaxInput)
}

// LoadMax is Load with a bound on the input's total size (--max-input).
// Input that cannot be specs — too large, not a regular file, or holding
// no JSON value at all — is an invalid-input finding naming the source,
// so it exits like invalid specs and nothing is stored or changed.
func LoadMax(path, root string, stdin io.Reader, maxInput int64) (*Loaded, error) {
	if path == "" {
		path = filepath.Join(root, spec.DefaultSource)
	}
	srcs, err := spec.ReadSourcesMax(path, stdin, maxInput)
	var ie *spec.InputError
	if errors.As(err, &ie) {
		l := &Loaded{Out: &render.Output{}}
		l.Report.Errorf(ie.Source, "", ie.Rule, "%s", ie.Msg)
		return l, nil
	}
	if err != nil {
		if spec.IsNotExist(err) && path == filepath.Join(root, spec.DefaultSource) {
			return nil, fmt.Errorf("no PATH given and %s does not exist: pass a spec file or directory, or --stdin", path)
		}
		return nil, err
	}
	name := path
	if path == "-" {
		name = spec.StdinName
	}
	// Input holding no JSON value at all is refused rather than read as
	// "no specs" (which would remove every managed unit).
	in := spec.CheckInput(name, srcs)
	if in.HasErrors() {
		return &Loaded{Sources: srcs, Out: &render.Output{}, Report: in}, nil
	}
	l := Check(srcs)
	l.Report.Merge(in) // warnings about blank files of a directory
	l.Report.Sort()
	return l, nil
}

// Check runs the host-independent checks on sources already read: what
// Load does after reading. syslet push uses it for a fleet, whose host
// reads hosts/common/ and hosts/<host>/ as one set.
func Check(srcs []spec.Source) *Loaded {
	l := &Loaded{Sources: srcs}
	l.Specs, l.Report = spec.Load(srcs)
	l.Out = render.Render(l.Specs)
	l.Report.Merge(render.Check(l.Out))
	l.Report.Sort()
	return l
}

// CheckPodman runs the rendered unit set through podman's quadlet
// converter, gating keys by the podman release the specs are for. It is a
// step of its own because an apply on a host learns that release from the
// host, after loading.
func (l *Loaded) CheckPodman(p unit.Podman) {
	l.Report.Merge(quadletcheck.Check(l.Out, p, l.Report))
	l.Report.Sort()
}

// Digest is the sha256 of the input as read, in source order: what the run
// journal records as the run's input.
func (l *Loaded) Digest() string {
	h := sha256.New()
	for _, s := range l.Sources {
		h.Write(s.Data)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}
