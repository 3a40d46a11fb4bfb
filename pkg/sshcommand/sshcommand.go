package sshcommand

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Program is the only program name a client may ask for.
const Program = "syslet"

// The invocations a forced command allows: a plan, or an apply, of specs
// read from standard input; a plan saved on stdout; a saved plan read from
// stdin before the specs, applied or checked. Nothing else: no PATH (it
// would read files on the host), no plan file on the host, no --root, no
// subcommands.
var (
	Plan      = []string{"--diff", "--stdin"}
	Apply     = []string{"--stdin"}
	PlanSave  = []string{"--diff", "--stdin", "--out", "-"}
	PlanApply = []string{"--plan", "-", "--stdin"}
	PlanCheck = []string{"--diff", "--plan", "-", "--stdin"}
)

// planOnly are the invocations that change nothing on the host; Apply and
// PlanApply change it.
var (
	planOnly = [][]string{Plan, PlanSave, PlanCheck}
	changing = [][]string{Apply, PlanApply}
)

// ErrRefused is wrapped by every refusal; callers branch on it with errors.Is.
var ErrRefused = errors.New("refused")

// Policy says which invocations a key may make.
type Policy struct {
	// DiffOnly allows only the plan (`syslet --diff --stdin`): a key that
	// can show what would change but never change it.
	DiffOnly bool
}

// Allowed returns the invocations the policy permits, as the client
// must type them.
func (p Policy) Allowed() []string {
	var out []string
	for _, a := range planOnly {
		out = append(out, Program+" "+strings.Join(a, " "))
	}
	if !p.DiffOnly {
		for _, a := range changing {
			out = append(out, Program+" "+strings.Join(a, " "))
		}
	}
	return out
}

// Check validates the client's request. present is false when sshd set no
// SSH_ORIGINAL_COMMAND at all (an interactive login). It returns the
// arguments to run syslet with (without the program name).
//
// The request is split on whitespace and compared word by word; quotes,
// shell operators and any other word make it a different request, so
// `syslet --stdin; rm -rf /` is simply refused, never interpreted.
func (p Policy) Check(original string, present bool) ([]string, error) {
	if !present || strings.TrimSpace(original) == "" {
		return nil, fmt.Errorf("%w: an interactive session is not allowed for this key; allowed: %s", ErrRefused, p.allowedText())
	}
	words := strings.Fields(original)
	if words[0] == Program {
		args := words[1:]
		for _, a := range planOnly {
			if slices.Equal(args, a) {
				return slices.Clone(a), nil
			}
		}
		for _, a := range changing {
			if slices.Equal(args, a) {
				if p.DiffOnly {
					return nil, fmt.Errorf("%w: %q: this key may only plan; allowed: %s", ErrRefused, original, p.allowedText())
				}
				return slices.Clone(a), nil
			}
		}
	}
	return nil, fmt.Errorf("%w: %q is not an allowed command; allowed: %s", ErrRefused, original, p.allowedText())
}

func (p Policy) allowedText() string {
	q := p.Allowed()
	for i, s := range q {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, " or ")
}
