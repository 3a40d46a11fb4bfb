package plan

import (
	"reflect"
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/syslet/syslet/pkg/unit"
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

// TestAddedKeys holds the shortcut for new units to what the general
// comparison says against an empty file.
func TestAddedKeys(t *testing.T) {
	units := []string{
		"",
		"[Unit]\nDescription=x\n",
		"[Container]\nImage=a\nEnvironment=A=1\nVolume=v:/v\nEnvironment=B=2\nEnvironment=A=1\n",
		"[Unit]\nAfter=\nWants=a.service b.service\nAfter= \n[Service]\nRestart=always\n",
		"[Unit]\nAfter=x\n[Container]\nImage=a\n[Unit]\nAfter=y\nRequires=\n",
		"[X-Syslet]\nDigest=abc\n[Install]\nWantedBy=multi-user.target default.target\n",
	}
	for _, text := range units {
		f, err := unit.Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := addedKeys(f), compareKeys(&unit.File{}, f, unit.Normalize(&unit.File{}), unit.Normalize(f)); !reflect.DeepEqual(got, want) {
			t.Errorf("%q:\n got %v\nwant %v", text, got, want)
		}
	}
}
