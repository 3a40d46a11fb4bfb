package proxy

import (
	"fmt"
	"hash/fnv"
	"time"
)

// Mode is how the proxy passes a site's traffic: HTTP (requests, each
// sent to a ready slot; the default) or TCP (connections).
type Mode string

const (
	HTTP Mode = "http"
	TCP  Mode = "tcp"
)

// DefaultDrain is how long a switch waits, at most, for the old slot's
// sessions to end before it stops the old slot.
const DefaultDrain = 30 * time.Second

// The two slots of a start-first container, in the order of their ports.
const (
	Blue  = "blue"
	Green = "green"
)

// Slots are the slot names, Blue first.
var Slots = [2]string{Blue, Green}

// Other is the slot that is not slot.
func Other(slot string) string {
	if slot == Blue {
		return Green
	}
	return Blue
}

// SlotName is the name of a container's slot: its unit file's base name,
// its podman container's name and its server's in the backend's
// ("web", "blue" → "web-blue").
func SlotName(name, slot string) string { return name + "-" + slot }

// Ports are the loopback ports a container's two slots publish its port
// on, Blue's first.
type Ports [2]int

// Of is the port of slot.
func (p Ports) Of(slot string) int {
	if slot == Green {
		return p[1]
	}
	return p[0]
}

// The loopback ports syslet picks for a container's slots when its spec
// names none: two ports side by side in [PortBase, PortBase+2*portPairs),
// below Linux's default ephemeral range (32768-60999), where an outgoing
// connection could hold one.
const (
	PortBase  = 20000
	portPairs = 4000
)

// DefaultPorts are the slot ports of a container named name: the same for
// that name on every host and every run, so the configuration does not
// depend on anything but the specs. Two names can draw the same pair;
// validation refuses that, and the spec then names its own (slotPorts).
func DefaultPorts(name string) Ports {
	h := fnv.New32a()
	h.Write([]byte(name))
	base := PortBase + 2*int(h.Sum32()%portPairs)
	return Ports{base, base + 1}
}

// Site is one start-first container as the proxy serves it: a frontend
// on Listen and a backend of two servers, the container's slots, on the
// loopback ports Ports.
type Site struct {
	// Name is the container's spec name: the frontend's and the backend's.
	Name   string
	Listen string
	Mode   Mode
	Ports  Ports
}

// Server is the address of a slot's server in the backend.
func (s Site) Server(slot string) string { return fmt.Sprintf("127.0.0.1:%d", s.Ports.Of(slot)) }

// Route is how a start-first container is reached through the proxy, as
// its spec's "proxy" says, every default filled in: the public address
// the proxy listens on, the container's port it forwards to, the mode,
// how long a switch drains the old slot at most, and the slots' loopback
// ports. Its JSON form is the one line the slots' [X-Syslet] marker
// records (Proxy=).
type Route struct {
	Listen string   `json:"listen"`
	Port   int      `json:"port"`
	Mode   Mode     `json:"mode"`
	Drain  Duration `json:"drain"`
	Ports  Ports    `json:"slotPorts"`
}

// Site is the route as the proxy serves the container named name.
func (r Route) Site(name string) Site {
	return Site{Name: name, Listen: r.Listen, Mode: r.Mode, Ports: r.Ports}
}

// String says the route for the plan: "0.0.0.0:80 → :8080 (http)".
func (r Route) String() string {
	return fmt.Sprintf("%s → :%d (%s)", r.Listen, r.Port, r.Mode)
}

// Duration is a time.Duration written as Go writes it ("30s").
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText writes "30s".
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads what MarshalText wrote.
func (d *Duration) UnmarshalText(b []byte) error {
	t, err := time.ParseDuration(string(b))
	*d = Duration(t)
	return err
}
