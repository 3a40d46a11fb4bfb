package fsroot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
)

// snapshotTree lists every entry under dir with its link target or its
// content: what a reader of the tree sees.
func snapshotTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			b.WriteString(" -> " + l)
		case fi.Mode().IsRegular():
			data, _ := os.ReadFile(p)
			b.WriteString(" = " + string(data) + " " + fi.Mode().Perm().String())
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return b.String()
}

// leftovers lists the temporary names under dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && layout.Leftover(fi.Name()) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestPrepareFileChangesNothingUntilSwap(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before func(r Root) // what is at the target first
	}{
		{"new file in a new directory", func(Root) {}},
		{"file replaced", func(r Root) {
			os.MkdirAll(r.Path("/etc/containers/config/web/www"), 0o755)
			r.WriteFile("/etc/containers/config/web/www/index.html", []byte("old"), 0o600)
		}},
		{"directory in the way", func(r Root) { os.MkdirAll(r.Path("/etc/containers/config/web/www/index.html/x"), 0o755) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(t.TempDir())
			os.MkdirAll(r.Path("/etc/containers/config"), 0o755)
			tc.before(r)
			p := "/etc/containers/config/web/www/index.html"
			tree := r.Path("/etc/containers/config")
			before := snapshotTree(t, tree)

			// Prepared and discarded: the tree is as it was, created directories included.
			s, err := r.PrepareFile(p, []byte("new"), 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if got := snapshotTree(t, tree); !strings.Contains(got, layout.TempPrefix) {
				t.Errorf("nothing prepared next to the target:\n%s", got)
			}
			if err := s.Undo(); err != nil {
				t.Fatal(err)
			}
			if got := snapshotTree(t, tree); got != before {
				t.Errorf("a discarded preparing left the tree changed:\n%s\nwant\n%s", got, before)
			}

			// Prepared, swapped, undone: back to what it was.
			s, err = r.PrepareFile(p, []byte("new"), 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Swap(); err != nil {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(r.Path(p)); err != nil || string(data) != "new" {
				t.Fatalf("after Swap: %q %v", data, err)
			}
			if err := s.Undo(); err != nil {
				t.Fatal(err)
			}
			if got := snapshotTree(t, tree); got != before {
				t.Errorf("Undo did not put the tree back:\n%s\nwant\n%s", got, before)
			}

			// Prepared, swapped, settled: the new file and nothing else.
			s, err = r.PrepareFile(p, []byte("new"), 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Swap(); err != nil {
				t.Fatal(err)
			}
			if err := s.Settle(); err != nil {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(r.Path(p)); err != nil || string(data) != "new" {
				t.Fatalf("after Settle: %q %v", data, err)
			}
			if l := leftovers(t, tree); len(l) != 0 {
				t.Errorf("temporary names left: %v", l)
			}
			if err := s.Undo(); err != nil {
				t.Errorf("Undo after Settle must do nothing: %v", err)
			}
		})
	}
}

func TestPrepareFileRefusesSymlinks(t *testing.T) {
	r := New(t.TempDir())
	os.MkdirAll(r.Path("/etc/containers/systemd"), 0o755)
	os.Symlink("/etc/shadow", r.Path("/etc/containers/systemd/a.container"))
	if _, err := r.PrepareFile("/etc/containers/systemd/a.container", []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("err = %v", err)
	}
	if l := leftovers(t, r.Path("/etc")); len(l) != 0 {
		t.Errorf("temporary names left: %v", l)
	}
}

func TestPrepareDirChangesNothingUntilSwap(t *testing.T) {
	p := "/etc/containers/config/app/etc/app/conf.d"
	v1 := []host.DirFile{{Name: "a.conf", Content: []byte("1"), Mode: 0o644}, {Name: "b.conf", Content: []byte("2"), Mode: 0o600}, {Name: layout.Digests, Content: []byte("d1"), Mode: 0o600}}
	v2 := []host.DirFile{{Name: "a.conf", Content: []byte("1b"), Mode: 0o644}, {Name: "c.conf", Content: []byte("3"), Mode: 0o644}, {Name: layout.Digests, Content: []byte("d2"), Mode: 0o600}}
	for _, tc := range []struct {
		name   string
		before func(r Root)
	}{
		{"new config dir", func(Root) {}},
		{"next version", func(r Root) { r.WriteDir(p, v1) }},
		{"edited by hand (a file in place of a link)", func(r Root) {
			r.WriteDir(p, v1)
			os.Remove(r.Path(p + "/a.conf"))
			os.WriteFile(r.Path(p+"/a.conf"), []byte("sed -i"), 0o644)
		}},
		{"a file in the way", func(r Root) { os.MkdirAll(r.Path(filepath.Dir(p)), 0o755); os.WriteFile(r.Path(p), []byte("x"), 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(t.TempDir())
			os.MkdirAll(r.Path("/etc/containers/config"), 0o755)
			tc.before(r)
			tree := r.Path("/etc/containers/config")
			before := snapshotTree(t, tree)

			s, err := r.PrepareDir(p, v2)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Undo(); err != nil {
				t.Fatal(err)
			}
			if got := snapshotTree(t, tree); got != before {
				t.Errorf("a discarded preparing left the tree changed:\n%s\nwant\n%s", got, before)
			}

			s, err = r.PrepareDir(p, v2)
			if err != nil {
				t.Fatal(err)
			}
			if got := snapshotTree(t, tree); !strings.Contains(got, before) && tc.name == "new config dir" {
				t.Errorf("preparing changed what a reader sees:\n%s", got)
			}
			if data, _ := os.ReadFile(r.Path(p + "/a.conf")); tc.name == "next version" && string(data) != "1" {
				t.Errorf("a.conf read %q while only prepared, want the old 1", data)
			}
			if err := s.Swap(); err != nil {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(r.Path(p + "/a.conf")); err != nil || string(data) != "1b" {
				t.Fatalf("a.conf after Swap: %q %v", data, err)
			}
			if _, err := os.Lstat(r.Path(p + "/b.conf")); err == nil {
				t.Errorf("b.conf is still there after Swap")
			}
			if err := s.Undo(); err != nil {
				t.Fatal(err)
			}
			if got := snapshotTree(t, tree); got != before {
				t.Errorf("Undo did not put the tree back:\n%s\nwant\n%s", got, before)
			}

			s, err = r.PrepareDir(p, v2)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Swap(); err != nil {
				t.Fatal(err)
			}
			if err := s.Settle(); err != nil {
				t.Fatal(err)
			}
			if l := leftovers(t, tree); len(l) != 0 {
				t.Errorf("temporary names left: %v", l)
			}
			got := listDir(t, r.Path(p))
			if !strings.HasPrefix(got, "..data->..v") || strings.Count(got, "..v") != 2 || !strings.HasSuffix(got, " a.conf->..data/a.conf c.conf->..data/c.conf") {
				t.Errorf("after Settle: %s", got)
			}
		})
	}
}

// An instance's link is prepared like a file: nothing a reader sees changes
// until Swap, Undo puts back what was there (another link, a hand-written
// file), Settle leaves the link alone.
func TestPrepareLinkChangesNothingUntilSwap(t *testing.T) {
	const dir = "/etc/containers/systemd"
	p := dir + "/web@2.container"
	for _, tc := range []struct {
		name   string
		before func(r Root)
	}{
		{"new link", func(Root) {}},
		{"link replaced", func(r Root) { os.Symlink("old@.container", r.Path(p)) }},
		{"hand-written instance replaced", func(r Root) { r.WriteFile(p, []byte("[Container]\nImage=x\n"), 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(t.TempDir())
			os.MkdirAll(r.Path(dir), 0o755)
			tc.before(r)
			tree := r.Path(dir)
			before := snapshotTree(t, tree)
			for _, end := range []string{"discard", "undo", "settle"} {
				s, err := r.PrepareLink(p, "web@.container")
				if err != nil {
					t.Fatal(err)
				}
				if end == "discard" {
					if err := s.Undo(); err != nil {
						t.Fatal(err)
					}
					if got := snapshotTree(t, tree); got != before {
						t.Errorf("a discarded preparing left the tree changed:\n%s\nwant\n%s", got, before)
					}
					continue
				}
				if err := s.Swap(); err != nil {
					t.Fatal(err)
				}
				if l, err := os.Readlink(r.Path(p)); err != nil || l != "web@.container" {
					t.Fatalf("after Swap: %q %v", l, err)
				}
				if end == "undo" {
					if err := s.Undo(); err != nil {
						t.Fatal(err)
					}
					if got := snapshotTree(t, tree); got != before {
						t.Errorf("Undo did not put the tree back:\n%s\nwant\n%s", got, before)
					}
					continue
				}
				if err := s.Settle(); err != nil {
					t.Fatal(err)
				}
				if l, err := os.Readlink(r.Path(p)); err != nil || l != "web@.container" {
					t.Fatalf("after Settle: %q %v", l, err)
				}
				if l := leftovers(t, tree); len(l) != 0 {
					t.Errorf("temporary names left: %v", l)
				}
			}
		})
	}
}

func TestPrepareLinkRefuses(t *testing.T) {
	r := New(t.TempDir())
	os.MkdirAll(r.Path("/etc/containers/systemd/web@1.container"), 0o755)
	for _, tc := range []struct{ path, target, want string }{
		{"/etc/containers/systemd/web@1.container", "web@.container", "directory"},
		{"/etc/containers/systemd/web@2.container", "../web@.container", "a name beside it"},
		{"/etc/containers/systemd/web@2.container", "", "a name beside it"},
	} {
		if _, err := r.PrepareLink(tc.path, tc.target); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("PrepareLink(%s, %q) = %v, want an error saying %q", tc.path, tc.target, err, tc.want)
		}
	}
	if l := leftovers(t, r.Path("/etc")); len(l) != 0 {
		t.Errorf("temporary names left: %v", l)
	}
}
