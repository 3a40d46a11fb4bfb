package spec

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/probe"
	"github.com/syslet/syslet/pkg/spec/internal/jsontree"
	"github.com/syslet/syslet/pkg/unit"
)

// A container's readiness probe: the "probe" object, read into a
// probe.Probe with every default filled in. It is syslet's own field, not
// the earlier tool's, so nothing in it is merely warned about: an unknown
// field is an error (a mistyped "intervall" would leave a default the
// user did not mean), and so is anything the probe could not run with.

var (
	probeFields = []string{"http", "tcp", "exec", "interval", "timeout", "successes", "failures", "deadline"}
	httpFields  = []string{"port", "path", "status", "body", "host"}
	tcpFields   = []string{"port"}
)

// Bounds of a probe's fields.
const (
	minProbeInterval = 100 * time.Millisecond // a probe is not a load test
	maxProbeDuration = time.Hour              // any of interval, timeout, deadline
	maxProbeCount    = 100                    // successes, failures
	maxProbePath     = 2048
	maxProbeBody     = 1024 // what a body must hold: it is matched in the first 64 KiB
)

// probeHostRe is a Host header: a host name or IP, with an optional port.
var probeHostRe = regexp.MustCompile(`^([A-Za-z0-9_-][A-Za-z0-9._-]*|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$`)

// probe reads a container's "probe" into s.Probe (nil when it has none
// or it is wrong).
func (d *decoder) probe(n *jsontree.Node, s *Spec) {
	v := d.object(n, "probe")
	if v == nil {
		return
	}
	errs := d.rep.Errors()
	d.strictFields(v, "probe", probeFields)
	p := &probe.Probe{
		Interval: d.duration(v, "interval", probe.DefaultInterval), Timeout: d.duration(v, "timeout", probe.DefaultTimeout),
		Successes: d.count(v, "successes", probe.DefaultSuccesses), Failures: d.count(v, "failures", probe.DefaultFailures),
		Deadline: d.duration(v, "deadline", probe.DefaultDeadline),
	}
	var ways []string
	for _, k := range []string{"http", "tcp", "exec"} {
		if v.Get(k) != nil {
			ways = append(ways, k)
		}
	}
	switch len(ways) {
	case 0:
		d.errf(v.Path(), RuleProbe, "probe needs one of http, tcp or exec: how to ask the container")
	case 1:
	default:
		d.errf(jsontree.Child(v.Path(), ways[1]), RuleProbe, "probe has both %s and %s: a probe asks one way; keep one", ways[0], ways[1])
	}
	if h := d.object(v, "http"); h != nil {
		p.HTTP = d.probeHTTP(h)
	}
	if t := d.object(v, "tcp"); t != nil {
		d.strictFields(t, "tcp", tcpFields)
		p.TCP = &probe.TCP{Port: d.port(t)}
	}
	if e := v.Get("exec"); e != nil {
		p.Exec = d.argv(e)
	}
	if p.Deadline < p.Interval {
		d.errf(jsontree.Child(v.Path(), "deadline"), RuleProbe, "deadline %s is shorter than the interval %s: the probe would get one try at most; make it a few intervals", p.Deadline, p.Interval)
	}
	switch s.DesiredState {
	case Oneshot:
		d.errf(v.Path(), RuleStateConflict, "a oneshot container runs to completion: there is no service to probe (remove probe, or make it running)")
	}
	if p.Port() > 0 {
		d.probePort(v, s, p.Port())
	}
	if d.rep.Errors() == errs && len(ways) == 1 {
		s.Probe = p
	}
}

// probeHTTP reads an http probe (an object).
func (d *decoder) probeHTTP(h *jsontree.Node) *probe.HTTP {
	d.strictFields(h, "http", httpFields)
	hp := &probe.HTTP{Port: d.port(h), Path: probe.DefaultPath, Status: probe.DefaultStatus}
	if v := h.Get("path"); v != nil {
		p := d.str(h, "path", true)
		switch {
		case p == "" || v.Kind != jsontree.String:
		case !strings.HasPrefix(p, "/"):
			d.errf(v.Path(), RuleProbe, "path %q must start with \"/\": it is the request's path on the container", p)
		case len(p) > maxProbePath:
			d.errf(v.Path(), RuleProbe, "path is %d bytes long; at most %d", len(p), maxProbePath)
		case strings.IndexFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '#' }) >= 0:
			d.errf(v.Path(), RuleProbe, "path %q must not hold whitespace, control characters or '#' (escape them: %%20)", p)
		default:
			hp.Path = p
		}
	}
	if v := h.Get("status"); v != nil {
		text := v.Text
		r, ok := probe.ParseRange(text)
		switch {
		case v.Kind != jsontree.String && v.Kind != jsontree.Number:
			d.errf(v.Path(), RuleFieldType, "status must be a string such as \"200-399\" or a number, got %s", v.Kind)
		case !ok || r.Lo < 100 || r.Hi > 599:
			d.errf(v.Path(), RuleProbe, "status %s is not an HTTP status or range of them between 100 and 599, such as \"200-399\" or 204", text)
		default:
			hp.Status = r
		}
	}
	if v := h.Get("body"); v != nil {
		b := d.str(h, "body", true)
		switch {
		case len(b) > maxProbeBody:
			d.errf(v.Path(), RuleProbe, "body is %d bytes long; at most %d (it is looked for in the answer's first 64 KiB)", len(b), maxProbeBody)
		case hasControl(b):
			d.errf(v.Path(), RuleControlChar, "body contains a control character")
		default:
			hp.Body = b
		}
	}
	if v := h.Get("host"); v != nil {
		host := d.str(h, "host", true)
		if host != "" && !probeHostRe.MatchString(host) {
			d.errf(v.Path(), RuleProbe, "host %q is not a host name or address for the Host header (the request still goes to the container)", host)
		} else {
			hp.Host = host
		}
	}
	return hp
}

// argv reads an exec probe's command: run as is in the container, no
// shell assumed.
func (d *decoder) argv(e *jsontree.Node) []string {
	if e.Kind != jsontree.Array {
		d.errf(e.Path(), RuleFieldType, "exec must be an array of strings (the command and its arguments; no shell is assumed), got %s", e.Kind)
		return nil
	}
	if len(e.Items) == 0 {
		d.errf(e.Path(), RuleProbe, "exec must name a command: it is empty")
		return nil
	}
	var argv []string
	for i, it := range e.Items {
		switch {
		case it.Kind != jsontree.String:
			d.errf(it.Path(), RuleFieldType, "exec items must be strings, got %s", it.Kind)
		case strings.ContainsRune(it.Text, 0):
			d.errf(it.Path(), RuleControlChar, "exec item contains a NUL byte")
		case i == 0 && strings.TrimSpace(it.Text) == "":
			d.errf(it.Path(), RuleProbe, "exec's command must not be empty")
		case i == 0 && strings.ContainsAny(it.Text, " \t") && len(e.Items) == 1:
			d.errf(it.Path(), RuleProbe, "exec %q is one word with spaces: no shell splits it; write each argument as an item ([%s])", it.Text, quotedWords(it.Text))
		}
		argv = append(argv, it.Text)
	}
	return argv
}

func quotedWords(s string) string {
	var q []string
	for _, w := range strings.Fields(s) {
		q = append(q, strconv.Quote(w))
	}
	return strings.Join(q, ", ")
}

// port reads a probe's required port.
func (d *decoder) port(n *jsontree.Node) int {
	v := n.Get("port")
	if v == nil {
		d.errf(jsontree.Child(n.Path(), "port"), RuleRequired, "port is required: the container's port to ask on")
		return 0
	}
	p, err := strconv.Atoi(v.Text)
	switch {
	case v.Kind != jsontree.Number:
		d.errf(v.Path(), RuleFieldType, "port must be a number, got %s", v.Kind)
	case err != nil || p < 1 || p > math.MaxUint16:
		d.errf(v.Path(), RuleProbe, "port %s is not a port number (1-65535)", v.Text)
	default:
		return p
	}
	return 0
}

// duration reads one of a probe's durations ("1s", "500ms").
func (d *decoder) duration(n *jsontree.Node, key string, def time.Duration) probe.Duration {
	v := n.Get(key)
	if v == nil {
		return probe.Duration(def)
	}
	if v.Kind != jsontree.String {
		d.errf(v.Path(), RuleFieldType, "%s must be a duration such as \"1s\" or \"500ms\", got %s", key, v.Kind)
		return probe.Duration(def)
	}
	t, err := time.ParseDuration(v.Text)
	switch {
	case err != nil:
		d.errf(v.Path(), RuleProbe, "%s %q is not a duration such as \"1s\" or \"500ms\"", key, v.Text)
	case t < minProbeInterval:
		d.errf(v.Path(), RuleProbe, "%s %s is shorter than %s", key, t, minProbeInterval)
	case t > maxProbeDuration:
		d.errf(v.Path(), RuleProbe, "%s %s is longer than %s", key, t, maxProbeDuration)
	default:
		return probe.Duration(t)
	}
	return probe.Duration(def)
}

// count reads successes or failures.
func (d *decoder) count(n *jsontree.Node, key string, def int) int {
	v := n.Get(key)
	if v == nil {
		return def
	}
	c, err := strconv.Atoi(v.Text)
	switch {
	case v.Kind != jsontree.Number:
		d.errf(v.Path(), RuleFieldType, "%s must be a number, got %s", key, v.Kind)
	case err != nil || c < 1 || c > maxProbeCount:
		d.errf(v.Path(), RuleProbe, "%s %s is not a whole number from 1 to %d", key, v.Text, maxProbeCount)
	default:
		return c
	}
	return def
}

// strictFields refuses every field of n but allowed, naming the one meant
// when it is a near miss.
func (d *decoder) strictFields(n *jsontree.Node, what string, allowed []string) {
	for j, k := range n.Keys {
		if slices.Contains(allowed, k) {
			continue
		}
		if near := nearMiss(k, allowed); near != "" {
			d.errf(n.Vals[j].Path(), RuleMisspelledField, "unknown field %q in %s: did you mean %s?", k, what, near)
			continue
		}
		d.errf(n.Vals[j].Path(), RuleUnknownField, "unknown field %q in %s (allowed: %s)", k, what, strings.Join(allowed, ", "))
	}
}

// probePort refuses a probe port the spec shows is not the container's:
// the host side of a PublishPort= whose container side differs. A probe
// names the container's port (syslet finds the published one itself).
func (d *decoder) probePort(v *jsontree.Node, s *Spec, port int) {
	if nw, ok := s.Last(unit.Container, unit.KeyNetwork); ok && nw.Text == "host" {
		return // the host's ports are the container's
	}
	var published []Value
	published = append(published, s.Values(unit.Container, unit.KeyPublishPort)...)
	for _, di := range s.DropIns {
		for _, sec := range di.Unit {
			if sec.Name != unit.Container {
				continue
			}
			for _, e := range sec.Entries {
				if e.Key == unit.KeyPublishPort {
					published = append(published, e.Lines...)
				}
			}
		}
	}
	var hostSide *Value
	var inner []int
	for i, pv := range published {
		host, ctr, ok := publishedPorts(pv.Text)
		if !ok {
			continue
		}
		if ctr.Has(port) {
			return
		}
		if host.Has(port) && hostSide == nil {
			hostSide = &published[i]
			inner = append(inner, ctr.Lo+port-host.Lo)
		}
	}
	if hostSide != nil {
		at := v.Path()
		for _, k := range []string{"http", "tcp"} {
			if w := v.Get(k); w != nil {
				at = jsontree.Child(w.Path(), "port")
			}
		}
		d.errf(at, RuleProbePort, "port %d is the host side of PublishPort=%s (%s): a probe names the container's port, and syslet finds where it is published; use %d", port, hostSide.Text, hostSide.Path, inner[0])
	}
}

// portRange is a range of ports (unit.PortRange).
type portRange = unit.PortRange

// publishedPorts reads a PublishPort= value into its host and container
// port ranges (host zero when podman picks one). ok is false for what is
// not TCP or does not read.
func publishedPorts(v string) (host, ctr portRange, ok bool) {
	p, err := unit.ParsePublishPort(v)
	if err != nil || (p.Proto != "" && p.Proto != "tcp") {
		return host, ctr, false
	}
	return p.Host, p.Container, true
}
