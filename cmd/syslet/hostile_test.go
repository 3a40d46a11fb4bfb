package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// The hostile-input suite, round two (issue 22): what a foothold on a host
// or a careless colleague can put where syslet reads — its own state, the
// trees it manages, spec sources, the journal, hand-written quadlets —
// and input shaped to make a pass quadratic, a terminal lie, a secret
// leak or a resume delete what syslet never managed. Each class has a
// file of its own (hostile_*_test.go); every case runs the command as a
// person would, and must end with its exact expected words, quickly (a
// FIFO must not hang it), leaving everything outside the root as it was
// and — unless the case writes on purpose — the root too.

// hostEnv is one case's world: a spec directory, a root rendered from
// hostileStack (a host syslet deployed), and a directory outside both.
type hostEnv struct {
	t                  *testing.T
	dir, root, outside string
	stack              string // hostileStack's file
}

// hostileStack is a container with a config file, a private config file
// and a config dir, and a build with a context file: every tree syslet
// reads back.
const hostileStack = `{"apiVersion":"v1","type":"container","name":"web","configFiles":[{"mountPath":"/etc/app.conf","content":"x\n"},{"mountPath":"/etc/creds.conf","content":"db_password=SPEC-SECRET\n","mode":"0600"}],"configDirs":[{"mountPath":"/etc/app.d","files":[{"name":"a.conf","content":"a\n"}]}],"unit":{"Container":{"Image":"busybox"},"Service":{"ExecReload":"/bin/true"}}}
{"apiVersion":"v1","type":"build","name":"app","containerfile":"FROM busybox\n","contextFiles":[{"filename":"sub/run.sh","content":"echo\n"}],"unit":{"Build":{"ImageTag":"localhost/app:v1"}}}
`

// hostileCase is one attack and what syslet must answer.
type hostileCase struct {
	name string
	// setup plants the attack and returns the command's arguments.
	setup func(e *hostEnv) []string
	code  int
	// want are exact pieces of the output (stdout and stderr together);
	// {root}, {dir} and {outside} stand for the case's directories.
	want []string
	// not must not appear anywhere in the output.
	not []string
	// writes says the command writes under the root on purpose.
	writes bool
	// env is set for the run (t.Setenv: the case runs alone).
	env map[string]string
	// figures marks a case too big for every test run (a hundred
	// thousand specs): it runs only when the figures are taken
	// (figuresBin), as its wall time and peak RSS are what it is for.
	figures bool
}

// figuresBin is the built syslet that go tool task figures:hostile runs
// every case with, instead of in this process, so that each case's wall
// time and peak RSS are those of the real program (its collector policy
// included); figuresOut is the file each case's figures are added to.
var figuresBin, figuresOut = os.Getenv("SYSLET_FIGURES_BIN"), os.Getenv("SYSLET_FIGURES_OUT")

func runHostile(t *testing.T, cases []hostileCase) {
	t.Helper()
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	for _, tc := range cases {
		if tc.figures && figuresBin == "" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			e := newHostEnv(t)
			args := tc.setup(e)
			guard := 30 * time.Second
			if figuresBin != "" {
				guard = 3 * time.Minute // a hundred thousand files on a slow disk
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			beforeRoot, beforeOut := snapshotTree(t, e.root), snapshotTree(t, e.outside)
			done := make(chan struct{})
			var code int
			var out, errOut string
			var rss int64         // KB, of the built binary (figuresBin)
			var ran time.Duration // its wall time, as /usr/bin/time tells it
			var runErr error
			t0 := time.Now()
			go func() {
				defer close(done)
				if figuresBin != "" {
					code, out, errOut, ran, rss, runErr = runBinary(figuresBin, tc.env, args...)
					return
				}
				code, out, errOut = runCLI(t, args...)
			}()
			select {
			case <-done:
			case <-time.After(guard):
				t.Fatalf("syslet %v hangs", args)
			}
			took := time.Since(t0)
			if runErr != nil {
				t.Fatal(runErr)
			}
			if figuresBin != "" {
				recordFigures(t, ran, rss, code)
			}
			all := out + errOut
			r := strings.NewReplacer("{root}", e.root, "{dir}", e.dir, "{outside}", e.outside)
			if code != tc.code {
				t.Errorf("exit %d, want %d:\n%s", code, tc.code, all)
			}
			for _, w := range tc.want {
				if w = r.Replace(w); !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%s", w, all)
				}
			}
			for _, n := range tc.not {
				if n = r.Replace(n); strings.Contains(all, n) {
					t.Errorf("output holds %q:\n%s", n, all)
				}
			}
			if diff := compareTrees(beforeOut, snapshotTree(t, e.outside)); diff != "" {
				t.Errorf("something changed outside the root: %s", diff)
			}
			if diff := compareTrees(beforeRoot, snapshotTree(t, e.root)); diff != "" && !tc.writes {
				t.Errorf("the root changed: %s", diff)
			}
			t.Logf("took %s", took.Round(time.Millisecond))
		})
	}
}

func newHostEnv(t *testing.T) *hostEnv {
	t.Helper()
	e := &hostEnv{t: t, dir: t.TempDir(), root: t.TempDir(), outside: t.TempDir()}
	e.stack = e.write("stack.json", hostileStack)
	if code, out, errOut := runCLI(t, "render", e.stack, "--out", e.root); code != exitOK {
		t.Fatalf("render the base host: %d\n%s%s", code, out, errOut)
	}
	must(t, os.WriteFile(filepath.Join(e.outside, "sentinel"), []byte("untouched"), 0o644))
	must(t, os.WriteFile(filepath.Join(e.outside, "secret"), []byte("OUTSIDE-SECRET=hunter2\n"), 0o600))
	for _, d := range []string{"var/lib/syslet", "run/syslet"} {
		must(t, os.MkdirAll(filepath.Join(e.root, d), 0o700))
	}
	return e
}

// write writes a file in the spec directory and returns its path.
func (e *hostEnv) write(name, content string) string {
	p := filepath.Join(e.dir, name)
	must(e.t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(e.t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// at is a host path under the root.
func (e *hostEnv) at(hostPath string) string { return filepath.Join(e.root, hostPath) }

// put writes a file under the root (a host path), making its directory.
func (e *hostEnv) put(hostPath, content string, mode os.FileMode) {
	p := e.at(hostPath)
	must(e.t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(e.t, os.WriteFile(p, []byte(content), mode))
	must(e.t, os.Chmod(p, mode))
}

// read reads a file under the root.
func (e *hostEnv) read(hostPath string) string {
	b, err := os.ReadFile(e.at(hostPath))
	must(e.t, err)
	return string(b)
}

// sparse makes a sparse file of size bytes under the root.
func (e *hostEnv) sparse(hostPath string, size int64) {
	p := e.at(hostPath)
	must(e.t, os.MkdirAll(filepath.Dir(p), 0o755))
	f, err := os.Create(p)
	must(e.t, err)
	must(e.t, f.Truncate(size))
	f.Close()
}

// socket binds a unix socket at a host path under the root, through its
// directory's descriptor (/proc/self/fd/N/NAME): the whole path may be
// longer than a socket address holds (108 bytes) when TMPDIR is. The
// socket file is not unlinked on close, as that name would then be
// resolved through a descriptor closed and perhaps reused by then.
func (e *hostEnv) socket(hostPath string) {
	p := e.at(hostPath)
	d, err := os.Open(filepath.Dir(p))
	must(e.t, err)
	defer d.Close()
	l, err := net.Listen("unix", fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), filepath.Base(p)))
	must(e.t, err)
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	e.t.Cleanup(func() { l.Close() })
}

// journal writes the run journal's lines.
func (e *hostEnv) journal(lines ...string) {
	e.put("/var/lib/syslet/runs.jsonl", strings.Join(lines, "\n")+"\n", 0o600)
}

// diff is the plan of the stack against the root.
func (e *hostEnv) diff(extra ...string) []string {
	return append([]string{"--diff", "--root", e.root}, append(extra, e.stack)...)
}

// snapshotTree records every entry under dir: type, mode, size, and the
// digest of small regular files (a sparse giant is known by its size).
func snapshotTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		s := fmt.Sprintf("%v %d", fi.Mode(), fi.Size())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			s += " -> " + l
		case fi.Mode().IsRegular() && fi.Size() <= 1<<20:
			f, err := os.Open(p)
			if err == nil {
				h := sha256.New()
				io.Copy(h, f)
				f.Close()
				s += " " + hex.EncodeToString(h.Sum(nil))
			}
		}
		out[p] = s
		return nil
	})
	return out
}

func compareTrees(before, after map[string]string) string {
	var diffs []string
	for p, b := range before {
		if a, ok := after[p]; !ok {
			diffs = append(diffs, p+" removed")
		} else if a != b {
			diffs = append(diffs, fmt.Sprintf("%s: %s → %s", p, b, a))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diffs = append(diffs, p+" added")
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

// TestHostileSuiteSize keeps the suite at its promised size: at least a
// hundred cases of its own across the classes.
func TestHostileSuiteSize(t *testing.T) {
	n := 0
	for _, cs := range [][]hostileCase{hostileReads(), hostileScale(), hostileEscapes(), hostileRedaction(), hostileResumes(), hostileInputs()} {
		n += len(cs)
	}
	if n < 100 {
		t.Errorf("the hostile suite has %d cases, want at least 100", n)
	}
	t.Logf("%d hostile cases", n)
}
