package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// What people type that syslet spells otherwise: the verbs and flags of
// the tools an operator comes from (terraform, kubectl, ansible, apt).

// verbs maps a first word that is not a command to the command line that
// does what it asks; "" is the default command (plan and apply).
var verbs = map[string]string{
	"plan": "--diff", "diff": "--diff", "dry-run": "--diff", "preview": "--diff",
	"deploy": "apply", "up": "apply",
	"check": "validate", "lint": "validate",
	"log": "history", "logs": "history", "runs": "history",
}

// flagSynonyms maps a flag another tool has to syslet's spelling.
var flagSynonyms = map[string]string{
	"dry-run": "diff", "dryrun": "diff", "plan": "diff", "noop": "diff", "check": "diff",
	"auto-approve": "yes", "assume-yes": "yes", "y": "yes", "non-interactive": "yes",
	"json": "output json", "format": "output",
}

// unknownVerb returns a usage error when the default command's first
// argument is a word that names no file and is a verb syslet spells
// otherwise, or a near miss of a command: "syslet plan specs/" says to run
// "syslet --diff specs/". Nil when it names a file (then it is the PATH),
// or when nothing better than the PATH's own error can be said.
func unknownVerb(args []string) error {
	if len(args) == 0 {
		return nil
	}
	word := args[0]
	if word == "" || strings.HasPrefix(word, "-") || strings.ContainsAny(word, "/.") {
		return nil
	}
	if _, err := os.Lstat(word); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	rest := quoteArgs(args[1:])
	if to, ok := verbs[word]; ok {
		return fmt.Errorf("%w: %q is not a command (nor a file here); to %s, run: %s", errUsage, word, verbPurpose(to), strings.TrimSpace("syslet "+to+" "+rest))
	}
	if name := nearest(word, commandWords()); name != "" {
		return fmt.Errorf("%w: %q is not a command (nor a file here); did you mean: %s", errUsage, word, strings.TrimSpace("syslet "+name+" "+rest))
	}
	return nil
}

// verbPurpose says what the command line a verb maps to does.
func verbPurpose(to string) string {
	switch to {
	case "--diff":
		return "print the plan (nothing changes)"
	case "apply":
		return "plan and apply"
	}
	return "run " + to
}

// commandWords are the words that name a command.
func commandWords() []string {
	var words []string
	for _, c := range commands {
		if c.name != "" {
			words = append(words, c.name)
		}
		for _, a := range c.aliases {
			if !strings.HasPrefix(a, "-") {
				words = append(words, a)
			}
		}
	}
	return words
}

// flagHint is what to add to the flag package's message about a flag the
// command c does not define: the flag it has for the same purpose, or the
// one a typo missed. "" when there is none, or for another message.
func flagHint(c *command, msg string) string {
	bad, ok := strings.CutPrefix(msg, "flag provided but not defined: -")
	if !ok || c == nil {
		return ""
	}
	docs := c.flagDocs()
	names := make([]string, len(docs))
	for i, d := range docs {
		names[i] = d.Name
	}
	want := ""
	if to, ok := flagSynonyms[bad]; ok {
		name, _, _ := strings.Cut(to, " ")
		for _, n := range names {
			if n == name {
				want = to
			}
		}
	}
	if want == "" {
		want = nearest(bad, names)
	}
	if want == "" {
		return ""
	}
	name, _, _ := strings.Cut(want, " ")
	for _, d := range docs {
		if d.Name == name {
			return fmt.Sprintf("did you mean --%s?\n  %s  %s", want, d.Spelling(), d.Help)
		}
	}
	return ""
}

// unknownFlag rewrites the flag package's message for an undefined flag
// as the operator typed it (--name, not -name).
func unknownFlag(msg string) string {
	if bad, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		dashes := "--"
		if len(bad) == 1 {
			dashes = "-"
		}
		return "unknown flag " + dashes + bad
	}
	return msg
}

// nearest returns the word of words that word most likely misspells: one
// it is a prefix of (when only one is), else the closest within two edits
// (one for words of four letters or fewer); "" when none is near.
func nearest(word string, words []string) string {
	var prefixed []string
	for _, w := range words {
		if strings.HasPrefix(w, word) && len(word) >= 3 {
			prefixed = append(prefixed, w)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	limit := 2
	if len(word) <= 4 {
		limit = 1
	}
	best, bestD := "", limit+1
	for _, w := range words {
		if d := editDistance(strings.ToLower(word), w); d < bestD {
			best, bestD = w, d
		}
	}
	return best
}

// editDistance is the Damerau–Levenshtein distance (optimal string
// alignment) between a and b: insertions, deletions, substitutions and
// swaps of two neighbours each count one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// quoteArgs joins args as a shell would need them typed.
func quoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = shellQuote(a)
	}
	return strings.Join(out, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@+%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
