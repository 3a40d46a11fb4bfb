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
// stdin before the specs, applied or checked; and what `syslet push
// --pause` reads after a pause: the plan with --detailed-exitcode (3 when
// the host is off its specs) and the health of the specs' services as
// JSON. Nothing else: no PATH (it would read files on the host), no plan
// file on the host, no --root, no other subcommand. The plans and applies
// may end with Report, as syslet push sends them.
var (
	Plan      = []string{"--diff", "--stdin"}
	Apply     = []string{"--stdin"}
	PlanSave  = []string{"--diff", "--stdin", "--out", "-"}
	PlanApply = []string{"--plan", "-", "--stdin"}
	PlanCheck = []string{"--diff", "--plan", "-", "--stdin"}
	// PlanExit is the plan of the check after a pause.
	PlanExit = []string{"--diff", "--stdin", "--detailed-exitcode"}
	Status   = []string{"status", "--stdin", "--output", "json"}
)

// Report is what syslet push adds to each plan or apply it runs (Plan,
// Apply, PlanSave, PlanApply, PlanCheck, and PlanExit after a pause): the
// text as ever, then the run's JSON document as one record at the end of
// stderr, from which push reads how the run ended. Each of those forms is
// allowed with it, and without it (an older push).
var Report = []string{"--output", "text+json"}

// reported are the invocations that may end with Report.
var reported = [][]string{Plan, Apply, PlanSave, PlanApply, PlanCheck, PlanExit}

// planOnly are the invocations that change nothing on the host; Apply and
// PlanApply change it.
var (
	planOnly = [][]string{Plan, PlanSave, PlanCheck, PlanExit, Status}
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

// Check validates the client's request. A refusal quotes the request as
// it came, control characters and all: whoever prints it escapes it
// (pkg/redact), once. present is false when sshd set no
// SSH_ORIGINAL_COMMAND at all (an interactive login). It returns the
// arguments to run syslet with (without the program name).
//
// The request is split on ASCII white space (space, tab, newline, CR,
// form feed, vertical tab: what a shell would split on) and compared word
// by word; quotes, shell operators, Unicode spaces (a no-break space, an
// ideographic space) and any other word make it a different request, so
// `syslet --stdin; rm -rf /` is simply refused, never interpreted.
func (p Policy) Check(original string, present bool) ([]string, error) {
	words := strings.FieldsFunc(original, asciiSpace)
	if !present || len(words) == 0 {
		return nil, fmt.Errorf("%w: an interactive session is not allowed for this key; allowed: %s", ErrRefused, p.allowedText())
	}
	if words[0] == Program {
		args := words[1:]
		form, report := args, false
		if n := len(args) - len(Report); n >= 0 && slices.Equal(args[n:], Report) {
			form, report = args[:n], true
		}
		allowed := func(a []string) bool {
			return slices.Equal(form, a) && (!report || slices.ContainsFunc(reported, func(r []string) bool { return slices.Equal(r, a) }))
		}
		for _, a := range planOnly {
			if allowed(a) {
				return slices.Clone(args), nil
			}
		}
		for _, a := range changing {
			if allowed(a) {
				if p.DiffOnly {
					return nil, fmt.Errorf("%w: \"%s\": this key may only plan; allowed: %s", ErrRefused, original, p.allowedText())
				}
				return slices.Clone(args), nil
			}
		}
	}
	return nil, fmt.Errorf("%w: \"%s\" is not an allowed command; allowed: %s", ErrRefused, original, p.allowedText())
}

// asciiSpace is white space as sh(1) splits words on it.
func asciiSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\f', '\v':
		return true
	}
	return false
}

func (p Policy) allowedText() string {
	q := p.Allowed()
	for i, s := range q {
		q[i] = "'" + s + "'"
	}
	return strings.Join(q, " or ") + ", each plan and apply also with " + strings.Join(Report, " ") + " after it"
}
