package render_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// dump prints everything a render produced in one reviewable text: each
// unit file whole, each config / context file with its mode, each config
// dir file, each secret's podman names (never the ciphertext), each
// external secret's name.
func dump(o *render.Output) string {
	var b strings.Builder
	for _, u := range o.Units {
		if u.Link != "" {
			fmt.Fprintf(&b, "=== %s -> %s (%s, container %s)\n", u.Path, u.Link, u.Service, u.Container)
		} else {
			fmt.Fprintf(&b, "=== %s (%s)\n%s", u.Path, u.Service, u.Bytes())
		}
		for _, d := range u.DropIns {
			fmt.Fprintf(&b, "=== %s (drop-in of %s)\n%s", d.Path, d.Owner, d.Content)
		}
	}
	for _, f := range o.Files {
		fmt.Fprintf(&b, "=== %s (%s %04o %s)\n%s\n", f.Path, f.Kind, f.Mode, f.Owner, f.Content)
	}
	for _, d := range o.Dirs {
		for _, f := range d.Files {
			fmt.Fprintf(&b, "=== %s/%s (config-dir %04o %s)\n%s\n", d.Path, f.Name, f.Mode, d.Owner, f.Content)
		}
	}
	for _, s := range o.Secrets {
		fmt.Fprintf(&b, "=== secret %s hash=%s\n", s.Name, s.Hash)
		for _, k := range s.Keys {
			fmt.Fprintf(&b, "%s\n", s.PodmanName(k))
		}
	}
	for _, s := range o.ExternalSecrets {
		fmt.Fprintf(&b, "=== external secret %s\n", s.Name)
	}
	if o.Proxy != nil {
		fmt.Fprintf(&b, "=== %s\n%s=== %s\n%s", layout.ProxyConfig, o.Proxy.Config, layout.ProxyUnit, o.Proxy.Unit)
	}
	return b.String()
}

func renderDir(t *testing.T, dir string) (*render.Output, string) {
	t.Helper()
	srcs, err := spec.ReadSources(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	set := load.Sources(srcs)
	out, rep := set.Out, set.Report
	// Findings name the source relative to the case dir so golden files
	// do not depend on where the repository is checked out.
	s := strings.ReplaceAll(rep.String(), dir+string(filepath.Separator), "")
	return out, s
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if got == "" {
			os.Remove(path)
			return
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run go test ./render -update to accept):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// TestGolden renders every testdata/<case>/ directory of specs and compares
// the result with want.txt (rendered files) and want.err (findings).
func TestGolden(t *testing.T) {
	ents, err := os.ReadDir("testdata")
	if err != nil || len(ents) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, e := range ents {
		c := filepath.Join("testdata", e.Name())
		t.Run(e.Name(), func(t *testing.T) {
			in := filepath.Join(c, "in")
			out, findings := renderDir(t, in)
			golden(t, filepath.Join(c, "want.err"), findings)
			if findings == "" || !strings.Contains(findings, ": ") {
				golden(t, filepath.Join(c, "want.txt"), dump(out))
			}
		})
	}
}

// TestExamples renders examples/ cleanly, twice, byte-identically, and
// every rendered unit parses back to the same bytes.
func TestExamples(t *testing.T) {
	dir := filepath.Join("..", "examples")
	a, findings := renderDir(t, dir)
	if findings != "" {
		t.Fatalf("examples do not validate:\n%s", findings)
	}
	b, _ := renderDir(t, dir)
	if dump(a) != dump(b) {
		t.Fatal("rendering examples twice gave different output")
	}
	if len(a.Units) < 8 {
		t.Fatalf("examples rendered %d units, want the whole stack", len(a.Units))
	}
	pod, findings := renderDir(t, filepath.Join(dir, "pod"))
	if findings != "" || len(pod.Units) != 7 {
		t.Fatalf("examples/pod: %d units\n%s", len(pod.Units), findings)
	}
	for _, u := range a.Units {
		parsed, err := unit.Parse(u.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", u.FileName, err)
		}
		if !bytes.Equal(parsed.Bytes(), u.Bytes()) {
			t.Errorf("%s does not round-trip:\n%s\n---\n%s", u.FileName, u.Bytes(), parsed.Bytes())
		}
	}
}

// TestDirDigests: a config dir version holds its files and, last, the
// manifest of their digests in name order (0600), which parses back.
func TestDirDigests(t *testing.T) {
	d := render.Dir{Path: "/etc/containers/config/web/etc/web.d", Files: []render.DirFile{
		{Name: "b.conf", Content: []byte("b\n"), Mode: 0o644}, {Name: "a b.conf", Content: []byte("a\n"), Mode: 0o600}}}
	inst := d.Installed()
	if len(inst) != 3 || inst[2].Name != layout.Digests || inst[2].Mode != 0o600 {
		t.Fatalf("installed: %+v", inst)
	}
	want := render.Digest([]byte("a\n")) + " a b.conf\n" + render.Digest([]byte("b\n")) + " b.conf\n"
	if string(inst[2].Content) != want {
		t.Errorf("manifest:\n%s\nwant:\n%s", inst[2].Content, want)
	}
	got := render.ParseDirDigests(append(inst[2].Content, "garbage line\n\n"...))
	if len(got) != 2 || got["a b.conf"] != render.Digest([]byte("a\n")) || got["b.conf"] != render.Digest([]byte("b\n")) {
		t.Errorf("parsed: %v", got)
	}
	if len(d.Files) != 2 {
		t.Errorf("Installed changed the dir's own files: %+v", d.Files)
	}
}

// TestSecretLineWords: quadlet reads Secret= as a list of words, so one
// line may name several secrets; each must be declared, and each is one
// the container uses.
func TestSecretLineWords(t *testing.T) {
	set := load.Bytes("s.json", []byte(`[
		{"apiVersion": "v1", "type": "secret", "name": "a", "external": true},
		{"apiVersion": "v1", "type": "container", "name": "c",
		 "unit": {"Container": {"Image": "busybox", "Secret": "a,type=env,target=A b"}}}]`))
	out, rep := set.Out, set.Report
	if len(rep.Findings) != 1 || rep.Findings[0].Rule != spec.RuleUndefinedSecret || !strings.Contains(rep.Findings[0].Message, `"b"`) {
		t.Fatalf("want one undefined-secret finding for b:\n%s", rep.String())
	}
	if got := out.Units[0].Used().Secrets; len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("secrets the container uses: %q", got)
	}
}

// A volume's or network's lines are sized exactly: a big set is mostly
// such units, and a spare line is 64 bytes held for the whole run.
func TestResourceLinesAreSizedExactly(t *testing.T) {
	specs := []*spec.Spec{
		{Kind: spec.Volume, Name: "data", RemovalAllowed: true, ReclaimPolicy: spec.Delete},
		{Kind: spec.Network, Name: "net", RemovalAllowed: true, ReclaimPolicy: spec.Delete},
	}
	for _, u := range render.Render(specs).Units {
		if len(u.Lines) != cap(u.Lines) {
			t.Errorf("%s: %d lines in room for %d", u.FileName, len(u.Lines), cap(u.Lines))
		}
	}
}
