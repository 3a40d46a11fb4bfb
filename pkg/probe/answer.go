package probe

import (
	"bytes"
	"fmt"
	"time"
)

// Answer is what one try of a probe got.
type Answer struct {
	// OK: the try succeeded (the status in range and the body holding
	// what it must, the connect made, the command exited 0).
	OK bool `json:"ok"`
	// Status is an HTTP probe's status, or an exec probe's exit code.
	Status int `json:"status,omitempty"`
	// Body is the start of what the service answered (Excerpt): an HTTP
	// body, a command's output.
	Body string `json:"body,omitempty"`
	// Missing is the substring an HTTP probe's body had to hold and did
	// not.
	Missing string `json:"missing,omitempty"`
	// Err says why there was no answer: "connection refused", "timed out
	// after 2s", "the container is not running".
	Err string `json:"error,omitempty"`
	// Kind is the probe's ("http", "tcp", "exec"), for the words.
	Kind string `json:"kind"`
	// Via is where the host reached the container: "127.0.0.1:8080
	// (published)", "10.89.0.4:8080 (network app)", "its network
	// namespace", "127.0.0.1:8080 (host network)".
	Via string `json:"via,omitempty"`
	// At is when the try began; Took how long it took.
	At   time.Time     `json:"at"`
	Took time.Duration `json:"took"`
}

// The kinds of probe, as Answer.Kind names them.
const (
	KindHTTP = "http"
	KindTCP  = "tcp"
	KindExec = "exec"
)

// Kind is the probe's kind.
func (p *Probe) Kind() string {
	switch {
	case p.HTTP != nil:
		return KindHTTP
	case p.TCP != nil:
		return KindTCP
	}
	return KindExec
}

// String says what the try got: "answered 503 \"db unreachable\"",
// "answered 200 \"starting\" without \"ready\"", "connected", "exited 1
// \"not yet\"", "connection refused", "timed out after 2s".
func (a Answer) String() string {
	if a.Err != "" {
		return a.Err
	}
	quoted := ""
	if a.Body != "" {
		quoted = fmt.Sprintf(" %q", a.Body)
	}
	switch a.Kind {
	case KindTCP:
		return "connected"
	case KindExec:
		return fmt.Sprintf("exited %d%s", a.Status, quoted)
	}
	s := fmt.Sprintf("answered %d%s", a.Status, quoted)
	if a.Missing != "" {
		s += fmt.Sprintf(" without %q", a.Missing)
	}
	return s
}

// JudgeHTTP is an HTTP probe's answer to a response: its status and (the
// start of) its body.
func (h *HTTP) JudgeHTTP(status int, body []byte) Answer {
	a := Answer{Kind: KindHTTP, Status: status, Body: Excerpt(body)}
	a.OK = h.Status.Has(status)
	if a.OK && h.Body != "" && !bytes.Contains(body, []byte(h.Body)) {
		a.OK, a.Missing = false, h.Body
	}
	return a
}

// JudgeExec is an exec probe's answer to a command's exit code and
// output.
func JudgeExec(code int, output []byte) Answer {
	return Answer{Kind: KindExec, OK: code == 0, Status: code, Body: Excerpt(output)}
}

// Failed is a try that got no answer, for why.
func (p *Probe) Failed(why string) Answer { return Answer{Kind: p.Kind(), Err: why} }

// TimedOut is the reason of a try that ran out of its time.
func (p *Probe) TimedOut() string { return "timed out after " + p.Timeout.String() }
