package spec

import (
	"regexp"
	"testing"
)

// isWord replaces two regexps on the hot path; it must accept exactly
// what they accept.
func TestIsWordMatchesItsPatterns(t *testing.T) {
	name := regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)
	key := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
	inputs := []string{"", "a", "A9", "9a", "_a", "-a", ".a", "a_b-c", "a.b", "a b", "a/b", "é", "aé", "a\n", "Z-", "web.1", "a:b", "a=b", "\x00"}
	for c := 0; c < 256; c++ {
		inputs = append(inputs, string(rune(c)), "x"+string([]byte{byte(c)}))
	}
	for _, in := range inputs {
		if got, want := isWord(in, true), name.MatchString(in); got != want {
			t.Errorf("isWord(%q, dot) = %v, the name pattern says %v", in, got, want)
		}
		if got, want := isWord(in, false), key.MatchString(in); got != want {
			t.Errorf("isWord(%q) = %v, the key pattern says %v", in, got, want)
		}
	}
}
