package push

import (
	"fmt"
	"strings"

	"github.com/syslet/syslet/pkg/verdict"
)

// Ending is how one host's turn ended: the verdict its syslet reported
// (read from the record of its JSON document, never from its text), or
// one of push's own when push ended the turn itself or the host reported
// none. Both can be set: push's own then tells the ending (a host whose
// change landed, then fell over during the pause after its batch, keeps
// its verdict "applied" and ends "failed").
type Ending struct {
	// Verdict is the host's syslet's own ending; zero when it reported
	// none.
	Verdict verdict.Verdict
	// Own is push's own ending; zero when the verdict tells it.
	Own Own
	// Nothing: the host's plan had no action to take. A --diff that
	// planned nothing is told as unchanged, as an apply that found
	// nothing to change is.
	Nothing bool
}

// Own is an ending of push's own.
type Own uint8

const (
	_ Own = iota
	// Exited: the remote command exited 0 and reported no verdict (a
	// remote command that is not syslet).
	Exited
	// Broke: the remote command failed and reported no verdict, was
	// killed or timed out, or the session broke; or push could not keep
	// what the host did (saving its plan, --out), or the host fell over
	// during the pause after its batch.
	Broke
	// KeyRefused: the host key was unknown, changed or revoked; nothing
	// was authenticated or run.
	KeyRefused
	// Unreachable: no SSH session could be set up (connect, key exchange,
	// authentication).
	Unreachable
	// NotReached: the host's turn never came (the rollout stopped, or an
	// interrupt came first); no connection was opened to it.
	NotReached
	// Stale: the host's syslet refused the saved plan it was given
	// (verdict refused) because the host or the input changed since the
	// plan was made; nothing changed there.
	Stale
)

// row is one ending in push's table.
type row struct {
	// verdict is the host's ending this row tells; own push's own (one
	// of the two is set).
	verdict verdict.Verdict
	own     Own
	// word is what the result table, its count line and --output json
	// call the ending; endings that mean the same to whoever pushed share
	// a word. ok: the host did what it was asked to.
	word string
	ok   bool
	// hint says, after the remote command's exit status, what it means;
	// count is the count line's phrase, when more than the word.
	hint, count string
}

// endings is push's one table of how a host's turn ends: a row for every
// verdict of pkg/verdict (whose table says what each is) and for every
// ending of push's own, in the order the count line lists their words.
// TestEveryEndingHasOneRow holds it whole.
var endings = []row{
	{verdict: verdict.Applied, word: "applied", ok: true},
	{verdict: verdict.Restored, word: "applied", ok: true},
	{verdict: verdict.NoChanges, word: "unchanged", ok: true},
	{verdict: verdict.Judged, word: "unchanged", ok: true},
	{verdict: verdict.AlreadyRestored, word: "unchanged", ok: true},
	{verdict: verdict.Planned, word: "planned", ok: true},
	{own: Exited, word: "ok", ok: true},
	{verdict: verdict.Invalid, word: "failed", hint: " (the host's syslet found the specs invalid)"},
	{verdict: verdict.Refused, word: "failed"},
	{verdict: verdict.Declined, word: "failed"},
	{verdict: verdict.Failed, word: "failed"},
	{verdict: verdict.Interrupted, word: "failed", hint: " (interrupted; run the push again to resume)"},
	{verdict: verdict.GateFailed, word: "failed"},
	{own: Broke, word: "failed"},
	{own: KeyRefused, word: "refused"},
	{own: Unreachable, word: "unreachable"},
	{own: NotReached, word: "not reached"},
	{verdict: verdict.RolledBack, word: "rolled back", hint: " (a container failed the health gate; the host rolled back to its last good generation and serves that)"},
	{verdict: verdict.RollbackFailed, word: "rollback failed", hint: " (a container failed the health gate and so did the rollback: look at the host)"},
	{own: Stale, word: "stale", hint: " (the host refused its saved plan: the host or the input changed since the plan was made, as its output says; nothing was changed there: make a new plan)",
		count: "stale (refused their saved plan; nothing changed there)"},
}

// row is the ending's row of the table.
func (e Ending) row() row {
	v := e.Verdict
	if v == verdict.Planned && e.Nothing {
		v = verdict.NoChanges
	}
	for _, r := range endings {
		if e.Own != 0 && r.own == e.Own || e.Own == 0 && r.own == 0 && r.verdict == v {
			return r
		}
	}
	panic(fmt.Sprintf("push: no row for the ending %+v", e)) // TestEveryEndingHasOneRow
}

// OK reports whether the host did what it was asked to.
func (e Ending) OK() bool { return e.row().ok }

// Is reports whether the ending is the host's verdict v, told as itself
// (no ending of push's own over it).
func (e Ending) Is(v verdict.Verdict) bool { return e.Own == 0 && e.Verdict == v }

func (e Ending) String() string { return e.row().word }

// exitHints explain the exit codes of a remote command that reported no
// verdict and that mean something of their own: the plan's (3, with
// --detailed-exitcode), usage (64) and the shell's. The codes of the
// verdicts are explained by their rows (hint).
var exitHints = map[int]string{
	exitPending: " (changes pending)",
	64:          " (the host's syslet did not accept the command line: is it older than this one?)",
	126:         " (the remote command is not executable)",
	127:         " (the remote command was not found: is syslet installed on the host, or set --remote-command)",
}

// exitHint explains an exit code of a remote command that reported no
// verdict: its own meaning, or that of the verdicts syslet exits so
// with, when one of them has a hint.
func exitHint(code int) string {
	if h, ok := exitHints[code]; ok {
		return h
	}
	for _, r := range endings {
		if r.verdict != 0 && r.hint != "" && r.verdict.Exit() == code {
			return r.hint
		}
	}
	return ""
}

// countLine counts the results by word, in the order of the table.
func countLine(results []Result) string {
	n := map[string]int{}
	for _, r := range results {
		n[r.Ending.String()]++
	}
	var parts []string
	for _, e := range endings {
		c := n[e.word]
		if c == 0 {
			continue
		}
		delete(n, e.word) // once per word
		what := e.word
		if e.count != "" {
			what = e.count
		}
		parts = append(parts, fmt.Sprintf("%d %s", c, what))
	}
	return strings.Join(parts, ", ")
}
