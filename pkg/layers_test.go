package pkg_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The layers of syslet, from the ground up. A package's path says which
// layer it is in (the longest matching prefix wins), and a layer may
// import only the layers listed for it: imports flow one way, spec →
// render → plan → executor → the apply entry point → cmd. The
// architecture map (docs/explanation/architecture.md) and each doc.go say
// the same in prose; this table is the rule.
var layers = []struct {
	name     string
	prefixes []string // package paths relative to the module
	may      []string // layers it may import, besides its own
}{
	{"ground", []string{"pkg/"}, nil},
	{"adapter", []string{"pkg/host/fsroot", "pkg/host/podman", "pkg/host/proxy", "pkg/host/systemd", "pkg/host/stage"}, []string{"ground"}},
	{"render", []string{"render"}, []string{"ground"}},
	{"load", []string{"pkg/load"}, []string{"render", "ground"}},
	{"plan", []string{"plan"}, []string{"render", "ground"}},
	{"executor", []string{"executor"}, []string{"plan", "render", "ground"}},
	{"app", []string{"pkg/app/"}, []string{"executor", "plan", "load", "render", "adapter", "ground"}},
	{"webhookd", []string{"webhookd"}, []string{"ground"}},
	{"cmd", []string{"cmd/"}, []string{"app", "load", "webhookd", "ground"}},
	// The release build (binaries, packages, SBOM): a tool beside cmd that
	// no program imports.
	{"release", []string{"pkg/release", "cmd/release"}, []string{"ground"}},
	// The documentation's checks (links); no code.
	{"docs", []string{"docs"}, nil},
	{"integration", []string{"integration"}, []string{"release", "cmd", "app", "executor", "plan", "load", "render", "adapter", "ground", "webhookd"}},
}

// noSiblings are the layers whose packages may not import each other.
// Ground packages do (spec uses unit and report); adapters never need to.
var noSiblings = map[string]bool{"adapter": true}

const module = "github.com/syslet/syslet"

// layerOf returns the layer of a package path relative to the module.
func layerOf(rel string) string {
	best, n := "", -1
	for _, l := range layers {
		for _, p := range l.prefixes {
			p = strings.TrimSuffix(p, "/")
			if (rel == p || strings.HasPrefix(rel, p+"/")) && len(p) > n {
				best, n = l.name, len(p)
			}
		}
	}
	return best
}

// TestImportsFollowTheLayers fails on any import of a syslet package that
// its layer may not make, and on a package that belongs to no layer.
func TestImportsFollowTheLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", filepath.Join("..", "...")).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	may := map[string][]string{}
	for _, l := range layers {
		may[l.name] = l.may
	}
	pkgs := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		rel, ok := strings.CutPrefix(fields[0], module+"/")
		if !ok {
			continue
		}
		pkgs++
		from := layerOf(rel)
		if from == "" {
			t.Errorf("%s belongs to no layer: add it to the table in pkg/layers_test.go", rel)
			continue
		}
		for _, imp := range fields[1:] {
			irel, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			to := layerOf(irel)
			switch {
			case to == from && !noSiblings[from]:
			case to != from && slices.Contains(may[from], to):
			default:
				t.Errorf("%s (%s) imports %s (%s): the %s layer may import only %v", rel, from, irel, to, from, append([]string{from}, may[from]...))
			}
		}
	}
	if pkgs < 20 {
		t.Fatalf("go list saw only %d syslet packages", pkgs)
	}
}

// TestLayerTable: every layer named as importable exists.
func TestLayerTable(t *testing.T) {
	names := map[string]bool{}
	for _, l := range layers {
		names[l.name] = true
	}
	for _, l := range layers {
		for _, m := range l.may {
			if !names[m] {
				t.Errorf("layer %s may import %q, which is not a layer", l.name, m)
			}
		}
	}
	for rel, want := range map[string]string{
		"pkg/spec": "ground", "pkg/host": "ground", "pkg/host/fsroot": "adapter", "pkg/load": "load",
		"pkg/load/quadletcheck": "load", "pkg/app/deploy": "app", "plan": "plan", "cmd/syslet": "cmd",
		"render": "render", "executor": "executor", "webhookd": "webhookd", "webhookd/queue": "webhookd", "integration/testhost": "integration",
		"pkg/release": "release", "cmd/release": "release",
	} {
		if got := layerOf(rel); got != want {
			t.Errorf("layerOf(%s) = %s, want %s", rel, got, want)
		}
	}
}

// rootEntries is what the repository's root holds: the design card's
// top-level layout, the documentation beside it, and the files of git and
// CI. A file a tool or a session leaves at the root (podmanargs.image, a
// copy of a quadlet corpus file, was committed there once) fails here
// before it is committed, or on the commit that added it.
var rootEntries = []string{".ci", ".gitignore", "BENCHMARKS.md", "LICENSE", "README.md", "Taskfile.yml", "go.mod", "go.sum",
	"cmd", "docs", "examples", "executor", "integration", "pkg", "plan", "render", "webhookd"}

// TestRootHoldsOnlyTheLayout fails on a file or directory at the root of
// the repository, tracked or not yet (ignored build output aside), that
// is not in rootEntries.
func TestRootHoldsOnlyTheLayout(t *testing.T) {
	out, err := exec.Command("git", "-C", "..", "ls-files", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		top, _, _ := strings.Cut(f, "/")
		if seen[top] || slices.Contains(rootEntries, top) {
			continue
		}
		seen[top] = true
		if _, err := os.Lstat(filepath.Join("..", top)); err != nil {
			continue // deleted from the work tree, not yet from the index
		}
		t.Errorf("%s at the repository's root is not part of its layout: move it where it belongs (or delete it), or add it to rootEntries in pkg/layers_test.go", top)
	}
}
