package testhost

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestInstanceName(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`) // what testhost.sh accepts
	seen := map[string]bool{}
	for _, n := range []string{"TestHarness", "TestConcurrentHosts/host-0", "Test_Ünïcode weird//name", strings.Repeat("x", 80), "/"} {
		got := instanceName(n)
		if !valid.MatchString(got) {
			t.Errorf("instanceName(%q) = %q: not a valid TESTHOST_NAME", n, got)
		}
		if seen[got] {
			t.Errorf("instanceName(%q) = %q: repeated", n, got)
		}
		seen[got] = true
	}
}

func TestQuote(t *testing.T) {
	for _, s := range []string{"", "plain", "a b", "it's", `"$HOME" \n`, "x;rm -rf /", "--after-cursor=s=1;i=2"} {
		out, err := exec.Command("sh", "-c", "printf %s "+Quote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("Quote(%q) = %s: sh printed %q (%v)", s, Quote(s), out, err)
		}
	}
}

// TestTarRoundTrip checks the tar writer and reader used by CopyIn and CopyOut, without a guest.
func TestTarRoundTrip(t *testing.T) {
	src := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "d/e"), 0o755))
	must(os.WriteFile(filepath.Join(src, "d/e/f"), []byte("data"), 0o600))
	must(os.WriteFile(filepath.Join(src, "x.sh"), []byte("#!/bin/sh\n"), 0o755))
	must(os.Symlink("x.sh", filepath.Join(src, "l")))

	fi, err := os.Stat(src)
	must(err)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeTar(pw, src, fi, "ignored")) }()
	dst := filepath.Join(t.TempDir(), "out")
	must(readTar(pr, dst, true))

	for name, want := range map[string]string{"d/e/f": "data", "x.sh": "#!/bin/sh\n"} {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q %v", name, got, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dst, "d/e/f")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("d/e/f mode: %v %v", fi, err)
	}
	if l, err := os.Readlink(filepath.Join(dst, "l")); err != nil || l != "x.sh" {
		t.Errorf("symlink: %q %v", l, err)
	}

	// a single file is one entry, written to the destination path itself
	ffi, err := os.Stat(filepath.Join(src, "x.sh"))
	must(err)
	// A pipe of its own: the first writer's goroutine may still be about to
	// close its pipe, and reassigning pw would have it close this one.
	pr2, pw2 := io.Pipe()
	go func() { pw2.CloseWithError(writeTar(pw2, filepath.Join(src, "x.sh"), ffi, "run.sh")) }()
	one := filepath.Join(t.TempDir(), "sub", "copy.sh")
	must(readTar(pr2, one, false))
	if got, err := os.ReadFile(one); err != nil || string(got) != "#!/bin/sh\n" {
		t.Errorf("single file: %q %v", got, err)
	}
}
