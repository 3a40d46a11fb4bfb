package spec_test

import (
	"strings"
	"testing"
)

// A socket is read as sections and kept on the spec.
func TestSocketIsRead(t *testing.T) {
	specs := decodeOK(t, container("web", "", `"socket": {"Socket": {"ListenStream": ["0.0.0.0:8080", "[::]:8443"], "Backlog": "512"}}`))
	s := specs[0].Socket
	if s == nil || len(s.Sections) != 1 || s.Sections[0].Name != "Socket" || len(s.Sections[0].Entries) != 2 {
		t.Fatalf("socket = %+v", s)
	}
	if v, ok := s.Last("Socket", "ListenStream"); !ok || v.Text != "[::]:8443" || v.Path != "[0].socket.Socket.ListenStream[1]" {
		t.Errorf("last ListenStream = %+v", v)
	}
}

// Bad socket input is refused where it is written, with a rule of its own,
// and names what it cannot combine with.
func TestSocketRefusals(t *testing.T) {
	tests := []struct {
		name, keys, fields, path, msg string
	}{
		{"listens nowhere", "", `"socket": {"Socket": {"Backlog": "10"}}`, "[0].socket", "listens nowhere"},
		{"not an address", "", `"socket": {"Socket": {"ListenStream": "web:http"}}`, "[0].socket.Socket.ListenStream", "is not a port"},
		{"port out of range", "", `"socket": {"Socket": {"ListenStream": "70000"}}`, "[0].socket.Socket.ListenStream", "is not a port"},
		{"service named", "", `"socket": {"Socket": {"ListenStream": "8080", "Service": "x.service"}}`, "[0].socket.Socket.Service", "activates the container's own service"},
		{"accept", "", `"socket": {"Socket": {"ListenStream": "8080", "Accept": "yes"}}`, "[0].socket.Socket.Accept", "a service per connection"},
		{"unknown key", "", `"socket": {"Socket": {"ListenStream": "8080", "ExecStartPre": "/bin/true"}}`, "[0].socket.Socket.ExecStartPre", "not a key a socket may set"},
		{"install section", "", `"socket": {"Socket": {"ListenStream": "8080"}, "Install": {"WantedBy": "x"}}`, "[0].socket.Install", "writes [Install] itself"},
		{"published too", `"PublishPort": "8080:80"`, `"socket": {"Socket": {"ListenStream": "0.0.0.0:8080"}}`, "[0].socket.Socket.ListenStream", "also publishes ([0].unit.Container.PublishPort"},
		{"stopped", "", `"desiredState": "stopped", "socket": {"Socket": {"ListenStream": "8080"}}`, "[0].socket", "desiredState running"},
		{"template", "", `"instances": ["a"], "socket": {"Socket": {"ListenStream": "8080"}}`, "[0].socket", "template's instances"},
		{"not an object", "", `"socket": "8080"`, "[0].socket", "must be an object of sections"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, rep := decode(t, container("web", tt.keys, tt.fields))
			var found bool
			for _, f := range rep.Findings {
				if f.Path == tt.path && strings.Contains(f.Message, tt.msg) && f.Source == "in.json" && f.Rule != "" {
					found = true
				}
			}
			if !found {
				t.Errorf("want a finding at %s saying %q, got:\n%s", tt.path, tt.msg, rep.String())
			}
			if len(specs) > 0 && specs[0].Socket != nil {
				t.Errorf("a refused socket is kept: %+v", specs[0].Socket)
			}
		})
	}
	// A unix socket and a published port of another number are fine.
	decodeOK(t, container("web", `"PublishPort": "127.0.0.1:9090:9090"`, `"socket": {"Socket": {"ListenStream": ["/run/web.sock", "8080"]}}`))
}
