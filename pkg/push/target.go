package push

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// ErrTarget is wrapped by every error about a target argument.
var ErrTarget = errors.New("invalid target")

// Target is one host to deploy to, resolved to what is dialed.
type Target struct {
	// Arg is the argument as given on the command line; results and
	// output lines are labelled with it.
	Arg string
	// Alias is the host part of Arg: the ssh_config Host it is looked up
	// under and the name of its directory in a hosts dir.
	Alias string
	// User, HostName and Port are what is dialed: the argument's own
	// values first, then ssh_config's, then the defaults (the local user,
	// the alias, 22).
	User     string
	HostName string
	Port     int
	// IdentityFiles are key files named by ssh_config for this host
	// (tilde-expanded). Missing ones are skipped, as ssh does.
	IdentityFiles []string
}

// Addr is the host:port dialed and checked against known_hosts.
func (t Target) Addr() string { return net.JoinHostPort(t.HostName, strconv.Itoa(t.Port)) }

// ParseTarget splits `[user@]host[:port]`. An IPv6 address takes brackets
// when it has a port (`[::1]:2222`); without one it may be bare.
func ParseTarget(arg string) (user, host string, port int, err error) {
	rest := arg
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		user, rest = rest[:i], rest[i+1:]
		if user == "" {
			return "", "", 0, fmt.Errorf("%w %q: empty user before @", ErrTarget, arg)
		}
	}
	portStr, hasPort := "", false
	switch {
	case strings.HasPrefix(rest, "["):
		end := strings.Index(rest, "]")
		if end < 0 {
			return "", "", 0, fmt.Errorf("%w %q: missing ]", ErrTarget, arg)
		}
		host = rest[1:end]
		tail := rest[end+1:]
		if tail != "" {
			p, ok := strings.CutPrefix(tail, ":")
			if !ok {
				return "", "", 0, fmt.Errorf("%w %q: unexpected %q after ]", ErrTarget, arg, tail)
			}
			portStr, hasPort = p, true
		}
	case strings.Count(rest, ":") == 1:
		host, portStr, hasPort = strings.Cut(rest, ":")
	default: // a name, an IPv4 address or a bare IPv6 address
		host = rest
	}
	if host == "" {
		return "", "", 0, fmt.Errorf("%w %q: empty host", ErrTarget, arg)
	}
	if strings.ContainsAny(host, " \t/\\") {
		return "", "", 0, fmt.Errorf("%w %q: bad host %q", ErrTarget, arg, host)
	}
	if hasPort {
		p, err := strconv.Atoi(portStr)
		if err != nil || p < 1 || p > 65535 {
			return "", "", 0, fmt.Errorf("%w %q: port %q is not a number from 1 to 65535", ErrTarget, arg, portStr)
		}
		port = p
	}
	return user, host, port, nil
}
