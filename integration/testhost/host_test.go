package testhost

import (
	"fmt"
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

// TestBuildMessagesNameNoInstance: the image is the harness's, not an
// instance's: "testhost: base image … is up to date", where it said
// "testhost[default]" (testhost:up NAME=x builds first, without the name).
func TestBuildMessagesNameNoInstance(t *testing.T) {
	script, err := Script()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	env := append(os.Environ(), "TESTHOST_CACHE="+cache, "TESTHOST_NAME=tutorial")
	paths := exec.Command("bash", script, "paths")
	paths.Env = env
	out, err := paths.Output()
	if err != nil {
		t.Fatal(err)
	}
	base := regexp.MustCompile(`(?m)^base=(.*)$`).FindStringSubmatch(string(out))
	if base == nil {
		t.Fatalf("paths: %s", out)
	}
	if err := os.MkdirAll(base[1], 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base[1], "ready"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("bash", script, "build")
	build.Env = env
	msg, err := build.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(msg), "testhost: base image ") {
		t.Errorf("build: %v\n%s", err, msg)
	}
}

// TestDebootstrapProgress: a build shows where debootstrap is (it took
// minutes of silence): a line as each phase starts and every 50 packages.
func TestDebootstrapProgress(t *testing.T) {
	script, err := Script()
	if err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	in.WriteString("I: Retrieving InRelease \nI: Checking Release signature\n")
	for i := range 120 {
		fmt.Fprintf(&in, "I: Retrieving pkg%d 1.0\nI: Validating pkg%d 1.0\n", i, i)
	}
	for _, phase := range []string{"Extracting", "Unpacking", "Configuring"} {
		for i := range 60 {
			fmt.Fprintf(&in, "I: %s pkg%d...\n", phase, i)
		}
	}
	in.WriteString("I: Base system installed successfully.\n")
	// The function alone, with the log it writes through.
	prog := `set -euo pipefail; LOGNAME_=testhost; log() { echo "$LOGNAME_: $*" >&2; }
eval "$(sed -n '/^debootstrap_progress() {/,/^}/p' "$1")"; debootstrap_progress`
	cmd := exec.Command("bash", "-c", prog, "bash", script)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		got = append(got, regexp.MustCompile(`, \d+s so far$`).ReplaceAllString(l, ""))
	}
	want := []string{
		"testhost: debootstrap: retrieving 1 package(s)", "testhost: debootstrap: retrieving 50 package(s)", "testhost: debootstrap: retrieving 100 package(s)",
		"testhost: debootstrap: extracting 1 of about 121 package(s)", "testhost: debootstrap: extracting 50 of about 121 package(s)",
		"testhost: debootstrap: unpacking 1 of about 121 package(s)", "testhost: debootstrap: unpacking 50 of about 121 package(s)",
		"testhost: debootstrap: configuring 1 of about 121 package(s)", "testhost: debootstrap: configuring 50 of about 121 package(s)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("progress:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
