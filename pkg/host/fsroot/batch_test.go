package fsroot

import (
	"errors"
	"os"
	"testing"
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
