package load

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/syslet/syslet/pkg/filemode"
	"github.com/syslet/syslet/pkg/gcpolicy"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load/quadletcheck"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// Set is one loaded spec set: the sources as read, the specs decoded from
// them, the rendered output and every finding so far. Specs and Out hold
// whatever could be decoded and rendered, also when Report has errors.
type Set struct {
	Sources []spec.Source
	// Specs are nil once the set's specs are dropped (DropSpecs); Count stays.
	Specs  []*spec.Spec
	Out    *render.Output
	Report report.Report

	dropped int    // how many specs there were when dropped
	digest  string // Digest, once made: the input never changes
}

// Count is the number of specs decoded.
func (s *Set) Count() int {
	if s.Specs == nil {
		return s.dropped
	}
	return len(s.Specs)
}

// DropSpecs lets go of what only the checks read: the specs themselves and
// the rendered units' lines (render.Output.DropSpecs). Call it once every
// check is done; the rendered units, sources and report stay.
func (s *Set) DropSpecs() {
	s.dropped, s.Specs = s.Count(), nil
	s.Out.DropSpecs()
}

// Options say where a Path's input comes from and how much of it is read.
type Options struct {
	// Root is the managed root; with an empty path the stream an apply
	// from stdin stored beneath it is read. Default "/".
	Root  string
	Stdin io.Reader
	// MaxInput bounds the input's total size (0: spec.DefaultMaxInput).
	MaxInput int64
}

// Path reads and checks the specs at path: a file, a directory of *.json,
// "-" for stdin, or "" for the stored stream under the root. The error is
// only for sources that cannot be read; invalid specs are findings. Input
// that cannot be specs — too large, not a regular file, or holding no JSON
// value at all — is an invalid-input finding naming the source, so it
// exits like invalid specs and nothing is stored or changed.
func Path(path string, o Options) (*Set, error) {
	if o.Root == "" {
		o.Root = "/"
	}
	stored := layout.Under(o.Root, layout.StoredSpecs)
	if path == "" {
		path = stored
		// syslet's own stored stream: never read through a link planted
		// in its place (a path given on the command line may be one).
		if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
			s := &Set{Out: &render.Output{}}
			s.Report.Errorf(path, "", spec.RuleSource, "is %s, not a regular file: syslet reads its stored specs only from a regular file, never through a symlink", filemode.Describe(fi.Mode()))
			return s, nil
		}
	}
	srcs, err := spec.ReadSourcesMax(path, o.Stdin, o.MaxInput)
	for _, s := range srcs {
		gcpolicy.Expect(int64(len(s.Data))) // the CLI's collector makes room for what it works on
	}
	if spec.IsNotExist(err) && path == stored {
		return nil, fmt.Errorf("no PATH given and %s does not exist: pass a spec file or directory, or --stdin", path)
	}
	var ie *spec.InputError
	if errors.As(err, &ie) {
		s := &Set{Out: &render.Output{}}
		s.Report.Errorf(ie.Source, "", ie.Rule, "%s", ie.Msg)
		return s, nil
	}
	if err != nil {
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
		return &Set{Sources: srcs, Out: &render.Output{}, Report: in}, nil
	}
	s := Sources(srcs)
	s.Report.Merge(in) // warnings about blank files of a directory
	s.Report.Sort()
	return s, nil
}

// Sources checks sources already read: decode and pre-render validation,
// render, post-render validation. syslet push uses it for a fleet, whose
// host reads hosts/common/ and hosts/<host>/ as one set.
func Sources(srcs []spec.Source) *Set {
	s := &Set{Sources: srcs}
	s.Specs, s.Report = spec.Load(srcs)
	s.Out = render.Render(s.Specs)
	s.Report.Merge(render.Check(s.Out))
	s.Report.Sort()
	return s
}

// Bytes checks one source given as bytes (adopt's output read back, tests).
func Bytes(name string, data []byte) *Set {
	return Sources([]spec.Source{{Name: name, Data: data}})
}

// CheckPodman runs the rendered unit set through podman's quadlet
// converter, gating keys by the podman release the specs are for, and
// adds its findings.
func (s *Set) CheckPodman(p unit.Podman) {
	s.Report.Merge(s.Converter(p))
	s.Report.Sort()
}

// Converter is what podman's quadlet converter finds in the rendered unit
// set for podman release p, without adding it to the set's report (a
// caller may try more than one release).
func (s *Set) Converter(p unit.Podman) report.Report {
	return quadletcheck.Check(s.Out, p, s.Report)
}

// HostConverter is Converter for the podman release of the host the
// specs are applied to (no --podman hint: the host's podman is what it is).
func (s *Set) HostConverter(p unit.Podman) report.Report {
	return quadletcheck.CheckHost(s.Out, p, s.Report)
}

// Stream is the set's input as one stream (see spec.Join).
func (s *Set) Stream() []byte { return spec.Join(s.Sources) }

// Digest is the sha256 of the input's joined stream (spec.Join): what the run
// journal records as the run's input. The same specs read back from the
// stream an apply stored, or from a generation, have the same digest.
func (s *Set) Digest() string {
	if s.digest == "" {
		sum := sha256.Sum256(spec.Join(s.Sources))
		s.digest = hex.EncodeToString(sum[:])
	}
	return s.digest
}
