package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/bounded"
	"github.com/syslet/syslet/pkg/filemode"
	"github.com/syslet/syslet/pkg/parallel"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec/internal/jsontree"
)

// StdinName is the source name of specs read from standard input.
const StdinName = "stdin"

// Source is one named chunk of spec input.
type Source struct {
	Name string
	Data []byte
}

// DefaultMaxInput bounds the spec input read in one run (all sources
// together). A host's specs are kilobytes; the bound keeps a mistaken or
// hostile source (a symlink to /dev/zero, a log file) from exhausting
// memory.
const DefaultMaxInput = 16 << 20

// MaxDepth is how deeply JSON values in spec input may nest: the JSON
// reader's limit, named here because it is part of what spec input may be.
const MaxDepth = jsontree.MaxDepth

// InputError is a source that cannot be used as spec input: missing, too
// large, not a regular file, or holding no JSON value at all. Callers
// report it as an invalid-input finding (it names the source), not as a
// host failure.
type InputError struct {
	Source string
	Rule   string
	Msg    string
	Err    error // the error under it, if any (fs.ErrNotExist)
}

func (e *InputError) Error() string { return e.Source + ": " + e.Msg }
func (e *InputError) Unwrap() error { return e.Err }

// ReadSources reads a file, or every *.json file of a directory (sorted by
// name, not recursive), or stdin when path is "-", with DefaultMaxInput.
// Stdin is one source, or the files a stream of syslet push names
// (NamedStream).
func ReadSources(path string, stdin io.Reader) ([]Source, error) {
	return ReadSourcesMax(path, stdin, DefaultMaxInput)
}

// ReadSourcesMax is ReadSources with a bound on the total input size
// (max <= 0: DefaultMaxInput). Only regular files are read: a FIFO, device
// or socket — even behind a symlink — is refused by name without being
// opened, so it can neither hang the run nor feed it endless data. In a
// directory, a symlink is followed only while it stays inside the
// directory: one that leads outside it (a relative link climbing out, an
// absolute link) is refused by name, so a pushed commit cannot make syslet
// read a file of the host as specs.
func ReadSourcesMax(path string, stdin io.Reader, max int64) ([]Source, error) {
	if max <= 0 {
		max = DefaultMaxInput
	}
	budget := max
	if path == "-" {
		data, err := readBounded(StdinName, stdin, budget, max)
		if err != nil {
			return nil, err
		}
		return splitNamed(data)
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		// Not a host error but a wrong argument: exit 2, as the docs say
		// of input that cannot be specs, and nothing is touched.
		return nil, &InputError{Source: path, Rule: RuleSource, Msg: "does not exist: PATH is a spec file or a directory of *.json", Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("reading specs: %w", err)
	}
	if !fi.IsDir() {
		// A file named on the command line is the operator's choice: a
		// link at its name is followed, to a regular file only.
		f, _, err := bounded.Open(path, bounded.Kind{What: "spec input", Follow: true})
		if err != nil {
			return nil, inputError(path, err)
		}
		defer f.Close()
		data, err := readBounded(path, f, budget, max)
		if err != nil {
			return nil, err
		}
		return []Source{{Name: path, Data: data}}, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("reading specs: %w", err)
	}
	var srcs []Source
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(path, e.Name())
		if e.IsDir() {
			return nil, &InputError{Source: p, Rule: RuleSource, Msg: "is a directory; spec directories are not read recursively"}
		}
		f, _, err := bounded.OpenBeneath(path, e.Name(), bounded.Kind{What: "spec input"})
		if err != nil {
			return nil, inputError(p, err)
		}
		data, err := readBounded(p, f, budget, max)
		f.Close()
		if err != nil {
			return nil, err
		}
		budget -= int64(len(data))
		srcs = append(srcs, Source{Name: p, Data: data})
	}
	slices.SortFunc(srcs, func(a, b Source) int { return strings.Compare(a.Name, b.Name) })
	return srcs, nil
}

// inputError words a source that cannot be opened as spec input: not a
// regular file, a link leading out of its directory, or (otherwise) a
// plain read error.
func inputError(p string, err error) error {
	var nr *bounded.NotRegularError
	switch {
	case errors.As(err, &nr) && nr.Mode.IsDir():
		return &InputError{Source: p, Rule: RuleSource, Msg: "is a directory; spec directories are not read recursively"}
	case errors.As(err, &nr):
		return &InputError{Source: p, Rule: RuleSource, Msg: "is " + filemode.Describe(nr.Mode) + ", not a regular file: syslet reads specs only from regular files"}
	case errors.Is(err, bounded.ErrEscapes):
		return &InputError{Source: p, Rule: RuleSource, Msg: "is a symlink leading outside its directory: syslet reads specs only from inside the directory"}
	}
	return fmt.Errorf("reading specs: %w", err)
}

// readBounded reads r up to budget bytes; more is an InputError naming the
// source and the configured maximum.
func readBounded(name string, r io.Reader, budget, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, budget+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(data)) > budget {
		return nil, &InputError{Source: name, Rule: RuleInputSize,
			Msg: fmt.Sprintf("spec input is larger than the maximum of %d bytes (all sources together; raise it with --max-input)", max)}
	}
	return data, nil
}

// CheckInput refuses input that holds no JSON value at all: zero bytes,
// only whitespace, or a directory without *.json files. Such input is
// almost always a mistake upstream (a glob that matched nothing, a failed
// export), and read as "no specs" it would remove everything; "no specs"
// must be said explicitly, with [].
func CheckInput(name string, srcs []Source) report.Report {
	var rep report.Report
	blank := 0
	for _, s := range srcs {
		if len(bytes.TrimSpace(s.Data)) == 0 {
			blank++
			if len(srcs) > 1 {
				rep.Warnf(s.Name, "", RuleEmptyInput, "holds no JSON value (empty or whitespace only); ignored")
			}
		}
	}
	if blank == len(srcs) {
		what := "holds no JSON value (zero bytes or whitespace only)"
		if len(srcs) == 0 {
			what = "holds no *.json file"
		}
		rep = report.Report{}
		rep.Errorf(name, "", RuleEmptyInput, "%s: refusing to read that as \"no specs\", which would remove every managed unit; send [] to mean no specs", what)
	}
	return rep
}

// IsNotExist reports whether err came from a missing source path.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// Load decodes every source and runs all pre-render checks, across sources
// too (duplicate names). It returns every spec it could decode, even when
// the report has errors, so later stages can add their own findings.
func Load(srcs []Source) ([]*Spec, report.Report) {
	var all []*Spec
	var rep report.Report
	for _, src := range srcs {
		specs, r := Decode(src)
		all = append(all, specs...)
		rep.Merge(r)
	}
	rep.Merge(CheckSet(all))
	return all, rep
}

// Decode reads one source's stream and checks each spec on its own.
func Decode(src Source) ([]*Spec, report.Report) {
	var rep report.Report
	nodes, dups, err := jsontree.DecodeStream(src.Data)
	for _, d := range dups {
		rep.Errorf(src.Name, d.Path, RuleDuplicateKey, "duplicate key %q: each key may appear once", d.Key)
	}
	if err != nil {
		rep.Errorf(src.Name, "", RuleJSON, "invalid JSON: %v", err)
	}
	// Each spec is decoded and checked on its own: a big stream is split
	// over the CPUs, and each range's specs and findings are joined in
	// stream order.
	parts := parallel.Parts(len(nodes), 64)
	partSpecs, partReps := make([][]*Spec, parts), make([]report.Report, parts)
	parallel.Run(parts, len(nodes), func(part, lo, hi int) {
		// A range's specs are one array: they live until the run ends,
		// and allocated one by one among the decoding's garbage they left
		// pages of the heap half empty.
		slab := make([]Spec, hi-lo)
		for i := lo; i < hi; i++ {
			d := &decoder{source: src.Name, rep: &partReps[part]}
			if s := d.spec(nodes[i], i, &slab[i-lo]); s != nil {
				partSpecs[part] = append(partSpecs[part], s)
			}
		}
	})
	var specs []*Spec
	for part := range parts {
		specs = append(specs, partSpecs[part]...)
		rep.Merge(partReps[part])
	}
	return specs, rep
}
