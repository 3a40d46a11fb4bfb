package render

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
