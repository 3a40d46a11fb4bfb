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

// Error writes "who: err", escaped. An error of several lines (one that
// joins the errors of several specs) is drawn as its lines, the second and
// later indented, each escaped on its own: a line break in it is a line
// break, not a "\x0a" in the middle of one line.
func Error(w io.Writer, who string, err error) {
	lines := strings.Split(strings.TrimRight(err.Error(), "\n"), "\n")
	Printf(w, "%s: %s\n", who, lines[0])
	for _, l := range lines[1:] {
		Printf(w, "  %s\n", l)
	}
}
