package bounded

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/digest"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "ok"), []byte("hello"), 0o600))
	must(os.WriteFile(filepath.Join(dir, "big"), make([]byte, 2048), 0o600))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	must(os.Symlink("ok", filepath.Join(dir, "link")))
	must(os.Symlink("/dev/zero", filepath.Join(dir, "zero")))
	must(os.Mkdir(filepath.Join(dir, "sub"), 0o700))
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	must(err)
	defer l.Close()
	must(os.Symlink("sock", filepath.Join(dir, "tosock")))
	k := Kind{What: "a test file", Max: 1024}
	for _, tt := range []struct {
		name, want string
		k          Kind
		err        error
	}{
		{"ok", "hello", k, nil},
		{"big", "", k, ErrLimit},
		{"fifo", "", k, ErrNotRegular},
		{"link", "", k, ErrNotRegular},
		{"link", "hello", Kind{What: "x", Max: 1024, Follow: true}, nil},
		{"zero", "", k, ErrNotRegular},
		{"zero", "", Kind{What: "x", Max: 1024, Follow: true}, ErrNotRegular},
		{"sub", "", k, ErrNotRegular},
		{"sock", "", k, ErrNotRegular},
		{"tosock", "", Kind{What: "x", Max: 1024, Follow: true}, ErrNotRegular},
		{"missing", "", k, fs.ErrNotExist},
	} {
		done := make(chan struct{})
		var got []byte
		var err error
		go func() {
			defer close(done)
			got, err = ReadFile(filepath.Join(dir, tt.name), tt.k)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadFile(%s) blocks", tt.name)
		}
		if tt.err != nil {
			if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), filepath.Join(dir, tt.name)) {
				t.Errorf("ReadFile(%s) = %q, %v; want %v naming the path", tt.name, got, err, tt.err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("ReadFile(%s) = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	_, err = ReadFile(filepath.Join(dir, "big"), k)
	if want := dir + "/big: larger than 1 KiB, the cap of a test file"; err == nil || err.Error() != want {
		t.Errorf("cap error = %v, want %q", err, want)
	}
	_, err = ReadFile(filepath.Join(dir, "fifo"), k)
	if want := dir + "/fifo is a FIFO, not a regular file: syslet reads it only as a regular file, never through a symlink"; err == nil || err.Error() != want {
		t.Errorf("FIFO error = %v, want %q", err, want)
	}
}

func TestDigestAndBudget(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	data := []byte(strings.Repeat("abc\n", 100000))
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fd, _, err := OpenAt(-100, p, p, Kind{What: "x"})
	if err != nil {
		t.Fatal(err)
	}
	sum, n, err := DigestFD(fd, p, Kind{What: "x", Max: 1 << 20})
	syscall.Close(fd)
	if err != nil || n != int64(len(data)) || sum != digest.Of(data) {
		t.Errorf("DigestFD = %x, %d, %v", sum, n, err)
	}
	b := NewBudget("/tree", "a test tree", 100, 10, 2)
	if b.Keep(8) != nil || b.Read(50) != nil || b.Entry() != nil || b.Entry() != nil {
		t.Fatal("within the budget")
	}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{b.Keep(5), "/tree: larger than 10 bytes of content held in memory, the cap of a test tree"},
		{b.Read(100), "/tree: larger than 100 bytes of content in total, the cap of a test tree"},
		{b.Entry(), "/tree: larger than 2 entries, the cap of a test tree"},
	} {
		if tt.err == nil || tt.err.Error() != tt.want || !errors.Is(tt.err, ErrLimit) {
			t.Errorf("budget error %v, want %q", tt.err, tt.want)
		}
	}
}

func TestOpenBeneath(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "specs")
	for _, p := range []string{"specs/sub", "outside"} {
		os.MkdirAll(filepath.Join(top, p), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "a.json"), []byte("A"), 0o644)
	os.WriteFile(filepath.Join(dir, "sub", "b.json"), []byte("B"), 0o644)
	os.WriteFile(filepath.Join(top, "outside", "secret"), []byte("S"), 0o600)
	links := map[string]string{
		"in.json":       "a.json",
		"deep.json":     "sub/../sub/b.json",
		"subdir":        "sub",
		"up.json":       "../outside/secret",
		"abs.json":      filepath.Join(dir, "a.json"),
		"sneaky.json":   "sub/../../outside/secret",
		"loop.json":     "loop.json",
		"viadir.json":   "subdir/b.json",
		"dangling.json": "nothing.json",
	}
	for n, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	k := Kind{What: "a spec file", Max: 1 << 20}
	for _, tt := range []struct {
		name, want string
		err        error
	}{
		{"a.json", "A", nil},
		{"in.json", "A", nil},
		{"deep.json", "B", nil},
		{"viadir.json", "B", nil},
		{"sub/b.json", "B", nil},
		{"up.json", "", ErrEscapes},
		{"abs.json", "", ErrEscapes},
		{"sneaky.json", "", ErrEscapes},
		{"../outside/secret", "", ErrEscapes},
		{"loop.json", "", syscall.ELOOP},
		{"dangling.json", "", fs.ErrNotExist},
		{"sub", "", ErrNotRegular},
	} {
		f, _, err := OpenBeneath(dir, tt.name, k)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("OpenBeneath(%s) = %v, want %v", tt.name, err, tt.err)
			}
			if f != nil {
				f.Close()
			}
			continue
		}
		if err != nil {
			t.Errorf("OpenBeneath(%s): %v", tt.name, err)
			continue
		}
		b := make([]byte, 8)
		n, _ := f.Read(b)
		f.Close()
		if string(b[:n]) != tt.want {
			t.Errorf("OpenBeneath(%s) read %q, want %q", tt.name, b[:n], tt.want)
		}
	}
	_, _, err := OpenBeneath(dir, "up.json", k)
	if want := dir + "/up.json leads outside " + dir + " through a symlink: syslet reads it only from inside the directory"; err == nil || err.Error() != want {
		t.Errorf("escape error = %v, want %q", err, want)
	}
}

func TestFileLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "j")
	in := "a\n\n  b  \n" + strings.Repeat("x", 600000) + "\nc\n" + strings.Repeat("y", 300000) + "\nd"
	if err := os.WriteFile(p, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size := int64(len(in))
	for _, tt := range []struct {
		tail    int64
		want    string
		skipped int
	}{
		{size, "a,b,c,y*,d", 1},
		{size - 2, "b,c,y*,d", 1}, // starts on a line's start: kept
		{size - 3, "b,c,y*,d", 1}, // starts on the start of "  b  "
		{size - 4, "c,y*,d", 1},   // starts inside it: skipped as partial
		{300003, "y*,d", 0},       // starts at the newline ending "c"
		{2, "d", 0},
	} {
		var got []string
		skipped, err := FileLines(f, size, tt.tail, 400000, func(l []byte) {
			s := string(l)
			if strings.HasPrefix(s, "yy") {
				s = "y*"
			}
			got = append(got, s)
		})
		if err != nil || skipped != tt.skipped || strings.Join(got, ",") != tt.want {
			t.Errorf("tail %d: %q, skipped %d, %v; want %q, %d", tt.tail, got, skipped, err, tt.want, tt.skipped)
		}
	}
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "d"), 0o700)
	for _, n := range []string{"a", "b", "c"} {
		os.WriteFile(filepath.Join(dir, "d", n), nil, 0o600)
	}
	os.Symlink("d", filepath.Join(dir, "link"))
	syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600)
	if ents, err := ReadDir(filepath.Join(dir, "d"), "x", 3); err != nil || len(ents) != 3 {
		t.Errorf("ReadDir = %v, %v", ents, err)
	}
	if _, err := ReadDir(filepath.Join(dir, "d"), "a test dir", 2); err == nil || err.Error() != dir+"/d: larger than 2 entries, the cap of a test dir" {
		t.Errorf("ReadDir over its cap: %v", err)
	}
	for _, n := range []string{"link", "fifo"} {
		if _, err := ReadDir(filepath.Join(dir, n), "x", 0); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "not a directory") {
			t.Errorf("ReadDir(%s) = %v", n, err)
		}
	}
	if _, err := ReadDir(filepath.Join(dir, "none"), "x", 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadDir(missing) = %v", err)
	}
}

func TestDirBeneath(t *testing.T) {
	top := t.TempDir()
	co := filepath.Join(top, "checkout")
	os.MkdirAll(filepath.Join(co, "hosts", "web1"), 0o755)
	os.MkdirAll(filepath.Join(top, "etc"), 0o755)
	os.Symlink("web1", filepath.Join(co, "hosts", "alias"))
	os.Symlink("../../etc", filepath.Join(co, "hosts", "out"))
	os.Symlink(filepath.Join(co, "hosts", "web1"), filepath.Join(co, "hosts", "abs"))
	os.WriteFile(filepath.Join(co, "hosts", "file"), nil, 0o644)
	for _, tt := range []struct {
		name, want string
		err        error
	}{
		{"hosts/web1", filepath.Join(co, "hosts", "web1"), nil},
		{"hosts/alias", filepath.Join(co, "hosts", "web1"), nil},
		{"hosts/web1/..", filepath.Join(co, "hosts"), nil},
		{".", co, nil},
		{"hosts/out", "", ErrEscapes},
		{"hosts/abs", "", ErrEscapes},
		{"..", "", ErrEscapes},
		{"hosts/file", "", ErrNotRegular},
		{"hosts/none", "", fs.ErrNotExist},
	} {
		got, err := DirBeneath(co, tt.name)
		if (tt.err == nil && (err != nil || got != tt.want)) || (tt.err != nil && !errors.Is(err, tt.err)) {
			t.Errorf("DirBeneath(%s) = %q, %v; want %q, %v", tt.name, got, err, tt.want, tt.err)
		}
	}
}
