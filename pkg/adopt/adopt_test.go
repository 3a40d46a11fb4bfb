package adopt_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/adopt"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// load reads testdata/quadlets, the same hand-written set the integration
// test starts by hand before adopting it.
func load(t *testing.T) []adopt.File {
	t.Helper()
	paths, _ := filepath.Glob("testdata/quadlets/*")
	var files []adopt.File
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f := adopt.File{Path: p, Data: data}
		if strings.HasSuffix(p, ".build") {
			f.Context = map[string]adopt.ContextFile{}
			for _, n := range []string{"Containerfile", "hello.txt"} {
				c, err := os.ReadFile(filepath.Join("testdata/builds/app", n))
				if err != nil {
					t.Fatal(err)
				}
				f.Context[n] = adopt.ContextFile{Data: c, Mode: 0o644}
			}
		}
		files = append(files, f)
	}
	if len(files) < 10 {
		t.Fatalf("want at least ten quadlet files, found %d", len(files))
	}
	return files
}

func TestAdoptRendersBackToTheSameMeaning(t *testing.T) {
	files := load(t)
	res := adopt.Convert(files)
	if len(res.Failed) > 0 || len(res.Notes) > 0 {
		t.Fatalf("failed %q notes %q\n%s", res.Failed, res.Notes, res.Specs)
	}
	specs, rep := spec.Load([]spec.Source{{Name: "adopted.json", Data: res.Specs}})
	out := render.Render(specs)
	rep.Merge(render.Check(out))
	if rep.HasErrors() {
		t.Fatalf("adopted specs invalid:\n%s\n%s", rep.String(), res.Specs)
	}
	if len(out.Units) != len(files) {
		t.Fatalf("%d units rendered from %d files", len(out.Units), len(files))
	}
	for _, f := range files {
		uf, _ := unit.Parse(f.Data)
		for _, u := range out.Units {
			if u.FileName == filepath.Base(f.Path) && !plan.SameMeaning(uf, u.File) {
				t.Errorf("%s renders to another meaning:\n%s", f.Path, u.File.Bytes())
			}
		}
	}
}

func TestAdoptSaysWhatTheFirstApplyChanges(t *testing.T) {
	res := adopt.Convert([]adopt.File{
		{Path: "/etc/containers/systemd/plain.container", Data: []byte("[Container]\nImage=busybox\nExec=sleep 1\n")},
		{Path: "/etc/containers/systemd/v.volume", Data: []byte("[Volume]\n")},
		{Path: "/etc/containers/systemd/x.pod", Data: []byte("[Pod]\n")},
	})
	all := strings.Join(res.Notes, "\n")
	for _, want := range []string{"ContainerName= is not set", "VolumeName= is not set", "differs in meaning"} {
		if !strings.Contains(all, want) {
			t.Errorf("notes lack %q:\n%s", want, all)
		}
	}
	if len(res.Failed) != 1 || !strings.Contains(res.Failed[0], "x.pod") {
		t.Errorf("failed: %q", res.Failed)
	}
}
