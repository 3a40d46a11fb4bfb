package spec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/report"
)

// DefaultSource is read when no source is given; an apply from stdin
// stores the validated stream there.
const DefaultSource = "/etc/syslet/config.json"

// StdinName is the source name of specs read from standard input.
const StdinName = "stdin"

// Source is one named chunk of spec input.
type Source struct {
	Name string
	Data []byte
}

// ReadSources reads a file, or every *.json file of a directory (sorted by
// name, not recursive), or stdin when path is "-".
func ReadSources(path string, stdin io.Reader) ([]Source, error) {
	if path == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading stdin: %w", err)
		}
		return []Source{{Name: StdinName, Data: data}}, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading specs: %w", err)
	}
	if !fi.IsDir() {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading specs: %w", err)
		}
		return []Source{{Name: path, Data: data}}, nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("reading specs: %w", err)
	}
	var srcs []Source
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(path, e.Name())
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading specs: %w", err)
		}
		srcs = append(srcs, Source{Name: p, Data: data})
	}
	slices.SortFunc(srcs, func(a, b Source) int { return strings.Compare(a.Name, b.Name) })
	return srcs, nil
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
	nodes, dups, err := decodeStream(src.Data)
	for _, d := range dups {
		rep.Errorf(src.Name, d.path, RuleDuplicateKey, "duplicate key %q: each key may appear once", d.key)
	}
	if err != nil {
		rep.Errorf(src.Name, "", RuleJSON, "invalid JSON: %v", err)
	}
	var specs []*Spec
	for i, n := range nodes {
		d := &decoder{source: src.Name, rep: &rep}
		if s := d.spec(n, i); s != nil {
			specs = append(specs, s)
		}
	}
	return specs, rep
}
