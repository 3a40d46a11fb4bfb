package testhost

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// Host is one running test host. Its methods are safe for concurrent use.
type Host struct {
	name   string
	port   int
	script string
	recipe string // testhost.sh's TESTHOST_RECIPE: the platform it runs
	test   string // the test that started it, as its Usage counts it

	mu     sync.Mutex
	client *ssh.Client
	signer ssh.Signer

	stopOnce sync.Once
	stopErr  error
}

// Result is the outcome of a command run in the guest.
type Result struct {
	Cmd    string
	Stdout string
	Stderr string
	// Code is the command's exit status; -1 if it did not run to completion (see Err).
	Code int
	// Err is set when the command could not be run or its status not read (SSH failure),
	// not when it exited non-zero.
	Err error
}

// OK reports whether the command ran and exited 0.
func (r Result) OK() bool { return r.Err == nil && r.Code == 0 }

// String describes the result for test failure messages.
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "$ %s\n", r.Cmd)
	if r.Err != nil {
		fmt.Fprintf(&b, "error: %v\n", r.Err)
	} else {
		fmt.Fprintf(&b, "exit %d\n", r.Code)
	}
	if r.Stdout != "" {
		fmt.Fprintf(&b, "--- stdout\n%s", ensureNL(r.Stdout))
	}
	if r.Stderr != "" {
		fmt.Fprintf(&b, "--- stderr\n%s", ensureNL(r.Stderr))
	}
	return b.String()
}

func ensureNL(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

var (
	nameSeq  atomic.Int64
	badChars = regexp.MustCompile(`[^a-z0-9]+`)
)

// instanceName makes a name unique across concurrent test processes and tests:
// <test name, shortened>-<pid>-<n>.
func instanceName(testName string) string {
	s := strings.Trim(badChars.ReplaceAllString(strings.ToLower(testName), "-"), "-")
	if len(s) > 22 {
		s = strings.TrimRight(s[:22], "-")
	}
	if s == "" {
		s = "t"
	}
	return fmt.Sprintf("%s-%d-%d", s, os.Getpid()%1000000, nameSeq.Add(1))
}

// Options tune Start.
type Options struct {
	// Forward maps host ports (on 127.0.0.1) to guest ports, e.g. {18080: 8080}.
	Forward map[int]int
	// Copy uses a full copy of the base image instead of an overlay (slower; for tests that need
	// the root file system not to be overlayfs).
	Copy bool
}

// Start boots a fresh host for t and stops it in t.Cleanup, even if the test fails. On failure to
// boot it fails t. With TESTHOST_KEEP_FAILED=1 a host whose test failed is left running for
// inspection (testhost.sh list; the next cleanup sweep removes it once this process has exited).
func Start(t testing.TB, opts ...Options) *Host {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	t0 := time.Now()
	h, err := start(instanceName(t.Name()), RecipeOf(t), o)
	if h != nil {
		h.test = usageName(t.Name())
		account(h.test, func(u *Usage) { u.Boots++; u.Boot += time.Since(t0) })
		stopAtCleanup(t, h)
	}
	if err != nil {
		t.Fatalf("testhost: start: %v", err)
	}
	t.Logf("testhost: %s up on 127.0.0.1:%d in %s", h.name, h.port, time.Since(t0).Round(time.Millisecond))
	return h
}

// StartN boots n fresh hosts for t at once, as Start boots one, and stops
// every one of them in t.Cleanup. The boots overlap (each mostly waits on
// its guest's systemd), so five hosts cost far less than five boots one
// after the other.
func StartN(t testing.TB, n int, opts ...Options) []*Host {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	t0 := time.Now()
	recipe := RecipeOf(t)
	hosts, errs := make([]*Host, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hosts[i], errs[i] = start(instanceName(t.Name()), recipe, o)
		}()
	}
	wg.Wait()
	// The boots overlap: the harness's share is the wall time they took, once.
	account(usageName(t.Name()), func(u *Usage) { u.Boots += n; u.Boot += time.Since(t0) })
	for _, h := range hosts {
		if h != nil {
			h.test = usageName(t.Name())
			stopAtCleanup(t, h)
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("testhost: start: %v", err)
	}
	for _, h := range hosts {
		t.Logf("testhost: %s up on 127.0.0.1:%d", h.name, h.port)
	}
	return hosts
}

// stopAtCleanup stops h when t ends, after logging its diagnostics if t
// failed (or leaves it running, with TESTHOST_KEEP_FAILED=1).
func stopAtCleanup(t testing.TB, h *Host) {
	t.Cleanup(func() {
		if t.Failed() {
			h.dumpDiagnostics(t)
			if os.Getenv("TESTHOST_KEEP_FAILED") == "1" {
				t.Logf("testhost: TESTHOST_KEEP_FAILED=1: leaving %s running: %s", h.name, h.SSHCommand())
				return
			}
		}
		if err := h.Stop(); err != nil {
			t.Errorf("testhost: stop %s: %v", h.name, err)
		}
	})
}

func start(name, recipe string, o Options) (*Host, error) {
	script, err := Script()
	if err != nil {
		return nil, err
	}
	if err := buildRecipe(recipe); err != nil {
		return nil, err
	}
	env := []string{"TESTHOST_NAME=" + name, "TESTHOST_OWNER=" + strconv.Itoa(os.Getpid()), "TESTHOST_RECIPE=" + recipe}
	if o.Copy {
		env = append(env, "TESTHOST_ROOTFS=copy")
	}
	if len(o.Forward) > 0 {
		var f []string
		for hp, gp := range o.Forward {
			f = append(f, fmt.Sprintf("%d:%d", hp, gp))
		}
		env = append(env, "TESTHOST_FWD="+strings.Join(f, ","))
	}
	h := &Host{name: name, script: script, recipe: recipe}
	out, err := runScript(nil, env, "up")
	if err != nil {
		return h, err // h is returned so that the caller still stops what may have started
	}
	lines := strings.Fields(out)
	if len(lines) == 0 {
		return h, fmt.Errorf("testhost.sh up printed no port")
	}
	h.port, err = strconv.Atoi(lines[len(lines)-1])
	if err != nil {
		return h, fmt.Errorf("testhost.sh up: bad port %q", out)
	}
	paths, err := runScript(nil, []string{"TESTHOST_RECIPE=" + recipe}, "paths")
	if err != nil {
		return h, err
	}
	var keyPath string
	for _, l := range strings.Split(paths, "\n") {
		if v, ok := strings.CutPrefix(l, "sshkey="); ok {
			keyPath = v
		}
	}
	key, err := os.ReadFile(keyPath)
	if err != nil {
		return h, fmt.Errorf("testhost: ssh key: %w", err)
	}
	h.signer, err = ssh.ParsePrivateKey(key)
	if err != nil {
		return h, fmt.Errorf("testhost: ssh key %s: %w", keyPath, err)
	}
	if _, err := h.conn(); err != nil {
		return h, err
	}
	return h, nil
}

// Name is the instance name (TESTHOST_NAME for testhost.sh).
func (h *Host) Name() string { return h.name }

// Port is the SSH port on 127.0.0.1.
func (h *Host) Port() int { return h.port }

// SSHCommand returns an ssh command line that reaches the host, for logs and manual debugging.
func (h *Host) SSHCommand() string {
	return fmt.Sprintf("TESTHOST_RECIPE=%s TESTHOST_NAME=%s %s ssh", h.recipe, h.name, h.script)
}

// Recipe is the platform the host runs (testhost.sh's TESTHOST_RECIPE).
func (h *Host) Recipe() string { return h.recipe }

func (h *Host) conn() (*ssh.Client, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.client != nil {
		return h.client, nil
	}
	cfg := &ssh.ClientConfig{
		User:            "root",
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(h.signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), // a throwaway guest on loopback
		Timeout:         10 * time.Second,
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(h.port))
	var err error
	for i := 0; i < 3; i++ {
		var c *ssh.Client
		if c, err = ssh.Dial("tcp", addr, cfg); err == nil {
			h.client = c
			return c, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil, fmt.Errorf("testhost: ssh %s: %w", addr, err)
}

// session opens an SSH session, redialing once if the connection broke (e.g. sshd restarted).
func (h *Host) session() (*ssh.Session, error) {
	c, err := h.conn()
	if err != nil {
		return nil, err
	}
	s, err := c.NewSession()
	if err == nil {
		return s, nil
	}
	h.mu.Lock()
	if h.client == c {
		c.Close()
		h.client = nil
	}
	h.mu.Unlock()
	if c, err = h.conn(); err != nil {
		return nil, err
	}
	return c.NewSession()
}

// Run runs cmd with /bin/sh -c semantics in the guest, as root, and returns its output and exit
// status.
func (h *Host) Run(cmd string) Result { return h.RunInput(nil, cmd) }

// RunInput is Run with stdin.
func (h *Host) RunInput(stdin io.Reader, cmd string) Result {
	var stdout, stderr bytes.Buffer
	r := h.stream(stdin, &stdout, &stderr, cmd)
	r.Stdout, r.Stderr = stdout.String(), stderr.String()
	return r
}

func (h *Host) stream(stdin io.Reader, stdout, stderr io.Writer, cmd string) Result {
	r := Result{Cmd: cmd, Code: -1}
	s, err := h.session()
	if err != nil {
		r.Err = err
		return r
	}
	defer s.Close()
	s.Stdin, s.Stdout, s.Stderr = stdin, stdout, stderr
	err = s.Run(cmd)
	var exit *ssh.ExitError
	switch {
	case err == nil:
		r.Code = 0
	case errors.As(err, &exit) && exit.Signal() == "":
		r.Code = exit.ExitStatus()
	default:
		r.Err = err
	}
	return r
}

// MustRun runs cmd and fails t unless it exits 0; it returns stdout.
func (h *Host) MustRun(t testing.TB, cmd string) string {
	t.Helper()
	r := h.Run(cmd)
	if !r.OK() {
		t.Fatalf("testhost %s:\n%s", h.name, r)
	}
	return r.Stdout
}

// Eventually runs cmd until it exits 0 or timeout passes, and returns the last result.
func (h *Host) Eventually(cmd string, timeout time.Duration) Result {
	t0 := time.Now()
	defer func() { account(h.test, func(u *Usage) { u.Poll += time.Since(t0) }) }()
	deadline := t0.Add(timeout)
	for {
		r := h.Run(cmd)
		if r.OK() || time.Now().After(deadline) {
			return r
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Quote quotes s for /bin/sh.
func Quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// QuoteArgs quotes each argument and joins them with spaces.
func QuoteArgs(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}

// JournalCursor returns the guest journal's current position, for JournalSince.
func (h *Host) JournalCursor() (string, error) {
	r := h.Run("journalctl -q -n 0 --show-cursor")
	if !r.OK() {
		return "", fmt.Errorf("testhost: journal cursor: %s", r)
	}
	for _, l := range strings.Split(r.Stdout, "\n") {
		if c, ok := strings.CutPrefix(l, "-- cursor: "); ok {
			return strings.TrimSpace(c), nil
		}
	}
	return "", fmt.Errorf("testhost: journal cursor: no cursor in %q", r.Stdout)
}

// JournalSince returns the guest journal's entries after cursor (from JournalCursor), as printed by
// journalctl with args added (e.g. "-u", "web.service", "-o", "cat"). An empty cursor means the
// whole journal of this boot. The journal is synced first.
func (h *Host) JournalSince(cursor string, args ...string) (string, error) {
	cmd := "journalctl --sync 2>/dev/null; journalctl -q --no-pager"
	if cursor != "" {
		cmd += " --after-cursor=" + Quote(cursor)
	} else {
		cmd += " -b"
	}
	if len(args) > 0 {
		cmd += " " + QuoteArgs(args...)
	}
	r := h.Run(cmd)
	if !r.OK() {
		return r.Stdout, fmt.Errorf("testhost: journal: %s", r)
	}
	return r.Stdout, nil
}

// MakeImage builds a busybox-based image whose /etc/testhost-marker and /www/index.html hold marker,
// pushes it to the guest's registry as localhost:5000/REF (REF is NAME[:TAG], default tag latest),
// and returns that reference. The image is not left in the guest's local store. Different markers give
// different digests, so two tags of one name can be told apart.
func (h *Host) MakeImage(ref, marker string) (string, error) {
	r := h.Run("testhost-mkimage " + QuoteArgs(ref, marker))
	if !r.OK() {
		return "", fmt.Errorf("testhost: make image %s: %s", ref, r)
	}
	return strings.TrimSpace(r.Stdout), nil
}

// Stop stops the host and deletes its state (by the PIDs and cgroup recorded at start). Start's
// cleanup calls it; calling it again is a no-op.
func (h *Host) Stop() error {
	h.stopOnce.Do(func() {
		t0 := time.Now()
		defer func() { account(h.test, func(u *Usage) { u.Stop += time.Since(t0) }) }()
		h.mu.Lock()
		if h.client != nil {
			h.client.Close()
			h.client = nil
		}
		h.mu.Unlock()
		var out string
		out, h.stopErr = runScript(nil, []string{"TESTHOST_NAME=" + h.name, "TESTHOST_RECIPE=" + h.recipe, "TESTHOST_STOP_TIMEOUT=0"}, "down")
		if cpu, ok := guestCPU(out); ok {
			account(h.test, func(u *Usage) { u.CPU += cpu })
		}
	})
	return h.stopErr
}

// dumpDiagnostics logs what a failed test's host looked like. The own
// journal of each unit that failed comes first, whether it is failed now or
// failed earlier and was started again since: the last 80 lines of the whole
// journal are often all about the units that ran after it (a CI run once
// showed app-build.service failed and nothing of why; another, a build that
// failed at boot and had run again by the time the test failed).
func (h *Host) dumpDiagnostics(t testing.TB) {
	r := h.Run("systemctl is-system-running; failed=$(systemctl --failed --no-legend --no-pager --plain); echo \"$failed\"; podman ps -a --format '{{.Names}} {{.Status}}'; " +
		"for u in $({ echo \"$failed\" | awk '{print $1}'; journalctl -b --no-pager -q -o cat _PID=1 | sed -n 's/^\\([^ ]*\\): Failed with result .*/\\1/p'; } | sort -u); do " +
		"echo \"--- journal of $u\"; journalctl -b --no-pager -q -n 40 -u \"$u\"; done; " +
		"echo '--- the journal'; journalctl -b --no-pager -q -n 80")
	t.Logf("testhost %s diagnostics after failure:\n%s", h.name, r)
}
