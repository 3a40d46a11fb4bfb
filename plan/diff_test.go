package plan

import (
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"
)

// TestWholeDiff holds the fast diff of a created or emptied file to
// udiff's own output.
func TestWholeDiff(t *testing.T) {
	texts := []string{"", "a\n", "a", "a\nb\n", "a\nb", "\n", "\n\n", "x\n\ny\n", "one line with spaces \n"}
	for _, text := range texts {
		for _, c := range []struct{ old, new []byte }{{nil, []byte(text)}, {[]byte(text), nil}, {[]byte{}, []byte(text)}} {
			oldLabel, newLabel := "a/p", "b/p"
			if c.old == nil {
				oldLabel = "/dev/null"
			}
			if c.new == nil {
				newLabel = "/dev/null"
			}
			want := udiff.Unified(oldLabel, newLabel, string(c.old), string(c.new))
			if got := unifiedDiff("/p", c.old, c.new); got != want {
				t.Errorf("old %q new %q:\ngot  %q\nwant %q", c.old, c.new, got, want)
			}
		}
	}
}
