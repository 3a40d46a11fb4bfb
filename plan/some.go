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

// Some names n things of which first are the first (at least Listed of
// them, or all): it joins the first Listed with ", " and counts the
// others, "a, b, c" or "a, …, j and 5 more". A caller counting a hundred
// thousand need not spell them all.
func Some(first []string, n int) string {
	if n <= Listed {
		return strings.Join(first, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(first[:Listed], ", "), n-Listed)
}
