package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
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
}

// maxCapture bounds a captured stdout.
const maxCapture = 256 << 20

// Status is a host's outcome.
type Status int

const (
	// OK: the remote command ran and exited 0.
	OK Status = iota
	// Failed: the remote command ran and failed, or the connection broke.
	Failed
	// Refused: the host key was unknown, changed or revoked; nothing was
	// authenticated or run.
	Refused
	// Unreachable: no SSH session could be set up (connect, key exchange,
	// authentication).
	Unreachable
	// NotStarted: the run was interrupted before this host's turn.
	NotStarted
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

// StalePrefix begins the line with which syslet refuses a stale saved
// plan (pkg/app/view's line of the same name; a test in cmd/syslet keeps
// the two equal).
const StalePrefix = "Saved plan is stale"

func (s Status) String() string {
	switch s {
	case OK:
		return "ok"
	case Failed:
		return "failed"
	case Refused:
		return "refused"
	case Unreachable:
		return "unreachable"
	case NotStarted:
		return "not started"
	case RolledBack:
		return "rolled back"
	case RollbackFailed:
		return "rollback failed"
	case Stale:
		return "stale"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Result is one host's outcome.
type Result struct {
	Target   Target
	Status   Status
	Err      error         // why, when Status is not OK
	ExitCode int           // the remote command's exit status; -1 when it did not report one
	Summary  string        // the plan (and apply) summary read from the remote output
	Duration time.Duration // connect to end of command
	// Output is the remote stdout, with Options.Capture.
	Output []byte
}

// Run deploys each job's stream to its host, at most o.Parallel at once,
// and returns one result per job in job order. Cancelling ctx stops
// starting hosts (the rest are NotStarted); hosts already started run to
// the end (see Options.Abort).
func Run(ctx context.Context, jobs []Job, o Options) []Result {
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	width := 0
	for _, j := range jobs {
		width = max(width, len(j.Target.Arg))
	}
	var outMu sync.Mutex
	results := make([]Result, len(jobs))
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, j := range jobs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			for k := i; k < len(jobs); k++ {
				results[k] = Result{Target: jobs[k].Target, Status: NotStarted, ExitCode: -1, Err: context.Cause(ctx)}
			}
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			prefix := fmt.Sprintf("%-*s | ", width, j.Target.Arg)
			results[i] = runOne(j, o, &outMu, prefix)
		}()
	}
	wg.Wait()
	return results
}

func runOne(j Job, o Options, outMu *sync.Mutex, prefix string) (r Result) {
	start := time.Now()
	r = Result{Target: j.Target, ExitCode: -1}
	defer func() { r.Duration = time.Since(start) }()

	client, err := dial(j, o)
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
	r.Summary = sum.String()
	if o.Capture {
		r.Output = captured.buf.Bytes()
		if captured.over && err == nil {
			err = fmt.Errorf("its output is larger than %d MiB", maxCapture>>20)
		}
	}

	var exit *ssh.ExitError
	switch {
	case err == nil:
		r.Status, r.ExitCode = OK, 0
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
	return r
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
