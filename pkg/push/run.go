package push

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// Job is one host and the spec stream it gets.
type Job struct {
	Target Target
	// Stream is the validated spec stream, written to the remote command's
	// stdin and then closed.
	Stream []byte
	// Plan, when set, is written to stdin before Stream: the saved plan
	// of `syslet --plan - --stdin`, which reads it first.
	Plan []byte
	// Auth authenticates to this host (see Auth).
	Auth ssh.AuthMethod
}

// Options tune Run.
type Options struct {
	// Command is run on each host, e.g. "syslet --diff --stdin".
	Command string
	// Parallel bounds how many hosts are worked on at once (at least 1).
	Parallel int
	// ConnectTimeout bounds TCP connect, key exchange and authentication.
	ConnectTimeout time.Duration
	// CommandTimeout bounds the remote command; 0 means no bound. On
	// expiry the command gets SIGTERM, and the connection is closed 10 s
	// later if it has not ended by then.
	CommandTimeout time.Duration
	// HostKeys is the host key policy; required.
	HostKeys *HostKeys
	// Stdout and Stderr receive the remote output, one line at a time,
	// each prefixed by the host's Arg.
	Stdout, Stderr io.Writer
	// Abort, when closed, forwards SIGINT to the commands still running:
	// syslet then finishes its current action and stops.
	Abort <-chan struct{}
	// Capture keeps each host's stdout in its Result.Output instead of
	// streaming it (the saved plan of `syslet --diff --stdin --out -`,
	// whose human output is on stderr: the summary is read there).
	Capture bool
	// Log receives the rollout's own lines: each batch as it starts, the
	// pauses, the checks after them, and why the rollout stopped.
	Log io.Writer
}

// maxCapture bounds a captured stdout.
const maxCapture = 256 << 20

// Status is a host's outcome.
type Status int

const (
	// Applied: the remote apply ran, changed the host and exited 0.
	Applied Status = iota
	// Unchanged: the remote plan found nothing to change (apply or plan).
	Unchanged
	// Planned: the remote plan (--diff) found changes to make and exited 0.
	Planned
	// Succeeded: the remote command exited 0 without a summary push
	// recognises (another remote command, an older syslet).
	Succeeded
	// Failed: the remote command ran and failed, the connection broke, or
	// the host fell over during the pause after its batch.
	Failed
	// Refused: the host key was unknown, changed or revoked; nothing was
	// authenticated or run.
	Refused
	// Unreachable: no SSH session could be set up (connect, key exchange,
	// authentication).
	Unreachable
	// NotReached: the host's turn never came (the rollout stopped, or an
	// interrupt came first); no connection was opened to it.
	NotReached
	// RolledBack: the host applied the change, a container failed its
	// health gate, and the host's syslet restored the last good
	// generation (exit code 4): the host serves, the change did not land.
	RolledBack
	// RollbackFailed: the change failed its health gate and so did the
	// rollback (exit code 5): the host needs a person.
	RollbackFailed
	// Stale: the host refused the saved plan it was given, because the
	// host or the input changed since the plan was made; nothing changed.
	Stale
)

// OK reports whether the host did what was asked of it.
func (s Status) OK() bool { return s <= Succeeded }

// StalePrefix begins the line with which syslet refuses a stale saved
// plan (pkg/app/view's line of the same name; a test in cmd/syslet keeps
// the two equal).
const StalePrefix = "Saved plan is stale"

// statusNames are the words the table and --output json use.
var statusNames = [...]string{
	Applied:        "applied",
	Unchanged:      "unchanged",
	Planned:        "planned",
	Succeeded:      "ok",
	Failed:         "failed",
	Refused:        "refused",
	Unreachable:    "unreachable",
	NotReached:     "not reached",
	RolledBack:     "rolled back",
	RollbackFailed: "rollback failed",
	Stale:          "stale",
}

func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Result is one host's outcome.
type Result struct {
	Target   Target
	Status   Status
	Err      error  // why, when Status is not OK
	ExitCode int    // the remote command's exit status; -1 when it did not report one
	Summary  string // the plan (and apply) summary read from the remote output
	// Runs are the run IDs the host's syslet announced, in order: the
	// apply's, then its rollback's.
	Runs []string
	// Verdict is the host's own last word on a failed health gate, as
	// its syslet said it ("run … failed its health gate (…); run …
	// applied the generation of run … again, and it passed the gate.").
	Verdict string
	// Batch is the host's batch, from 1.
	Batch int
	// Started is when its connection was begun (zero when not reached);
	// Connect is how long connect, host key check and login took, and
	// Duration the whole of it, to the end of its command.
	Started  time.Time
	Connect  time.Duration
	Duration time.Duration
	// Output is the remote stdout, with Options.Capture.
	Output []byte
	// Check is the look at the host after the pause that followed its
	// batch; nil when there was none.
	Check *Check

	// baseline is the host's service health read right after its
	// command, which the check after the pause compares with.
	baseline []byte
}

func runOne(j Job, o Options, outMu *sync.Mutex, prefix, probe string) (r Result) {
	r = Result{Target: j.Target, ExitCode: -1, Started: time.Now()}
	defer func() { r.Duration = time.Since(r.Started) }()

	client, err := dial(j, o)
	r.Connect = time.Since(r.Started)
	if err != nil {
		r.Status, r.Err = Unreachable, err
		var hk *HostKeyError
		if errors.As(err, &hk) {
			r.Status = Refused
		}
		return r
	}
	defer client.Close()

	sess, err := client.NewSession()
	if err != nil {
		r.Status, r.Err = Failed, fmt.Errorf("opening a session: %w", err)
		return r
	}
	defer sess.Close()
	var sum summary
	stdout := &lineWriter{w: o.Stdout, mu: outMu, prefix: prefix, observe: sum.observe}
	stderr := &lineWriter{w: o.Stderr, mu: outMu, prefix: prefix, observe: sum.observeErr}
	captured := &capture{max: maxCapture}
	sess.Stdin = io.MultiReader(bytes.NewReader(j.Plan), bytes.NewReader(j.Stream))
	sess.Stdout, sess.Stderr = stdout, stderr
	if o.Capture {
		// The human output is on stderr: the summary is read there.
		stderr.observe = sum.observe
		sess.Stdout = captured
	}
	if err := sess.Start(o.Command); err != nil {
		r.Status, r.Err = Failed, fmt.Errorf("starting %q: %w", o.Command, err)
		return r
	}
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()

	var timeout <-chan time.Time
	if o.CommandTimeout > 0 {
		t := time.NewTimer(o.CommandTimeout)
		defer t.Stop()
		timeout = t.C
	}
	abort := o.Abort
	var timedOut bool
	var kill <-chan time.Time
	for waiting := true; waiting; {
		select {
		case err = <-done:
			waiting = false
		case <-abort:
			abort = nil
			sess.Signal(ssh.SIGINT)
		case <-timeout:
			timeout, timedOut = nil, true
			sess.Signal(ssh.SIGTERM)
			kill = time.After(10 * time.Second)
		case <-kill:
			client.Close() // the command ignored SIGTERM; Wait returns now
			kill = nil
		}
	}
	stdout.Flush()
	stderr.Flush()
	r.Summary, r.Runs, r.Verdict = sum.String(), sum.runIDs(), sum.verdictLine()
	if o.Capture {
		r.Output = captured.buf.Bytes()
		if captured.over && err == nil {
			err = fmt.Errorf("its output is larger than %d MiB", maxCapture>>20)
		}
	}

	var exit *ssh.ExitError
	switch {
	case err == nil:
		r.Status, r.ExitCode = sum.success(), 0
		if timedOut { // it finished on SIGTERM in time, but not its job
			r.Status, r.Err = Failed, fmt.Errorf("%q timed out after %s", o.Command, o.CommandTimeout)
		}
	case timedOut:
		r.Status, r.Err = Failed, fmt.Errorf("%q timed out after %s", o.Command, o.CommandTimeout)
	case errors.As(err, &exit) && exit.Signal() == "":
		r.Status, r.ExitCode = Failed, exit.ExitStatus()
		hint := exitHint[exit.ExitStatus()]
		switch exit.ExitStatus() {
		case 1:
			if sum.isStale() {
				r.Status, hint = Stale, " (the host refused its saved plan: the host or the input changed since the plan was made, as its output says; nothing was changed there: make a new plan)"
			}
		case 4:
			r.Status = RolledBack
		case 5:
			r.Status = RollbackFailed
		}
		r.Err = fmt.Errorf("%q exited %d%s", o.Command, exit.ExitStatus(), hint)
	case errors.As(err, &exit):
		r.Status, r.Err = Failed, fmt.Errorf("%q killed by signal %s", o.Command, exit.Signal())
	default:
		r.Status, r.Err = Failed, fmt.Errorf("running %q: %w", o.Command, err)
	}

	if probe != "" && r.Status.OK() {
		// The baseline of the check after the pause, read at once on the
		// same connection: what the host's services look like just after
		// its health gate passed.
		out, _, err := runCaptured(client, probe, j.Stream, o.CommandTimeout)
		if err != nil {
			r.Status, r.Err = Failed, fmt.Errorf("the change landed, but reading its services for the check after the pause failed: %w", err)
		}
		r.baseline = out
	}
	return r
}

// runCaptured runs a read-only command on an open connection with stdin,
// and returns its stdout and exit status. An exit status other than 0 and
// those allowed is an error carrying the command's last line on stderr.
// timeout bounds it (0: no bound).
func runCaptured(client *ssh.Client, cmd string, stdin []byte, timeout time.Duration, allowed ...int) ([]byte, int, error) {
	sess, err := client.NewSession()
	if err != nil {
		return nil, -1, fmt.Errorf("opening a session: %w", err)
	}
	defer sess.Close()
	stdout, stderr := &capture{max: maxCapture}, &capture{max: 64 << 10}
	sess.Stdin, sess.Stdout, sess.Stderr = bytes.NewReader(stdin), stdout, stderr
	if timeout > 0 {
		t := time.AfterFunc(timeout, func() { client.Close() })
		defer t.Stop()
	}
	err = sess.Run(cmd)
	var exit *ssh.ExitError
	code := -1
	if err == nil {
		code = 0
	} else if errors.As(err, &exit) && exit.Signal() == "" {
		code = exit.ExitStatus()
	}
	switch {
	case code >= 0 && stdout.over:
		return nil, code, fmt.Errorf("%q printed more than %d MiB", cmd, maxCapture>>20)
	case code == 0 || slices.Contains(allowed, code):
		return stdout.buf.Bytes(), code, nil
	case code > 0:
		err = fmt.Errorf("%q exited %d%s", cmd, code, exitHint[code])
	default:
		err = fmt.Errorf("running %q: %w", cmd, err)
	}
	if last := lastLine(stderr.buf.String()); last != "" {
		err = fmt.Errorf("%w: %s", err, last)
	}
	return stdout.buf.Bytes(), code, err
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.TrimSpace(s[strings.LastIndexByte(s, '\n')+1:])
}

// exitHint explains the exit codes of the remote command that have a
// meaning of their own (syslet's documented codes, and the shell's).
var exitHint = map[int]string{
	2:   " (the host's syslet found the specs invalid)",
	3:   " (changes pending)",
	4:   " (a container failed the health gate; the host rolled back to its last good generation and serves that)",
	5:   " (a container failed the health gate and so did the rollback: look at the host)",
	64:  " (the host's syslet did not accept the command line: is it older than this one?)",
	126: " (the remote command is not executable)",
	127: " (the remote command was not found: is syslet installed on the host, or set --remote-command)",
	130: " (interrupted; run the push again to resume)",
}

// dial connects, checks the host key (during the key exchange, before any
// authentication) and authenticates, all within o.ConnectTimeout.
func dial(j Job, o Options) (*ssh.Client, error) {
	addr := j.Target.Addr()
	cfg := &ssh.ClientConfig{
		User:              j.Target.User,
		Auth:              []ssh.AuthMethod{j.Auth},
		HostKeyCallback:   o.HostKeys.Check,
		HostKeyAlgorithms: o.HostKeys.Algorithms(addr),
		Timeout:           o.ConnectTimeout,
	}
	d := net.Dialer{Timeout: o.ConnectTimeout}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", addr, err)
	}
	if o.ConnectTimeout > 0 {
		conn.SetDeadline(time.Now().Add(o.ConnectTimeout))
	}
	c, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		conn.Close()
		var hk *HostKeyError
		if errors.As(err, &hk) {
			return nil, hk
		}
		if strings.Contains(err.Error(), "unable to authenticate") {
			return nil, fmt.Errorf("authenticating to %s as %s: %w", addr, j.Target.User, err)
		}
		return nil, fmt.Errorf("SSH handshake with %s: %w", addr, err)
	}
	conn.SetDeadline(time.Time{})
	return ssh.NewClient(c, chans, reqs), nil
}

// capture keeps what a remote command writes to stdout, up to max bytes.
type capture struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capture) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.over = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

// lineWriter copies whole lines to w with a prefix, under a mutex shared
// by every host, so lines of concurrent hosts never interleave.
type lineWriter struct {
	w       io.Writer
	mu      *sync.Mutex
	prefix  string
	observe func(line string)
	buf     []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.emit(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}

// Flush writes a last line that had no newline.
func (l *lineWriter) Flush() {
	if len(l.buf) > 0 {
		l.emit(string(l.buf))
		l.buf = nil
	}
}

func (l *lineWriter) emit(line string) {
	line = strings.TrimSuffix(line, "\r")
	if l.observe != nil {
		l.observe(line)
	}
	if l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, l.prefix+line+"\n")
}
