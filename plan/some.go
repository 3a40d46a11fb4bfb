package plan

import (
	"fmt"
	"strings"
)

// Listed is how many names a one-line list in the plan's text names
// before it counts the rest: a mass removal of a hundred thousand units
// is one refusal, not a megabyte line (which a commit status, a chat
// message or a terminal cannot show either). Every name stays in the
// plan's units and actions.
const Listed = 10

// Some joins the first Listed names with ", " and counts the others:
// "a, b, c" or "a, …, j and 5 more".
func Some(names []string) string { return SomeOf(names, len(names)) }

// SomeOf is Some of n names of which only the first are given (at least
// Listed of them, or all): a caller counting a hundred thousand need not
// spell them all.
func SomeOf(first []string, n int) string {
	if n <= Listed {
		return strings.Join(first, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(first[:Listed], ", "), n-Listed)
}
