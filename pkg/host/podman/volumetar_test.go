package podman

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTarDirRoundTrip(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(src, "sub"), 0o750)
	os.WriteFile(filepath.Join(src, "sub", "b.txt"), []byte("hello\n"), 0o640)
	os.WriteFile(filepath.Join(src, "a.bin"), bytes.Repeat([]byte{1, 2, 3}, 100000), 0o600)
	os.Symlink("b.txt", filepath.Join(src, "sub", "link"))
	var buf bytes.Buffer
	if err := tarDir(src, &buf); err != nil {
		t.Fatal(err)
	}
	if err := untarDir(bytes.NewReader(buf.Bytes()), dst); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"sub/b.txt", "a.bin"} {
		a, _ := os.ReadFile(filepath.Join(src, p))
		b, err := os.ReadFile(filepath.Join(dst, p))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs: %v", p, err)
		}
		fa, _ := os.Stat(filepath.Join(src, p))
		fb, _ := os.Stat(filepath.Join(dst, p))
		if fa.Mode() != fb.Mode() || !fa.ModTime().Equal(fb.ModTime()) {
			t.Errorf("%s: mode %v time %v, want %v %v", p, fb.Mode(), fb.ModTime(), fa.Mode(), fa.ModTime())
		}
	}
	if l, err := os.Readlink(filepath.Join(dst, "sub", "link")); err != nil || l != "b.txt" {
		t.Errorf("link: %q %v", l, err)
	}
	if fi, _ := os.Stat(filepath.Join(dst, "sub")); fi.Mode().Perm() != 0o750 {
		t.Errorf("sub: %v", fi.Mode())
	}
}

func TestUntarDirStaysInside(t *testing.T) {
	outside := t.TempDir()
	for name, entries := range map[string][]tar.Header{
		"dot-dot":         {{Name: "../x", Typeflag: tar.TypeReg, Mode: 0o600}},
		"through a link":  {{Name: "l", Typeflag: tar.TypeSymlink, Linkname: outside}, {Name: "l/x", Typeflag: tar.TypeReg, Mode: 0o600}},
		"hardlink escape": {{Name: "h", Typeflag: tar.TypeLink, Linkname: "../../etc/passwd"}},
	} {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, h := range entries {
			tw.WriteHeader(&h)
		}
		tw.Close()
		err := untarDir(&buf, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), "refused") && !strings.Contains(err.Error(), "outside") && !strings.Contains(err.Error(), "leaves") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if des, _ := os.ReadDir(outside); len(des) != 0 {
		t.Errorf("written outside: %v", des)
	}
}
