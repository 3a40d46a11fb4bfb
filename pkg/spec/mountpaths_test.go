package spec_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/spec"
)

// TestMountPathConflicts checks the indexed conflict check against the
// plain pairwise comparison it replaces: the same findings in the same
// order, for random sets of config files and dirs drawn from a small tree
// so that duplicates and nesting are frequent.
func TestMountPathConflicts(t *testing.T) {
	tree := []string{"/a", "/a/b", "/a/b/c", "/a/bc", "/a/b/d", "/e", "/e/f", "/ab"}
	rng := rand.New(rand.NewPCG(1, 2))
	conflicts := 0
	for round := range 200 {
		nf, nd := rng.IntN(6), rng.IntN(4)
		var files, dirs, paths []string
		for range nf {
			p := tree[rng.IntN(len(tree))]
			files = append(files, fmt.Sprintf(`{"mountPath":%q,"content":""}`, p))
			paths = append(paths, p)
		}
		for range nd {
			p := tree[rng.IntN(len(tree))]
			dirs = append(dirs, fmt.Sprintf(`{"mountPath":%q,"files":[]}`, p))
			paths = append(paths, p)
		}
		fields := `"configFiles":[` + strings.Join(files, ",") + `],"configDirs":[` + strings.Join(dirs, ",") + `]`
		src := container("web", "", fields)
		src = strings.Replace(src, `"unit": {`, `"unit": {"Service": {"ExecReload": "/bin/true"}, `, 1)
		_, rep := spec.Load([]spec.Source{{Name: "t.json", Data: []byte(src)}})
		var got []string
		for _, f := range rep.Findings {
			if f.Rule == spec.RuleMountDuplicate || f.Rule == spec.RuleMountNested {
				got = append(got, f.Path+": "+f.Message)
			}
		}
		// The reference: every pair, reported at the later one.
		at := func(i int) string {
			if i < nf {
				return fmt.Sprintf("[0].configFiles[%d].mountPath", i)
			}
			return fmt.Sprintf("[0].configDirs[%d].mountPath", i-nf)
		}
		var want []string
		for i, a := range paths {
			for j, b := range paths[:i] {
				switch {
				case a == b:
					want = append(want, fmt.Sprintf("%s: mountPath %q is already used at %s", at(i), a, at(j)))
				case strings.HasPrefix(a, b+"/"):
					want = append(want, fmt.Sprintf("%s: mountPath %q is inside %q (%s)", at(i), a, b, at(j)))
				case strings.HasPrefix(b, a+"/"):
					want = append(want, fmt.Sprintf("%s: mountPath %q contains %q (%s)", at(i), a, b, at(j)))
				}
			}
		}
		conflicts += len(want)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d, paths %q:\ngot  %q\nwant %q", round, paths, got, want)
		}
	}
	if conflicts < 100 {
		t.Fatalf("only %d conflicts in all rounds: the test does not exercise the check", conflicts)
	}
}
