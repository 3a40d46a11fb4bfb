package spec

import (
	"slices"
	"strconv"
	"strings"

	"github.com/syslet/syslet/pkg/spec/internal/jsontree"
	"github.com/syslet/syslet/pkg/unit"
)

// A container's socket: the listening sockets systemd holds for it, a
// plain systemd NAME.socket beside the quadlet (quadlet has no socket
// type). Written as sections like unit: {"Socket": {"ListenStream":
// "0.0.0.0:8080"}}. systemd keeps the sockets open across a restart of
// the container, so a deploy refuses no connection (docs: the socket
// field's reference).

// Socket is a container spec's socket unit as the user wrote it.
type Socket struct {
	Sections []Section `json:"sections"`
	Path     string    `json:"-"` // JSON path of the socket field
}

// socketKeys are the keys a socket may set, by section: what says where
// and how the sockets listen. Everything else is refused rather than
// passed on: Service= (the socket activates the container's own service
// by name), Accept= (a service per connection: a container takes the
// listening socket), the Exec*= hooks, and the keys of sockets that are
// not streams, datagrams or sequential packets.
var socketKeys = map[string][]string{
	unit.Unit: {"Description", "Documentation"},
	"Socket": {"ListenStream", "ListenDatagram", "ListenSequentialPacket", "BindIPv6Only", "Backlog", "BindToDevice",
		"SocketUser", "SocketGroup", "SocketMode", "DirectoryMode", "KeepAlive", "KeepAliveTimeSec", "KeepAliveIntervalSec",
		"KeepAliveProbes", "NoDelay", "Priority", "DeferAcceptSec", "ReceiveBuffer", "SendBuffer", "IPTOS", "IPTTL", "Mark",
		"ReusePort", "FreeBind", "Transparent", "Broadcast", "PassCredentials", "PassSecurity", "FileDescriptorName",
		"RemoveOnStop", "Symlinks", "Timestamping", "TCPCongestion"},
}

// listenKeys are the keys that open a socket: a socket needs one.
var listenKeys = []string{"ListenStream", "ListenDatagram", "ListenSequentialPacket"}

// socket decodes a container's socket field and checks it against the
// rest of the spec: one service for it to activate (no template), a
// container that runs, and no port the container also publishes.
func (d *decoder) socket(v *jsontree.Node, s *Spec) {
	if v.Kind != jsontree.Object {
		d.errf(v.Path(), RuleFieldType, "socket must be an object of sections, as unit ({\"Socket\": {\"ListenStream\": \"0.0.0.0:8080\"}}), got %s", v.Kind)
		return
	}
	sock := &Socket{Path: v.Path()}
	ok := true
	for i, name := range v.Keys {
		sv := v.Vals[i]
		keys, known := socketKeys[name]
		switch {
		case !known:
			d.errf(sv.Path(), RuleSocket, "section [%s] is not valid in a socket (allowed: Unit, Socket); syslet writes [Install] itself", name)
			ok = false
			continue
		case sv.Kind != jsontree.Object:
			d.errf(sv.Path(), RuleFieldType, "section [%s] must be an object of keys, got %s", name, sv.Kind)
			ok = false
			continue
		}
		sec := Section{Name: name, Path: sv.Path()}
		for j, key := range sv.Keys {
			e, good := d.socketEntry(name, key, keys, sv.Vals[j])
			ok = ok && good
			if good {
				sec.Entries = append(sec.Entries, e)
			}
		}
		sock.Sections = append(sock.Sections, sec)
	}
	listens := sock.values(listenKeys...)
	switch {
	case ok && len(listens) == 0:
		d.errf(v.Path(), RuleSocket, "socket listens nowhere: give [Socket] a ListenStream (\"0.0.0.0:8080\", \"[::]:8080\", \"/run/web.sock\"), ListenDatagram or ListenSequentialPacket")
		ok = false
	case s.Template():
		d.errf(v.Path(), RuleSocket, "a template's instances cannot share one socket: socket is for a container without instances")
		ok = false
	case s.DesiredState != Running:
		d.errf(v.Path(), RuleSocket, "socket needs desiredState running: a connection to a %s container's socket would start it", s.DesiredState)
		ok = false
	}
	if !ok {
		return
	}
	for _, l := range listens {
		if why := listenProblem(l.Text); why != "" {
			d.errf(l.Path, RuleSocket, "%s", why)
			ok = false
		}
	}
	// A port the container publishes as well is bound twice: the container
	// would fail to start, or the two would split the connections.
	for _, l := range sock.values("ListenStream") {
		port, err := strconv.Atoi(listenPort(l.Text))
		if err != nil {
			continue
		}
		for _, p := range s.Values(unit.Container, "PublishPort") {
			if pub, perr := unit.ParsePublishPort(p.Text); perr == nil && (pub.Proto == "" || pub.Proto == "tcp") && pub.Host.Has(port) {
				d.errf(l.Path, RuleSocket, "ListenStream %s takes port %d, which the container also publishes (%s, PublishPort %q): remove that PublishPort, the socket serves the port", l.Text, port, p.Path, p.Text)
				ok = false
			}
		}
	}
	if ok {
		s.Socket = sock
	}
}

// socketEntry reads one key of a socket section: a string, or a list of
// strings (one line each).
func (d *decoder) socketEntry(section, key string, allowed []string, v *jsontree.Node) (Entry, bool) {
	switch {
	case hasControl(key) || !isWord(key, false):
		d.errf(v.Path(), RuleKeyName, "key %q is not a valid unit key name", key)
		return Entry{}, false
	case key == "Service":
		d.errf(v.Path(), RuleSocket, "[Socket] Service cannot be set: the socket activates the container's own service")
		return Entry{}, false
	case key == "Accept":
		d.errf(v.Path(), RuleSocket, "[Socket] Accept cannot be set: Accept=yes starts a service per connection, and the container takes the listening socket itself")
		return Entry{}, false
	case !slices.Contains(allowed, key):
		d.errf(v.Path(), RuleSocket, "[%s] %s is not a key a socket may set here (allowed: %s)", section, key, strings.Join(allowed, ", "))
		return Entry{}, false
	}
	e := Entry{Key: key, Path: v.Path()}
	items := []*jsontree.Node{v}
	if v.Kind == jsontree.Array {
		items = v.Items
	}
	ok := true
	for _, it := range items {
		switch {
		case it.Kind != jsontree.String:
			d.errf(it.Path(), RuleFieldType, "%s takes a string or a list of strings, got %s", key, it.Kind)
			ok = false
		case it.Text == "":
			d.errf(it.Path(), RuleRequired, "%s must not be empty", key)
			ok = false
		case hasControl(it.Text):
			d.errf(it.Path(), RuleControlChar, "%s value contains a newline or other control character; a unit value is one line", key)
			ok = false
		case strings.HasSuffix(it.Text, `\`):
			d.errf(it.Path(), RuleContinuation, "%s value ends in a backslash, which systemd reads as a line continuation", key)
			ok = false
		default:
			e.Lines = append(e.Lines, Value{Text: it.Text, Path: it.Path()})
		}
	}
	return e, ok
}

// values are the lines of the socket's keys, in order.
func (s *Socket) values(keys ...string) []Value {
	var out []Value
	for _, sec := range s.Sections {
		for _, e := range sec.Entries {
			if slices.Contains(keys, e.Key) {
				out = append(out, e.Lines...)
			}
		}
	}
	return out
}

// listenProblem says what is wrong with a Listen*= address, "" when
// systemd takes it: an absolute path (a unix socket), a port, or an
// address and a port (IPv6 in brackets).
func listenProblem(addr string) string {
	if strings.HasPrefix(addr, "/") || strings.HasPrefix(addr, "@") {
		return ""
	}
	if listenPort(addr) == "" {
		return "listen address " + strconv.Quote(addr) + " is not a port (8080), an address and a port (0.0.0.0:8080, [::]:8080) or an absolute path (/run/web.sock)"
	}
	return ""
}

// listenPort is the port of a network listen address ("" for a path or
// what is not one).
func listenPort(addr string) string {
	p := addr
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		host := addr[:i]
		if strings.Contains(host, ":") && !(strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]")) {
			return "" // an IPv6 address needs its brackets
		}
		p = addr[i+1:]
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return ""
	}
	return p
}

// Last returns the last value of section.key in the socket.
func (s *Socket) Last(section, key string) (Value, bool) {
	for i := len(s.Sections) - 1; i >= 0; i-- {
		if s.Sections[i].Name != section {
			continue
		}
		es := s.Sections[i].Entries
		for j := len(es) - 1; j >= 0; j-- {
			if es[j].Key == key && len(es[j].Lines) > 0 {
				return es[j].Lines[len(es[j].Lines)-1], true
			}
		}
	}
	return Value{}, false
}
