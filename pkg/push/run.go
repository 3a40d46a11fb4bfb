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

	"github.com/syslet/syslet/pkg/redact"
	"github.com/syslet/syslet/pkg/sshcommand"
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
	// Command is the plan or apply each host runs, e.g. "syslet --diff
	// --stdin", as it is shown. Run adds sshcommand.Report to it (the
	// host's syslet then reports its JSON document, from which the host's
	// ending is read).
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
	// whose text is on stderr).
	Capture bool
	// Log receives the rollout's own lines: each batch as it starts, the
	// pauses, the checks after them, and why the rollout stopped.
	Log io.Writer
}

// maxCapture bounds a captured stdout.
const maxCapture = 256 << 20

// Result is one host's outcome.
type Result struct {
	Target Target
	// Ending is how the host's turn ended (ending.go).
	Ending Ending
	Err    error // why, when the ending is not OK
	// ExitCode is the remote command's exit status; -1 when it did not
	// report one.
	ExitCode int
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

	// host is the JSON document the host's syslet reported; nil when it
	// reported none.
	host *hostDocument
	// baseline is the host's service health read right after its
	// command, which the check after the pause compares with.
	baseline []byte
}

// OK reports whether the host did what it was asked to.
func (r *Result) OK() bool { return r.Ending.OK() }

// Fail ends the host's turn as failed, for why, whatever its syslet said
// (push could not keep what the host did, or the host fell over after).
func (r *Result) Fail(why error) { r.Ending.Own, r.Err = Broke, why }

// Plan is the host's plan as the result table shows it (hostDocument's
// plan); "" when its syslet reported none.
func (r *Result) Plan() string { return r.host.plan() }

// Runs are the run IDs the host's syslet made: the change's, then (after
// a failed health gate) the rollback's; "" where there was none.
func (r *Result) Runs() (run, rollback string) {
	if d := r.host; d != nil {
		run = d.Run
		if d.Rollback != nil {
			rollback = d.Rollback.Run
		}
	}
	return run, rollback
}

// Reason is why the host did not do what it was asked to: its syslet's
// own last word on a rollback, or the error.
func (r *Result) Reason() string {
	if r.OK() {
		return ""
	}
	if d := r.host; d != nil && r.Ending.Own == 0 && d.Rollback != nil && d.Rollback.Message != "" {
		return redact.Escape(d.Rollback.Message)
	}
	if r.Err != nil {
		return r.Err.Error()
	}
	return ""
}

// runOne is one host's turn: connect, run the command, and tell how it
// ended; then, with a probe (the status command of a pause to come), read
// the baseline the check after the pause compares with.
func runOne(j Job, o Options, outMu *sync.Mutex, prefix, probe string) (r Result) {
	r = Result{Target: j.Target, ExitCode: -1, Started: time.Now()}
	defer func() { r.Duration = time.Since(r.Started) }()

	client, err := dial(j, o)
	r.Connect = time.Since(r.Started)
	if err != nil {
		r.Ending.Own, r.Err = Unreachable, err
		var hk *HostKeyError
		if errors.As(err, &hk) {
			r.Ending.Own = KeyRefused
		}
		return r
	}
	defer client.Close()

	c := runCommand(client, j, o, outMu, prefix)
	r.Output, r.host = c.output, c.doc
	r.ExitCode, r.Ending, r.Err = c.tell(o.Command, o.CommandTimeout)

	if probe != "" && r.OK() {
		// The baseline of the check after the pause, read at once on the
		// same connection: what the host's services look like just after
		// its health gate passed.
		out, _, err := runCaptured(client, probe, j.Stream, o.CommandTimeout)
		if err != nil {
			r.Fail(fmt.Errorf("the change landed, but reading its services for the check after the pause failed: %w", err))
		}
		r.baseline = out
	}
	return r
}

// ran is what one remote command came to.
type ran struct {
	started  bool  // the command was started
	err      error // why it could not start, or what waiting for it returned
	timedOut bool  // CommandTimeout sent it SIGTERM
	// output is its stdout, with Options.Capture; over: larger than it
	// may be.
	output []byte
	over   bool
	// doc is the document its syslet reported; nil when none.
	doc *hostDocument
}

// runCommand runs the command on its own session, with the job's saved
// plan and stream on stdin and the report flags added (sshcommand.Report:
// the host's syslet then writes its document as a record at the end of
// stderr). The text is copied line by line with the host's prefix; the
// record is kept, never shown.
func runCommand(client *ssh.Client, j Job, o Options, outMu *sync.Mutex, prefix string) (c ran) {
	sess, err := client.NewSession()
	if err != nil {
		c.err = fmt.Errorf("opening a session: %w", err)
		return c
	}
	defer sess.Close()
	var rec recorder
	stdout := &lineWriter{w: o.Stdout, mu: outMu, prefix: prefix}
	stderr := &lineWriter{w: o.Stderr, mu: outMu, prefix: prefix, keep: rec.keep}
	captured := &capture{max: maxCapture}
	sess.Stdin = io.MultiReader(bytes.NewReader(j.Plan), bytes.NewReader(j.Stream))
	sess.Stdout, sess.Stderr = stdout, stderr
	if o.Capture {
		sess.Stdout = captured
	}
	if err := sess.Start(o.Command + " " + strings.Join(sshcommand.Report, " ")); err != nil {
		c.err = fmt.Errorf("starting %q: %w", o.Command, err)
		return c
	}
	c.started = true
	c.err, c.timedOut = wait(client, sess, o)
	stdout.Flush()
	stderr.Flush()
	c.doc = rec.document()
	if o.Capture {
		c.output, c.over = captured.buf.Bytes(), captured.over
	}
	return c
}

// wait waits for the command to end: Options.Abort forwards SIGINT,
// CommandTimeout sends SIGTERM, and 10 s after it the connection is
// closed if the command ignored it.
func wait(client *ssh.Client, sess *ssh.Session, o Options) (err error, timedOut bool) {
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	var timeout <-chan time.Time
	if o.CommandTimeout > 0 {
		t := time.NewTimer(o.CommandTimeout)
		defer t.Stop()
		timeout = t.C
	}
	abort := o.Abort
	var kill <-chan time.Time
	for {
		select {
		case err = <-done:
			return err, timedOut
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
}

// tell is how the command ended, from the verdict its syslet reported
// when it ended by itself; push's own ending when it could not start,
// timed out, was killed or reported none. It returns the exit status (-1
// when none came) and, for an ending that is not OK, why.
func (c ran) tell(cmd string, timeout time.Duration) (int, Ending, error) {
	code := -1
	var exit *ssh.ExitError
	switch {
	case c.err == nil:
		code = 0
	case errors.As(c.err, &exit) && exit.Signal() == "":
		code = exit.ExitStatus()
	}
	broke := Ending{Own: Broke}
	switch {
	case !c.started:
		return code, broke, c.err
	case c.timedOut: // even when it finished on SIGTERM in time: not its job
		return code, broke, fmt.Errorf("%q timed out after %s", cmd, timeout)
	case code == 0 && c.over:
		return code, broke, fmt.Errorf("running %q: its output is larger than %d MiB", cmd, maxCapture>>20)
	case exit != nil && code < 0:
		return code, broke, fmt.Errorf("%q killed by signal %s", cmd, exit.Signal())
	case code < 0:
		return code, broke, fmt.Errorf("running %q: %w", cmd, c.err)
	case c.doc != nil:
		e := c.doc.ending()
		if e.OK() {
			return code, e, nil
		}
		return code, e, fmt.Errorf("%q exited %d%s", cmd, code, e.row().hint)
	case code == 0:
		return code, Ending{Own: Exited}, nil
	}
	return code, broke, fmt.Errorf("%q exited %d%s", cmd, code, exitHint(code))
}

// runCaptured runs a read-only command on an open connection with stdin,
// and returns its stdout and exit status. An exit status other than 0 and
// those allowed is an error carrying the command's last line on stderr.
// timeout bounds it (0: no bound).
func runCaptured(client *ssh.Client, cmd string, stdin []byte, timeout time.Duration, allowed ...int) ([]byte, int, error) {
	out, _, code, err := runBoth(client, cmd, stdin, timeout, allowed...)
	return out, code, err
}

// runBoth is runCaptured, and returns what the command wrote on stderr
// too (a reported plan's record is there).
func runBoth(client *ssh.Client, cmd string, stdin []byte, timeout time.Duration, allowed ...int) ([]byte, []byte, int, error) {
	sess, err := client.NewSession()
	if err != nil {
		return nil, nil, -1, fmt.Errorf("opening a session: %w", err)
	}
	defer sess.Close()
	stdout, stderr := &capture{max: maxCapture}, &capture{max: maxCapture}
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
	case code >= 0 && (stdout.over || stderr.over):
		return nil, nil, code, fmt.Errorf("%q printed more than %d MiB", cmd, maxCapture>>20)
	case code == 0 || slices.Contains(allowed, code):
		return stdout.buf.Bytes(), stderr.buf.Bytes(), code, nil
	case code > 0:
		err = fmt.Errorf("%q exited %d%s", cmd, code, exitHint(code))
	default:
		err = fmt.Errorf("running %q: %w", cmd, err)
	}
	if last := lastLine(stderr.buf.String()); last != "" {
		err = fmt.Errorf("%w: %s", err, last)
	}
	return stdout.buf.Bytes(), stderr.buf.Bytes(), code, err
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.TrimSpace(s[strings.LastIndexByte(s, '\n')+1:])
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
// by every host, so lines of concurrent hosts never interleave. keep, when
// set, sees each line first and returns what of it is shown, if anything.
type lineWriter struct {
	w      io.Writer
	mu     *sync.Mutex
	prefix string
	keep   func(line string) (string, bool)
	buf    []byte
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
	if l.keep != nil {
		var shown bool
		if line, shown = l.keep(line); !shown {
			return
		}
	}
	if l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, l.prefix+line+"\n")
}
