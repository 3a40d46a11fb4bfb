package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/syslet/syslet/pkg/redact"
)

// Printf is fmt.Fprintf with every string, error and Stringer argument
// passed through redact.Escape first: how the CLI and the apply print a
// line carrying anything that came from outside (host paths, errors,
// journal fields, spec names). Verbs that quote (%q) escape on their
// own; give them their value directly with fmt.
func Printf(w io.Writer, format string, args ...any) {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			args[i] = redact.Escape(v)
		case error:
			args[i] = redact.Escape(v.Error())
		case fmt.Stringer:
			args[i] = redact.Escape(v.String())
		}
	}
	fmt.Fprintf(w, format, args...)
}

// Error writes "who: err" on a line of its own, escaped.
func Error(w io.Writer, who string, err error) { Printf(w, "%s: %s\n", who, err) }

// Lines writes text (a tool's output: the generator's, systemd-analyze's)
// line by line, each escaped.
func Lines(w io.Writer, text string) {
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintln(w, redact.Escape(l))
	}
}
