package fsroot

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
)

func TestWriteFileExactModeAndNoLeftovers(t *testing.T) {
	// Under a umask that strips bits of the mode (077 of 0644), the file
	// is made private and given its mode by fchmod; where it strips none
	// (of 0600), it is made with its mode. Both end exact. syslet reads
	// its umask once: the test says what it set.
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	defer func(f func() uint32) { umask = f }(umask)
	umask = func() uint32 { return 0o077 }
	r := New(t.TempDir())
	for _, mode := range []uint32{0o644, 0o600, 0o755, 0o400} {
		if err := r.WriteFile("/etc/containers/systemd/a.container", []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(r.Path("/etc/containers/systemd/a.container"))
		if err != nil || uint32(fi.Mode().Perm()) != mode {
			t.Fatalf("mode %o, want %o (%v)", fi.Mode().Perm(), mode, err)
		}
	}
	ents, _ := os.ReadDir(r.Path("/etc/containers/systemd"))
	if len(ents) != 1 {
		t.Errorf("temporary files left behind: %v", ents)
	}
	// A directory in the way of a file is replaced.
	os.MkdirAll(r.Path("/etc/x/d/sub"), 0o755)
	if err := r.WriteFile("/etc/x/d", []byte("f"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func listDir(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if l, err := os.Readlink(filepath.Join(dir, n)); err == nil {
			n += "->" + l
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}

func TestWriteDirSwapsVersions(t *testing.T) {
	r := New(t.TempDir())
	p := "/etc/containers/config/app/etc/app/conf.d"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(r.WriteDir(p, []host.DirFile{{Name: "a.conf", Content: []byte("1"), Mode: 0o644}, {Name: "b.conf", Content: []byte("2"), Mode: 0o600}}))
	if got := listDir(t, r.Path(p)); got != "..data->..v1 ..v1 a.conf->..data/a.conf b.conf->..data/b.conf" {
		t.Errorf("first version: %s", got)
	}
	must(r.WriteDir(p, []host.DirFile{{Name: "a.conf", Content: []byte("1b"), Mode: 0o644}, {Name: "c.conf", Content: []byte("3"), Mode: 0o644}}))
	if got := listDir(t, r.Path(p)); got != "..data->..v2 ..v2 a.conf->..data/a.conf c.conf->..data/c.conf" {
		t.Errorf("second version: %s", got)
	}
	data, err := os.ReadFile(r.Path(p + "/a.conf"))
	if err != nil || string(data) != "1b" {
		t.Errorf("a.conf through the links = %q, %v", data, err)
	}
	// ReadTree sees the links and the version dir, which the planner resolves.
	tree, err := r.ReadTree("/etc/containers/config")
	must(err)
	if tree[p+"/..data"].Link != "..v2" || string(tree[p+"/..v2/c.conf"].Data) != "3" || tree[p+"/c.conf"].Link != "..data/c.conf" {
		t.Errorf("ReadTree: %+v", tree)
	}
}

// TestWriteDirInternalFiles: a file with an internal name (syslet's digest
// manifest) goes into the version with the others, swapped in by the same
// rename, and gets no per-file link, so it never appears among the files.
func TestWriteDirInternalFiles(t *testing.T) {
	r := New(t.TempDir())
	p := "/etc/containers/config/app/etc/app/conf.d"
	for i, v := range []string{"1", "2"} {
		files := []host.DirFile{{Name: "a.conf", Content: []byte(v), Mode: 0o644}, {Name: layout.Digests, Content: []byte("d" + v), Mode: 0o600}}
		if err := r.WriteDir(p, files); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("..data->..v%d ..v%d a.conf->..data/a.conf", i+1, i+1)
		if got := listDir(t, r.Path(p)); got != want {
			t.Errorf("version %d: %s, want %s", i+1, got, want)
		}
		fi, err := os.Stat(r.Path(p + "/..data/" + layout.Digests))
		data, _ := os.ReadFile(r.Path(p + "/..data/" + layout.Digests))
		if err != nil || fi.Mode().Perm() != 0o600 || string(data) != "d"+v {
			t.Errorf("manifest of version %d: %v %v %q", i+1, err, fi, data)
		}
	}
}

func TestRemovePrunesEmptyParents(t *testing.T) {
	r := New(t.TempDir())
	r.WriteFile("/etc/containers/config/web/etc/nginx/nginx.conf", []byte("x"), 0o644)
	r.WriteFile("/etc/containers/config/web/etc/keep.conf", []byte("x"), 0o644)
	if err := r.Remove("/etc/containers/config/web/etc/nginx/nginx.conf", "/etc/containers/config/web"); err != nil {
		t.Fatal(err)
	}
	if r.Exists("/etc/containers/config/web/etc/nginx") || !r.Exists("/etc/containers/config/web/etc/keep.conf") {
		t.Error("empty parent not pruned, or a non-empty one removed")
	}
	if err := r.Remove("/etc/containers/config/nope", "/etc/containers/config"); err != nil {
		t.Errorf("removing a missing path: %v", err)
	}
	if got, _ := r.ReadTree("/does/not/exist"); len(got) != 0 {
		t.Errorf("missing tree: %v", got)
	}
}

// TestNoOperationFollowsASymlink plants a link to an outside directory at
// every level of a config path; writes, config-dir swaps, removals and
// reads are refused (or remove only the link) and the outside is intact.
func TestNoOperationFollowsASymlink(t *testing.T) {
	const file = "/etc/containers/config/web/etc/app.conf"
	const dir = "/etc/containers/config/web/etc/app.d"
	for _, link := range []string{"/etc", "/etc/containers", "/etc/containers/config", "/etc/containers/config/web", "/etc/containers/config/web/etc", file, dir} {
		t.Run(link, func(t *testing.T) {
			r, outside := New(t.TempDir()), t.TempDir()
			os.WriteFile(filepath.Join(outside, "sentinel"), []byte("keep"), 0o644)
			os.MkdirAll(filepath.Dir(r.Path(link)), 0o755)
			if err := os.Symlink(outside, r.Path(link)); err != nil {
				t.Fatal(err)
			}
			var se *SymlinkError
			if err := r.WriteFile(file, []byte("x"), 0o644); link != dir && (!errors.As(err, &se) || se.Path != link) {
				t.Errorf("WriteFile: %v", err)
			}
			if err := r.WriteDir(dir, []host.DirFile{{Name: "a", Content: []byte("x"), Mode: 0o644}}); !errors.Is(err, ErrSymlink) && link != file {
				t.Errorf("WriteDir: %v", err)
			}
			if _, err := r.ReadTree("/etc/containers/config"); link != file && link != dir && link != "/etc/containers/config/web" && link != "/etc/containers/config/web/etc" && !errors.Is(err, ErrSymlink) {
				t.Errorf("ReadTree: %v", err)
			}
			r.Remove(file, "/etc/containers/config")
			r.Remove(dir, "/etc/containers/config")
			ents, _ := os.ReadDir(outside)
			if data, _ := os.ReadFile(filepath.Join(outside, "sentinel")); len(ents) != 1 || string(data) != "keep" {
				t.Errorf("outside changed: %v %q", ents, data)
			}
		})
	}
}

// TestLongNamesFit: the temporary names are short, so a config-dir file
// name of 255 bytes (the validator's limit) is written.
func TestLongNamesFit(t *testing.T) {
	r := New(t.TempDir())
	name := strings.Repeat("n", 255)
	if err := r.WriteDir("/etc/containers/config/web/d", []host.DirFile{{Name: name, Content: []byte("x"), Mode: 0o644}}); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("/etc/containers/config/web/"+name, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSpecialFilesAreNotOpened(t *testing.T) {
	r := New(t.TempDir())
	os.MkdirAll(r.Path("/etc/containers/config/web"), 0o755)
	if err := syscall.Mkfifo(r.Path("/etc/containers/config/web/fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := r.ReadTree("/etc/containers/config")
	if err != nil || tree["/etc/containers/config/web/fifo"].Mode&os.ModeNamedPipe == 0 {
		t.Errorf("ReadTree over a FIFO: %v %v", tree, err)
	}
}

// TestRootIsMadeOnWrite: a root that does not exist yet (render --out to a
// new directory) is created by the first write and reads as empty before.
func TestRootIsMadeOnWrite(t *testing.T) {
	r := New(filepath.Join(t.TempDir(), "new", "out"))
	if tree, err := r.ReadTree("/etc/containers/systemd"); err != nil || len(tree) != 0 {
		t.Fatalf("missing root: %v %v", tree, err)
	}
	if err := r.WriteFile("/etc/containers/systemd/a.container", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !r.Exists("/etc/containers/systemd/a.container") {
		t.Error("not written")
	}
}

// TestReadTreeRecordsEachKind holds ReadTree's record of each kind of
// entry: content and mode of files of several sizes (empty, a page and
// more), links with their target, directories with their mode.
func TestReadTreeRecordsEachKind(t *testing.T) {
	r := New(t.TempDir())
	big := bytes.Repeat([]byte("0123456789abcdef"), 1000)
	for p, data := range map[string][]byte{"/t/empty": {}, "/t/small": []byte("x\n"), "/t/d/big": big} {
		if err := r.WriteFile(p, data, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("d/big", r.Path("/t/link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(r.Path("/t/d"), 0o700); err != nil {
		t.Fatal(err)
	}
	tree, err := r.ReadTree("/t")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		mode fs.FileMode
		data []byte
		link string
	}{
		"/t":       {mode: fs.ModeDir | 0o755},
		"/t/d":     {mode: fs.ModeDir | 0o700},
		"/t/empty": {mode: 0o640, data: []byte{}},
		"/t/small": {mode: 0o640, data: []byte("x\n")},
		"/t/d/big": {mode: 0o640, data: big},
		"/t/link":  {mode: fs.ModeSymlink | 0o777, link: "d/big"},
	}
	if len(tree) != len(want) {
		t.Errorf("ReadTree: %d entries, want %d: %v", len(tree), len(want), tree)
	}
	for p, w := range want {
		f, ok := tree[p]
		if !ok || f.Mode != w.mode || !bytes.Equal(f.Data, w.data) || f.Link != w.link {
			t.Errorf("%s: %v %q %q (present %v), want %v %q %q", p, f.Mode, f.Data, f.Link, ok, w.mode, w.data, w.link)
		}
		if w.mode.IsRegular() && f.ModTime == 0 {
			t.Errorf("%s: no modification time", p)
		}
	}
}
