package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The defaults of a probe's fields, as the spec reference documents them.
const (
	DefaultPath      = "/"
	DefaultInterval  = time.Second
	DefaultTimeout   = 2 * time.Second
	DefaultSuccesses = 1
	DefaultFailures  = 3
	DefaultDeadline  = 30 * time.Second
)

// DefaultStatus is the status range an HTTP probe expects by default:
// success, and a redirect judged by its own status (none is followed).
var DefaultStatus = Range{200, 399}

// Probe is one container's readiness probe: exactly one of HTTP, TCP and
// Exec, and its timing. A decoded probe has every default filled in.
type Probe struct {
	HTTP *HTTP    `json:"http,omitempty"`
	TCP  *TCP     `json:"tcp,omitempty"`
	Exec []string `json:"exec,omitempty"`
	// Interval is the time from one try's start to the next's; Timeout
	// bounds one try.
	Interval Duration `json:"interval"`
	Timeout  Duration `json:"timeout"`
	// Successes in a row make the container ready; Failures in a row
	// once it is ready fail it.
	Successes int `json:"successes"`
	Failures  int `json:"failures"`
	// Deadline is how long after the health gate begins the container
	// has to be ready.
	Deadline Duration `json:"deadline"`
}

// HTTP is a GET of Path on the container's Port, which must answer with a
// status in Status and, when Body is set, a body holding it. Host, when
// set, is the request's Host header (the connection still goes to the
// container).
type HTTP struct {
	Port   int    `json:"port"`
	Path   string `json:"path"`
	Status Range  `json:"status"`
	Body   string `json:"body,omitempty"`
	Host   string `json:"host,omitempty"`
}

// TCP is a connect to the container's Port.
type TCP struct {
	Port int `json:"port"`
}

// Port is the container port the probe asks on; 0 for an exec probe.
func (p *Probe) Port() int {
	switch {
	case p.HTTP != nil:
		return p.HTTP.Port
	case p.TCP != nil:
		return p.TCP.Port
	}
	return 0
}

// Name names the probe in messages: "GET :8080/up", "TCP :5432", "exec
// pg_isready -q".
func (p *Probe) Name() string {
	switch {
	case p.HTTP != nil:
		n := fmt.Sprintf("GET :%d%s", p.HTTP.Port, p.HTTP.Path)
		if p.HTTP.Host != "" {
			n += " (Host: " + p.HTTP.Host + ")"
		}
		return n
	case p.TCP != nil:
		return fmt.Sprintf("TCP :%d", p.TCP.Port)
	}
	return "exec " + strings.Join(p.Exec, " ")
}

// String describes the probe for the plan: "GET :8080/up → 200-399 every
// 1s", with what else it expects and its deadline when they are not the
// defaults.
func (p *Probe) String() string {
	var b strings.Builder
	b.WriteString(p.Name())
	switch {
	case p.HTTP != nil:
		b.WriteString(" → " + p.HTTP.Status.String())
		if p.HTTP.Body != "" {
			fmt.Fprintf(&b, " with %q", p.HTTP.Body)
		}
	case p.TCP != nil:
		b.WriteString(" → connects")
	default:
		b.WriteString(" → exits 0")
	}
	b.WriteString(" every " + p.Interval.String())
	if p.Successes != DefaultSuccesses {
		fmt.Fprintf(&b, ", ready after %d in a row", p.Successes)
	}
	if time.Duration(p.Deadline) != DefaultDeadline {
		b.WriteString(", within " + p.Deadline.String())
	}
	return b.String()
}

// Marker is the probe as its container's [X-Syslet] Probe= value: one
// line of JSON, every field written, so that the installed unit says
// exactly what the gate, status and the drift check will ask.
func (p *Probe) Marker() string {
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // a Probe always marshals
	}
	return string(b)
}

// Parse reads a Probe= marker value back.
func Parse(s string) (*Probe, error) {
	var p Probe
	d := json.NewDecoder(strings.NewReader(s))
	d.DisallowUnknownFields()
	if err := d.Decode(&p); err != nil {
		return nil, fmt.Errorf("reading the probe %q: %w", s, err)
	}
	n := 0
	for _, set := range []bool{p.HTTP != nil, p.TCP != nil, p.Exec != nil} {
		if set {
			n++
		}
	}
	if n != 1 || p.Interval <= 0 || p.Timeout <= 0 || p.Deadline <= 0 || p.Successes < 1 || p.Failures < 1 {
		return nil, fmt.Errorf("reading the probe %q: not a probe syslet writes", s)
	}
	return &p, nil
}

// Duration is a time.Duration written as Go writes one ("1s", "1m30s").
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = Duration(v)
	return err
}

// Range is an inclusive range of HTTP statuses, written "200-399" (or
// "204" for one).
type Range struct{ Lo, Hi int }

func (r Range) String() string {
	if r.Lo == r.Hi {
		return strconv.Itoa(r.Lo)
	}
	return fmt.Sprintf("%d-%d", r.Lo, r.Hi)
}

// Has reports whether status is in the range.
func (r Range) Has(status int) bool { return status >= r.Lo && status <= r.Hi }

// ParseRange reads "200-399" or "204".
func ParseRange(s string) (Range, bool) {
	lo, hi, isRange := strings.Cut(s, "-")
	a, err1 := strconv.Atoi(lo)
	b, err2 := a, error(nil)
	if isRange {
		b, err2 = strconv.Atoi(hi)
	}
	if err1 != nil || err2 != nil || strings.ContainsAny(s, "+ ") || a > b {
		return Range{}, false
	}
	return Range{a, b}, true
}

func (r Range) MarshalJSON() ([]byte, error) { return json.Marshal(r.String()) }

func (r *Range) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, ok := ParseRange(s)
	if !ok {
		return fmt.Errorf("%q is not a status range", s)
	}
	*r = v
	return nil
}

// ExcerptBytes is how much of an answer's body a message quotes.
const ExcerptBytes = 200

// Excerpt is the start of a body as messages quote it: trimmed, at most
// ExcerptBytes (cut at a character's start, "…" added).
func Excerpt(body []byte) string {
	body = bytes.TrimSpace(body)
	if len(body) <= ExcerptBytes {
		return string(body)
	}
	cut := ExcerptBytes
	for cut > 0 && body[cut]&0xC0 == 0x80 {
		cut--
	}
	return string(body[:cut]) + "…"
}
