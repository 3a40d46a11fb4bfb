package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severity says whether a finding blocks an apply.
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Finding is one problem found in the input.
type Finding struct {
	Source   string   `json:"source"`  // file the spec came from, or "stdin"
	Path     string   `json:"path"`    // JSON path inside the source, e.g. [0].unit.Container.Image
	Rule     string   `json:"rule"`    // stable identifier, e.g. "undefined-reference"
	Message  string   `json:"message"` // one line for a person
	Severity Severity `json:"severity"`
}

func (f Finding) String() string {
	var b strings.Builder
	if f.Source != "" {
		b.WriteString(f.Source)
		b.WriteString(": ")
	}
	if f.Path != "" {
		b.WriteString(f.Path)
		b.WriteString(": ")
	}
	if f.Severity == Warning {
		b.WriteString("warning: ")
	}
	b.WriteString(f.Message)
	return b.String()
}

// Report is an ordered collection of findings. The zero value is empty and
// ready to use.
type Report struct {
	Findings []Finding `json:"findings"`
}

// Errorf adds an error finding.
func (r *Report) Errorf(source, path, rule, format string, args ...any) {
	r.Findings = append(r.Findings, Finding{Source: source, Path: path, Rule: rule, Message: fmt.Sprintf(format, args...), Severity: Error})
}

// Warnf adds a warning finding; warnings never block an apply.
func (r *Report) Warnf(source, path, rule, format string, args ...any) {
	r.Findings = append(r.Findings, Finding{Source: source, Path: path, Rule: rule, Message: fmt.Sprintf(format, args...), Severity: Warning})
}

// Merge appends all findings of o.
func (r *Report) Merge(o Report) { r.Findings = append(r.Findings, o.Findings...) }

// HasErrors reports whether any finding is an error.
func (r Report) HasErrors() bool {
	return slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Severity == Error })
}

// Errors counts error findings.
func (r Report) Errors() int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == Error {
			n++
		}
	}
	return n
}

// Head is what a status, a page or a notification names of why an input
// is invalid: its first n error findings, and how many errors it has in
// all (a person reads the first ones, and the count says whether there
// are more to fix).
func Head(findings []Finding, n int) (head []Finding, errors int) {
	for _, f := range findings {
		if f.Severity != Error {
			continue
		}
		if errors < n {
			head = append(head, f)
		}
		errors++
	}
	return head, errors
}

// Sort orders findings by source, then by the order they were found in,
// which keeps a file's findings together without reshuffling paths.
func (r *Report) Sort() {
	slices.SortStableFunc(r.Findings, func(a, b Finding) int { return cmp.Compare(a.Source, b.Source) })
}

// String is the findings one per line, as `syslet validate` prints them.
func (r Report) String() string {
	var b strings.Builder
	for _, f := range r.Findings {
		b.WriteString(f.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Strict turns every warning into an error: `syslet validate --strict`
// holds CI to the format syslet itself writes, with nothing left that only
// the earlier syslet's leniency accepts.
func (r *Report) Strict() {
	for i := range r.Findings {
		r.Findings[i].Severity = Error
	}
}
