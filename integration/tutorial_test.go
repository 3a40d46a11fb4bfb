//go:build integration

package integration

// The tutorial (docs/tutorial/first-deploy.md) run as its reader runs it:
// every command of its sh blocks, read from the file, in order, exactly as
// written, the machine's in a shell in a copy of this checkout and the
// host's in a root shell on the test host the tutorial boots; each must
// exit 0. Then what the tutorial says came of it is checked on the host.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/syslet/syslet/integration/testhost"
)

const tutorialFile = "docs/tutorial/first-deploy.md"

// tutorialBlock is one sh block of the tutorial: where it runs and its
// commands, one a line.
type tutorialBlock struct {
	where    string // "machine" or "host"
	line     int    // of the fence, for messages
	commands []string
}

// tutorialMarker marks the next block: <!-- tutorial-test: machine -->.
var tutorialMarker = regexp.MustCompile(`^<!-- tutorial-test: (machine|host) -->$`)

// tutorialBlocks reads the tutorial's sh blocks. An sh block without a
// marker is an error: a command added to the tutorial is run by this test
// or the test says why not.
func tutorialBlocks(text string) ([]tutorialBlock, error) {
	var blocks []tutorialBlock
	lines := strings.Split(text, "\n")
	marked := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := tutorialMarker.FindStringSubmatch(l); m != nil {
			marked = m[1]
			continue
		}
		if !strings.HasPrefix(l, "```") {
			if strings.TrimSpace(l) != "" {
				marked = ""
			}
			continue
		}
		lang := strings.TrimSpace(strings.TrimPrefix(l, "```"))
		b := tutorialBlock{where: marked, line: i + 1}
		marked = ""
		var cmd string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			c := strings.TrimSpace(lines[i])
			if c == "" || strings.HasPrefix(c, "#") {
				continue
			}
			if cont, ok := strings.CutSuffix(c, `\`); ok {
				cmd += cont + " "
				continue
			}
			b.commands = append(b.commands, cmd+c)
			cmd = ""
		}
		switch {
		case lang != "sh" && b.where == "":
		case lang != "sh":
			return nil, fmt.Errorf("line %d: a %q block is marked to run; only sh blocks are", b.line, lang)
		case b.where == "":
			return nil, fmt.Errorf("line %d: an sh block without a <!-- tutorial-test: machine|host --> line before it", b.line)
		default:
			blocks = append(blocks, b)
		}
	}
	return blocks, nil
}

func TestTutorialBlocks(t *testing.T) {
	root, err := testhost.ModuleRoot()
	must(t, err)
	text, err := os.ReadFile(filepath.Join(root, tutorialFile))
	must(t, err)
	blocks, err := tutorialBlocks(string(text))
	must(t, err)
	if len(blocks) < 5 || blocks[0].where != "machine" || !strings.HasPrefix(blocks[0].commands[0], "go tool task release") {
		t.Fatalf("the tutorial's blocks: %+v", blocks)
	}
	if _, err := tutorialBlocks("```sh\nsyslet version\n```\n"); err == nil {
		t.Error("an unmarked sh block is not refused")
	}
}

// TestTutorial runs the tutorial; see the top of this file.
func TestTutorial(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	root, err := testhost.ModuleRoot()
	must(t, err)
	text, err := os.ReadFile(filepath.Join(root, tutorialFile))
	must(t, err)
	blocks, err := tutorialBlocks(string(text))
	must(t, err)

	repo := checkoutCopy(t, root)
	env := append(withoutEnv(os.Environ(), "TESTHOST_NAME", "TESTHOST_KEEP"),
		// The tutorial's host lives in a cache of its own, beside the base
		// image of this checkout, so its name cannot meet a host of the
		// same name a person started; it is this test's, and the sweep
		// stops it if the test dies.
		"TESTHOST_CACHE="+privateCache(t),
		"TESTHOST_OWNER="+strconv.Itoa(os.Getpid()),
		"TESTHOST_STOP_TIMEOUT=0")
	machine := startShell(t, repo, env, false, "bash", "--noprofile", "--norc", "/dev/fd/3")
	var host *shell
	for _, b := range blocks {
		sh := machine
		if b.where == "host" {
			if host == nil {
				host = hostShell(t, machine, repo, env)
			}
			sh = host
		}
		for _, c := range b.commands {
			r := sh.run(t, c, 20*time.Minute)
			t.Logf("%s (line %d) $ %s\nexit %d in %s\n%s", b.where, b.line, c, r.code, r.took.Round(time.Millisecond), tail(r.stdout+r.stderr, 6))
			if r.code != 0 {
				t.Fatalf("the tutorial's command failed on the %s (%s line %d):\n$ %s\nexit %d\n--- stdout\n%s\n--- stderr\n%s",
					b.where, tutorialFile, b.line, c, r.code, r.stdout, r.stderr)
			}
			// What the harness prints for the reader is meant for people.
			for _, l := range strings.Split(r.stdout+r.stderr, "\n") {
				if strings.Contains(c, "testhost:") && (strings.Contains(l, "testhost[default]") || regexp.MustCompile(`^\d+$`).MatchString(strings.TrimSpace(l))) {
					t.Errorf("%s printed %q: a bare number, or the name of no host", c, l)
				}
			}
		}
	}
	// The tutorial's words, checked on the host: back at the first
	// generation after the rollback, and serving.
	if r := host.run(t, "systemctl show -p Description --value app.service; curl -fsS http://127.0.0.1:8080/", time.Minute); r.code != 0 ||
		strings.Contains(r.stdout, "second edition") || !strings.Contains(r.stdout, "shop") {
		t.Errorf("after the rollback:\n%s%s", r.stdout, r.stderr)
	}
	t.Logf("the tutorial ran in %s", time.Since(t0).Round(time.Second))
}

// checkoutCopy returns a copy of the checkout at root as its work tree
// stands (committed or not), in a directory of its own: the tutorial's
// release writes dist/ there, not into the checkout.
func checkoutCopy(t *testing.T, root string) string {
	t.Helper()
	gitOut := func(dir string, args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	common := gitOut(root, "rev-parse", "--path-format=absolute", "--git-common-dir")
	dst := filepath.Join(t.TempDir(), "syslet")
	if out, err := exec.Command("git", "clone", "-q", "--shared", "--no-checkout", common, dst).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	gitOut(dst, "checkout", "-q", "--detach", gitOut(root, "rev-parse", "HEAD"))
	for _, f := range strings.Split(gitOut(root, "ls-files", "-z", "--modified", "--others", "--exclude-standard"), "\x00") {
		if f == "" {
			continue
		}
		src, to := filepath.Join(root, f), filepath.Join(dst, f)
		fi, err := os.Lstat(src)
		if err != nil { // deleted: the next loop removes it
			continue
		}
		must(t, os.MkdirAll(filepath.Dir(to), 0o755))
		_ = os.Remove(to)
		if fi.Mode()&os.ModeSymlink != 0 {
			l, err := os.Readlink(src)
			must(t, err)
			must(t, os.Symlink(l, to))
			continue
		}
		data, err := os.ReadFile(src)
		must(t, err)
		must(t, os.WriteFile(to, data, fi.Mode().Perm()))
	}
	for _, f := range strings.Split(gitOut(root, "ls-files", "-z", "--deleted"), "\x00") {
		if f != "" {
			_ = os.Remove(filepath.Join(dst, f))
		}
	}
	return dst
}

// privateCache returns a test host cache holding only this checkout's
// base image (linked, not copied).
func privateCache(t *testing.T) string {
	t.Helper()
	script, err := testhost.Script()
	must(t, err)
	cmd := exec.Command("bash", script, "paths")
	cmd.Env = withoutEnv(os.Environ(), "TESTHOST_CACHE")
	out, err := cmd.Output()
	must(t, err)
	base := regexp.MustCompile(`(?m)^base=(.+)$`).FindStringSubmatch(string(out))
	if base == nil {
		t.Fatalf("testhost.sh paths: %s", out)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	must(t, os.MkdirAll(cache, 0o755))
	must(t, os.Symlink(base[1], filepath.Join(cache, filepath.Base(base[1]))))
	return cache
}

func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		if !slicesContains(names, name) {
			out = append(out, e)
		}
	}
	return out
}

// shell is a bash the test types commands into, one at a time, as a
// reader types them into a terminal: variables, the working directory and
// exports carry from one command to the next. The commands come on a pipe
// of their own (fd 3), so a command that reads its stdin reads nothing
// (/dev/null) instead of the commands after it.
type shell struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	stdout chan segment
	stderr chan segment
}

// segment is what a shell printed on one stream for one command.
type segment struct {
	text string
	code int // stdout's: the command's exit status
	err  error
}

type shellResult struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

const sentinel = "@@tutorial-test@@"

// startShell starts argv in dir with env, stopped at the end of the
// test: a bash reading its commands from fd 3 or, with viaStdin, a
// command that passes its stdin on to one (ssh).
func startShell(t *testing.T, dir string, env []string, viaStdin bool, argv ...string) *shell {
	t.Helper()
	r, w, err := os.Pipe()
	must(t, err)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	if viaStdin {
		cmd.Stdin = r
	} else {
		cmd.ExtraFiles = []*os.File{r}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	outR, err := cmd.StdoutPipe()
	must(t, err)
	errR, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	r.Close()
	sh := &shell{cmd: cmd, in: w, stdout: make(chan segment, 1), stderr: make(chan segment, 1)}
	go readSegments(outR, sh.stdout, true)
	go readSegments(errR, sh.stderr, false)
	t.Cleanup(func() {
		w.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	return sh
}

// hostShell opens a root shell on the tutorial's host, through the
// harness's ssh as the reader reaches it, named as the machine shell
// named it (TESTHOST_NAME, exported by the tutorial's first block).
func hostShell(t *testing.T, machine *shell, repo string, env []string) *shell {
	t.Helper()
	r := machine.run(t, `printf %s "$TESTHOST_NAME"`, time.Minute)
	name := strings.TrimSpace(r.stdout)
	if r.code != 0 || name == "" {
		t.Fatalf("the tutorial's machine shell names no test host (TESTHOST_NAME): %+v", r)
	}
	hostEnv := append(withoutEnv(env, "TESTHOST_NAME"), "TESTHOST_NAME="+name)
	t.Cleanup(func() {
		cmd := exec.Command("bash", filepath.Join(repo, "integration", "testhost", "testhost.sh"), "down")
		cmd.Env = hostEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("testhost.sh down: %v\n%s", err, out)
		}
	})
	// The guest's bash takes its commands from ssh's stdin, moved to fd 3.
	return startShell(t, repo, hostEnv, true, "bash", filepath.Join(repo, "integration", "testhost", "testhost.sh"), "ssh",
		"exec 3<&0 </dev/null; exec bash --noprofile --norc /dev/fd/3")
}

// run types one command and waits for it, at most timeout.
func (sh *shell) run(t *testing.T, command string, timeout time.Duration) shellResult {
	t.Helper()
	t0 := time.Now()
	_, err := fmt.Fprintf(sh.in, "%s\n__rc=$?; printf '\\n%s %%d\\n' \"$__rc\"; printf '\\n%s\\n' >&2\n", command, sentinel, sentinel)
	if err != nil {
		t.Fatalf("typing %q: %v", command, err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var res shellResult
	for got := 0; got < 2; got++ {
		select {
		case s := <-sh.stdout:
			if s.err != nil {
				t.Fatalf("$ %s: the shell ended: %v\n%s", command, s.err, s.text)
			}
			res.stdout, res.code = s.text, s.code
		case s := <-sh.stderr:
			if s.err != nil {
				t.Fatalf("$ %s: the shell ended: %v\n%s", command, s.err, s.text)
			}
			res.stderr = s.text
		case <-timer.C:
			_ = syscall.Kill(-sh.cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("$ %s: still running after %s", command, timeout)
		}
	}
	res.took = time.Since(t0)
	return res
}

// readSegments splits a stream at the sentinel lines into one segment
// per command.
func readSegments(r io.Reader, ch chan<- segment, withCode bool) {
	br := bufio.NewReader(r)
	var b strings.Builder
	for {
		line, err := br.ReadString('\n')
		if rest, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), sentinel); ok && err == nil {
			s := segment{text: strings.TrimSuffix(b.String(), "\n")}
			if withCode {
				s.code, _ = strconv.Atoi(strings.TrimSpace(rest))
			}
			ch <- s
			b.Reset()
			continue
		}
		b.WriteString(line)
		if err != nil {
			ch <- segment{text: b.String(), err: err}
			return
		}
	}
}
