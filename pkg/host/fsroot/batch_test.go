package fsroot

import (
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
)

// A batch writing over a tree rendered before: a file that is there is
// replaced by a rename (content and mode exact, no temporary file left), a
// directory in the way is replaced, a symlink is refused, never written
// through, and a file that already holds its content and mode is left
// alone.
func TestBatchWritesOverAnEarlierTree(t *testing.T) {
	r := New(t.TempDir())
	const unit = "/etc/containers/systemd/a.container"
	first := r.NewBatch()
	if err := first.WriteFile(unit, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(r.Path(unit))

	b := r.NewBatch()
	if err := b.WriteFile(unit, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(r.Path("/etc/containers/systemd/d.volume/sub"), 0o755)
	if err := b.WriteFile("/etc/containers/systemd/d.volume", []byte("[Volume]\n"), 0o644); err != nil {
		t.Fatalf("a directory in the way: %v", err)
	}
	outside := t.TempDir() + "/victim"
	os.WriteFile(outside, []byte("victim\n"), 0o644)
	os.Symlink(outside, r.Path("/etc/containers/systemd/l.network"))
	if err := b.WriteFile("/etc/containers/systemd/l.network", []byte("[Network]\n"), 0o644); !errors.Is(err, ErrSymlink) {
		t.Errorf("a symlink in the way: err = %v, want ErrSymlink", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	data, _ := os.ReadFile(r.Path(unit))
	fi, _ := os.Stat(r.Path(unit))
	if string(data) != "new\n" || fi.Mode().Perm() != 0o644 {
		t.Errorf("replaced file: %q mode %o", data, fi.Mode().Perm())
	}
	if os.SameFile(before, fi) {
		t.Error("the file was rewritten in place, not replaced by a rename")
	}
	if v, _ := os.ReadFile(outside); string(v) != "victim\n" {
		t.Errorf("written through the symlink: %q", v)
	}
	if got, want := listDir(t, r.Path("/etc/containers/systemd")), "a.container d.volume l.network->"+outside; got != want {
		t.Errorf("directory holds %q, want %q (no temporary file left)", got, want)
	}

	// The same content and mode again: left alone. The same size and mode
	// with other content: replaced.
	again := r.NewBatch()
	if err := again.WriteFile(unit, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := again.WriteFile("/etc/containers/systemd/d.volume", []byte("[VOLUME]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.Stat(r.Path(unit)); !os.SameFile(now, fi) {
		t.Error("a file that already held its content was written again")
	}
	if d, _ := os.ReadFile(r.Path("/etc/containers/systemd/d.volume")); string(d) != "[VOLUME]\n" {
		t.Errorf("a file of the same size with other content was kept: %q", d)
	}
}

// A batch's config dir: a new one gets the layout Root.WriteDir gives it;
// one already holding exactly its files is left alone (no new version);
// one with other content, or anything beside its files, gets a new version
// as an apply would write it; a symlink in its place is refused.
func TestBatchWritesConfigDirs(t *testing.T) {
	const dir = "/etc/containers/config/web/etc/app"
	files := []host.DirFile{{Name: "a.conf", Content: []byte("a=1\n"), Mode: 0o644}, {Name: "b.conf", Content: []byte("secret\n"), Mode: 0o600},
		{Name: layout.Digests, Content: []byte("sha256:x a.conf\n"), Mode: 0o600}}
	want := New(t.TempDir())
	if err := want.WriteDir(dir, files); err != nil {
		t.Fatal(err)
	}
	r := New(t.TempDir())
	write := func(fs []host.DirFile) {
		t.Helper()
		b := r.NewBatch()
		if err := b.WriteDir(dir, fs); err != nil {
			t.Fatal(err)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write(files)
	if got, w := snapshotTree(t, r.Path(dir)), snapshotTree(t, want.Path(dir)); got != w {
		t.Fatalf("a new config dir:\n%s\nwant what WriteDir gives:\n%s", got, w)
	}
	v1, _ := os.Stat(r.Path(dir + "/..v1"))

	write(files)
	if now, err := os.Stat(r.Path(dir + "/..v1")); err != nil || !os.SameFile(now, v1) || listDir(t, r.Path(dir)) != "..data->..v1 ..v1 a.conf->..data/a.conf b.conf->..data/b.conf" {
		t.Errorf("a config dir that held its files was written again: %s", listDir(t, r.Path(dir)))
	}

	changed := slices.Clone(files)
	changed[0].Content = []byte("a=2\n")
	write(changed)
	if l, _ := os.Readlink(r.Path(dir + "/..data")); l != "..v2" {
		t.Errorf("changed content: ..data -> %q, want ..v2", l)
	}
	if d, _ := os.ReadFile(r.Path(dir + "/a.conf")); string(d) != "a=2\n" {
		t.Errorf("a.conf reads %q", d)
	}

	// A stray link beside the files: the dir is written again, without it.
	os.Symlink("..data/gone.conf", r.Path(dir+"/gone.conf"))
	write(changed)
	if got := listDir(t, r.Path(dir)); got != "..data->..v3 ..v3 a.conf->..data/a.conf b.conf->..data/b.conf" {
		t.Errorf("after a stray link: %s", got)
	}

	outside := t.TempDir()
	os.MkdirAll(r.Path("/etc/containers/config/evil/etc"), 0o755)
	os.Symlink(outside, r.Path("/etc/containers/config/evil/etc/app"))
	b := r.NewBatch()
	if err := b.WriteDir("/etc/containers/config/evil/etc/app", files); !errors.Is(err, ErrSymlink) {
		t.Errorf("a symlink in the way: err = %v, want ErrSymlink", err)
	}
	b.Close()
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("written through the symlink: %v", ents)
	}
}
