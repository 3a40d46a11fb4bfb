package render

import (
	"strings"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// Socket is the socket unit a container's spec asks systemd to hold its
// listening sockets in (the spec's socket): a plain systemd unit,
// NAME.socket, beside the quadlet in layout.SocketDir, since quadlet has
// no socket type. It is the container's companion, not a unit of its
// own: rendered, sealed into the container's marker (FileDigest=, as a
// drop-in is), planned, written and removed with the container, and what
// a change to it does is decided for the container (plan's replacement
// strategies).
type Socket struct {
	Name    string `json:"name"` // web.socket
	Path    string `json:"path"` // /etc/systemd/system/web.socket
	Content []byte `json:"-"`
	// Lines are the socket's lines with their JSON paths, for the checks;
	// nil once dropped (Output.DropSpecs).
	Lines []Line `json:"-"`
}

// socketHeader opens every socket unit syslet writes, for whoever reads
// it on the host, and marks it syslet's: the plan removes a socket unit
// that says so once no spec asks for it (SocketHeader).
func socketHeader(owner string) string {
	return SocketHeader + owner + " (its [X-Syslet] marker records this file's digest).\n"
}

// SocketHeader is how every socket unit syslet writes begins.
const SocketHeader = "# Written by syslet: the socket of "

// socket renders a container's socket unit beside its quadlet, and ties
// the two together: the container wants its socket and starts after it,
// so a start of the container (step 9, a boot) opens the socket first
// and podman passes its descriptors in (LISTEN_FDS). The socket's file is
// one of the container's files: sealed into its marker, so a change to
// it changes the container.
//
// Two limits are lifted, or the socket would close itself: a connection
// that arrives while the container is down starts it (the socket
// triggers its service), and systemd fails a socket whose service hits
// its start limit or that triggers more than its trigger limit, closing
// the listening socket. A dead image being rolled back must not take the
// socket with it.
func (o *Output) socket(s *spec.Spec, b *builder) {
	u := b.u
	name := strings.TrimSuffix(unit.ServiceOf(u.FileName, u.File), ".service") + ".socket"
	b.add(unit.Unit, "Wants", name, s.Socket.Path)
	b.add(unit.Unit, "After", name, s.Socket.Path)
	b.add(unit.Unit, "StartLimitIntervalSec", "0", s.Socket.Path)
	f := &unit.File{}
	sock := &Socket{Name: name, Path: layout.SocketPath(name)}
	if _, ok := s.Socket.Last(unit.Unit, unit.KeyDescription); !ok {
		f.Add(unit.Unit, unit.KeyDescription, "socket of the "+s.Name+" container")
	}
	for _, sec := range s.Socket.Sections {
		for _, e := range sec.Entries {
			for _, v := range e.Lines {
				f.Add(sec.Name, e.Key, v.Text)
				sock.Lines = append(sock.Lines, Line{sec.Name, e.Key, v.Text, v.Path})
			}
		}
	}
	f.Add("Socket", "TriggerLimitIntervalSec", "0")
	f.Add(unit.Install, "WantedBy", "sockets.target")
	f.Add(unit.Syslet, "Owner", u.FileName)
	f.SortKeys()
	sock.Content = append([]byte(socketHeader(u.FileName)), f.Bytes()...)
	u.Socket = sock
	o.Files = append(o.Files, File{Path: sock.Path, Content: sock.Content, Mode: 0o644, Kind: SocketFile, Owner: u.FileName})
}
