package unit

import (
	"fmt"
	"strconv"
	"strings"
)

// PortRange is an inclusive range of ports; a single port is Lo == Hi.
type PortRange struct{ Lo, Hi int }

// Has reports whether p is in the range.
func (r PortRange) Has(p int) bool { return p >= r.Lo && p <= r.Hi }

// Published is a PublishPort= value as podman reads it:
// [[IP:][HOSTPORT]:]CONTAINERPORT[/PROTOCOL], each port a port or a range
// FROM-TO, an IPv6 address in brackets.
type Published struct {
	Host      PortRange // zero when podman picks the host port
	Container PortRange
	Proto     string // "" (tcp), "tcp", "udp", "sctp"
}

// ParsePublishPort reads a PublishPort= value, and says what podman would
// refuse when the container starts: a port outside 1-65535, a range that
// runs backwards, no container port.
func ParsePublishPort(v string) (Published, error) {
	var p Published
	rest, proto, _ := strings.Cut(strings.Trim(v, `"`), "/")
	p.Proto = proto
	if strings.HasPrefix(rest, "[") { // [::1]:8080:80
		_, after, ok := strings.Cut(rest, "]:")
		if !ok {
			return p, fmt.Errorf("an IPv6 address in brackets must be followed by :PORT")
		}
		rest = "ip:" + after
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return p, fmt.Errorf("want [IP:][HOST-PORT:]CONTAINER-PORT (an IPv6 address goes in brackets)")
	}
	ctr := parts[len(parts)-1]
	if ctr == "" {
		return p, fmt.Errorf("the container port is missing")
	}
	var err error
	if p.Container, err = portRange(ctr); err != nil {
		return p, fmt.Errorf("container port %w", err)
	}
	if len(parts) >= 2 && parts[len(parts)-2] != "" {
		if p.Host, err = portRange(parts[len(parts)-2]); err != nil {
			return p, fmt.Errorf("host port %w", err)
		}
	}
	return p, nil
}

// portRange reads one port or FROM-TO range.
func portRange(s string) (PortRange, error) {
	from, to, isRange := strings.Cut(s, "-")
	lo, err := port(from)
	if err != nil || !isRange {
		return PortRange{lo, lo}, err
	}
	hi, err := port(to)
	if err != nil {
		return PortRange{}, err
	}
	if hi < lo {
		return PortRange{}, fmt.Errorf("range %s runs backwards", s)
	}
	return PortRange{lo, hi}, nil
}

func port(s string) (int, error) {
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a number", s)
	case n < 1 || n > 65535:
		return 0, fmt.Errorf("%d is out of range (1-65535)", n)
	}
	return n, nil
}
