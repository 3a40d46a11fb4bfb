package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/syslet/syslet/pkg/redact"
	"github.com/syslet/syslet/pkg/report"
)

// Findings writes findings one per line and, when there are errors, how
// many and that nothing was changed.
func Findings(w io.Writer, rep report.Report) {
	shown := report.Report{Findings: make([]report.Finding, 0, len(rep.Findings))}
	for _, f := range rep.Findings {
		f.Source, f.Path, f.Message = redact.Escape(f.Source), redact.Escape(f.Path), redact.Escape(f.Message)
		shown.Findings = append(shown.Findings, f)
	}
	io.WriteString(w, shown.String())
	if n := rep.Errors(); n > 0 {
		fmt.Fprintf(w, "%d error(s): the specs are invalid; nothing was changed\n", n)
	}
}

// Validation is the JSON document of `syslet validate --output json`.
type Validation struct {
	Valid    bool             `json:"valid"`
	Sources  int              `json:"sources"`
	Specs    int              `json:"specs"`
	Errors   int              `json:"errors"`
	Podman   string           `json:"podman"` // the release the units were checked against
	Findings []report.Finding `json:"findings"`
}

// Valid is the line `syslet validate` ends with when nothing is wrong.
func Valid(w io.Writer, specs, sources int) {
	fmt.Fprintf(w, "%d spec(s) from %d source(s) are valid\n", specs, sources)
}

// SecretsChecked says what validate checked of the secret specs, and what
// it cannot: it holds no host's identity, so whether a host can open a
// secret is that host's question. recipients are each secret's age
// recipients, by spec name.
func SecretsChecked(w io.Writer, names []string, recipients map[string][]string) {
	if len(names) == 0 {
		return
	}
	fmt.Fprintf(w, "%d secret spec(s): checked as SOPS documents encrypted for age recipients; which host can open them is not checked here "+
		"(no host identity): `syslet --diff` on the host does, and `syslet host-key` there prints its recipient.\n", len(names))
	for _, n := range names {
		fmt.Fprintf(w, "  %s: encrypted for %s\n", redact.Escape(n), redact.Escape(strings.Join(recipients[n], ", ")))
	}
}
