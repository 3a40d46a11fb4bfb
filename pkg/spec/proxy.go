package spec

import (
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/syslet/syslet/pkg/proxy"
	"github.com/syslet/syslet/pkg/spec/internal/jsontree"
	"github.com/syslet/syslet/pkg/unit"
)

// A start-first container: the "proxy" object, read into a proxy.Route
// with every default filled in. Such a container runs in one of two
// slots (NAME-blue, NAME-green) behind the reverse proxy syslet manages,
// which owns its public address: a change starts the other slot, waits
// for its probe, switches the proxy to it and drains the old one. Both
// slots run at once during a switch, so nothing in the spec may hold
// what only one of them can: a fixed host port, the host's network.

var proxyFields = []string{"listen", "port", "mode", "drain", "slotPorts"}

// maxDrain bounds how long a switch may wait for the old slot's sessions.
const maxDrain = time.Hour

// minSlotPort is the lowest slot port a spec may name: below it are the
// privileged ports, for services the host runs itself.
const minSlotPort = 1024

// proxyRoute reads a container's "proxy" into s.Proxy (nil when it has
// none or it is wrong).
func (d *decoder) proxyRoute(n *jsontree.Node, s *Spec) {
	v := d.object(n, "proxy")
	if v == nil {
		return
	}
	errs := d.rep.Errors()
	d.knownFields(v, "proxy", proxyFields)
	r := &proxy.Route{Mode: proxy.HTTP, Drain: proxy.Duration(proxy.DefaultDrain), Ports: proxy.DefaultPorts(s.Name)}
	r.Listen = d.listen(v)
	r.Port = d.portNumber(v, "port", 1, "the container's port the proxy forwards to")
	if m := v.Get("mode"); m != nil {
		switch mode := proxy.Mode(d.str(v, "mode", true)); mode {
		case proxy.HTTP, proxy.TCP:
			r.Mode = mode
		case "":
		default:
			d.errf(m.Path(), RuleEnum, "mode %q is not http or tcp", mode)
		}
	}
	if dv := v.Get("drain"); dv != nil {
		t, err := time.ParseDuration(d.str(v, "drain", true))
		switch {
		case dv.Kind != jsontree.String:
		case err != nil:
			d.errf(dv.Path(), RuleProxy, "drain %q is not a duration such as \"30s\"", dv.Text)
		case t < 0 || t > maxDrain:
			d.errf(dv.Path(), RuleProxy, "drain %s is not between 0s and %s", t, maxDrain)
		default:
			r.Drain = proxy.Duration(t)
		}
	}
	if pv := v.Get("slotPorts"); pv != nil {
		if pv.Kind != jsontree.Array || len(pv.Items) != 2 {
			d.errf(pv.Path(), RuleFieldType, "slotPorts must be two port numbers, the loopback ports of the slots blue and green")
		} else {
			for i, it := range pv.Items {
				r.Ports[i] = d.portValue(it, minSlotPort, "a slot's loopback port")
			}
			if r.Ports[0] == r.Ports[1] && r.Ports[0] != 0 {
				d.errf(pv.Items[1].Path(), RuleProxy, "slotPorts names port %d twice: both slots run at once during a switch, each on its own port", r.Ports[0])
			}
		}
	}
	if n.Get("socket") != nil {
		d.errf(v.Path(), RuleProxy, "socket and proxy together: a container is socket-held (systemd holds its port) or start-first (the proxy owns its port), not both; remove one")
	}
	if n.Get("probe") == nil {
		d.errf(v.Path(), RuleProxy, "a start-first container needs a probe: the proxy switches to a new slot only once its probe says ready, and a slot never ready never takes a request")
	}
	d.proxyConflicts(v, s, r)
	if d.rep.Errors() == errs {
		s.Proxy = r
	}
}

// proxyConflicts refuses what two slots running at once, or the proxy
// reaching a slot on its loopback port, could not do.
func (d *decoder) proxyConflicts(v *jsontree.Node, s *Spec, r *proxy.Route) {
	switch {
	case s.DesiredState != Running:
		d.errf(v.Path(), RuleStateConflict, "a start-first container runs behind the proxy: desiredState must be running, not %q", s.DesiredState)
	case s.Template():
		d.errf(v.Path(), RuleProxy, "a template's instances cannot run behind the proxy yet: remove proxy, or make each instance a container of its own")
	}
	for _, nw := range containerValues(s, unit.KeyNetwork) {
		mode, _, _ := strings.Cut(nw.Text, ":")
		switch mode {
		case "host":
			d.errf(nw.Path, RuleProxy, "Network=host with proxy: both slots run at once during a switch and would bind the same ports of the host; use a podman network (the proxy reaches each slot on its loopback port)")
		case "none", "container", "ns":
			d.errf(nw.Path, RuleProxy, "Network=%s with proxy: the proxy reaches each slot on a loopback port it publishes, which needs a network of the container's own", nw.Text)
		}
	}
	if pod, ok := s.Last(unit.Container, unit.KeyPod); ok {
		d.errf(pod.Path, RuleProxy, "Pod= with proxy: a slot publishes its own loopback port, which a pod's container cannot; run it on its own")
	}
	listenPort := listenPortOf(r.Listen)
	for _, pv := range containerValues(s, unit.KeyPublishPort) {
		host, ok := hostPort(pv.Text)
		switch {
		case !ok || host == 0:
		case host == listenPort:
			d.errf(pv.Path, RuleProxyPort, "PublishPort=%s publishes port %d, where the proxy listens (proxy.listen %s): the proxy owns the public port; remove this PublishPort=", pv.Text, host, r.Listen)
		default:
			d.errf(pv.Path, RuleProxyPort, "PublishPort=%s publishes host port %d: both slots run at once during a switch, and the second could not bind it; publish it through the proxy, or let podman pick the host port (PublishPort=%s)", pv.Text, host, containerSide(pv.Text))
		}
	}
}

// listen reads proxy.listen: ADDRESS:PORT, the address an IP (IPv6 in
// brackets) or empty for every IPv4 address.
func (d *decoder) listen(v *jsontree.Node) string {
	l := d.str(v, "listen", true)
	lv := v.Get("listen")
	if l == "" || lv.Kind != jsontree.String {
		return ""
	}
	i := strings.LastIndexByte(l, ':')
	host, port := "", ""
	if i >= 0 {
		host, port = l[:i], l[i+1:]
	}
	p, err := strconv.Atoi(port)
	if h, ok := strings.CutPrefix(host, "["); ok {
		host = strings.TrimSuffix(h, "]")
		if _, perr := netip.ParseAddr(host); perr != nil || !strings.HasSuffix(h, "]") || !strings.Contains(host, ":") {
			err = strconv.ErrSyntax
		}
	} else if host != "" {
		if a, perr := netip.ParseAddr(host); perr != nil || !a.Is4() {
			err = strconv.ErrSyntax
		}
	}
	if i < 0 || err != nil || p < 1 || p > math.MaxUint16 {
		d.errf(lv.Path(), RuleProxy, "listen %q is not ADDRESS:PORT, such as \"0.0.0.0:80\", \":80\" or \"[::]:443\" (an IP address, not a host name)", l)
		return ""
	}
	return l
}

// portNumber reads a required port field of n.
func (d *decoder) portNumber(n *jsontree.Node, key string, lo int, what string) int {
	v := n.Get(key)
	if v == nil {
		d.errf(jsontree.Child(n.Path(), key), RuleRequired, "%s is required: %s", key, what)
		return 0
	}
	return d.portValue(v, lo, what)
}

// portValue reads a port number from lo to 65535.
func (d *decoder) portValue(v *jsontree.Node, lo int, what string) int {
	p, err := strconv.Atoi(v.Text)
	switch {
	case v.Kind != jsontree.Number:
		d.errf(v.Path(), RuleFieldType, "%s must be a number, got %s", what, v.Kind)
	case err != nil || p < lo || p > math.MaxUint16:
		d.errf(v.Path(), RuleProxy, "%s %s is not a port number from %d to 65535", what, v.Text, lo)
	default:
		return p
	}
	return 0
}

// knownFields refuses every field of n but allowed, naming the one meant
// when it is a near miss.
func (d *decoder) knownFields(n *jsontree.Node, what string, allowed []string) {
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

// containerValues are the [Container] values of key in the unit and its
// drop-ins, in that order.
func containerValues(s *Spec, key string) []Value {
	vs := s.Values(unit.Container, key)
	for _, di := range s.DropIns {
		for _, sec := range di.Unit {
			if sec.Name != unit.Container {
				continue
			}
			for _, e := range sec.Entries {
				if e.Key == key {
					vs = append(vs, e.Lines...)
				}
			}
		}
	}
	return vs
}

// listenPortOf is the port of a listen address syslet read.
func listenPortOf(l string) int {
	p, _ := strconv.Atoi(l[strings.LastIndexByte(l, ':')+1:])
	return p
}

// hostPort is the first host port a PublishPort= value,
// [[ip:][hostPort]:]containerPort[/protocol], binds: 0 when podman picks
// it. ok is false for what does not read.
func hostPort(v string) (int, bool) {
	v, _, _ = strings.Cut(strings.Trim(v, `"`), "/")
	if strings.HasPrefix(v, "[") {
		_, after, found := strings.Cut(v, "]:")
		if !found {
			return 0, false
		}
		v = "ip:" + after
	}
	parts := strings.Split(v, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, len(parts) == 1
	}
	hp := parts[len(parts)-2]
	if hp == "" {
		return 0, true
	}
	lo, _, _ := strings.Cut(hp, "-")
	p, err := strconv.Atoi(lo)
	return p, err == nil
}

// containerSide is the container's side of a PublishPort= value.
func containerSide(v string) string {
	v = strings.Trim(v, `"`)
	return v[strings.LastIndexByte(v, ':')+1:]
}
