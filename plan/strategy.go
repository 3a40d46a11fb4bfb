package plan

import (
	"github.com/syslet/syslet/render"
)

// Replacement strategies. When a change must replace a container that
// runs (its effect is a restart), how it is replaced is decided here,
// once per container (replacement), and carried in the plan with its
// reason (UnitChange.Replacement): --diff draws it, the plan's JSON holds
// it, the actions of service (units.go) follow from it, and the run says
// what became of it (executor.Result.Replaced).
//
// A strategy never changes what a container runs, only how the old
// process makes way for the new one:
//
//   - socket-held: systemd holds the container's listening sockets (the
//     spec's socket: NAME.socket beside the quadlet) across a restart in
//     step 9, after the daemon-reload. Connections that arrive meanwhile
//     wait in the socket's backlog and are answered by the new container;
//     none is refused. Not a stop in step 2: a connection arriving
//     between that stop and the daemon-reload would make systemd start
//     the old unit again.
//   - start-first: the new container starts beside the old one behind
//     syslet's proxy, is probed ready, takes the traffic, and the old one
//     drains (issue 53's second part; not decided by this plan yet).
//   - stop-start: stopped in step 2, started in step 9, as a container
//     without either always was: its port refuses connections between
//     the two.
type Strategy string

const (
	StrategySocketHeld Strategy = "socket-held"
	StrategyStartFirst Strategy = "start-first"
	StrategyStopStart  Strategy = "stop-start"
)

// Replacement is how the plan replaces one running container, and why
// that way.
type Replacement struct {
	Strategy Strategy `json:"strategy"`
	// Reason says why this strategy and not a gentler one, for people:
	// "no socket, no probe", "the socket web.socket changes, so it
	// closes with its container".
	Reason string `json:"reason"`
	// Socket is the socket unit that holds the container's port
	// (socket-held), or that closes with it (a stop-start of a container
	// that has one).
	Socket string `json:"socket,omitempty"`
}

// String is the replacement as a plan shows it beside its container:
// "replaced: socket held (web.socket)", "stop-start: no socket, no
// probe".
func (r Replacement) String() string {
	switch r.Strategy {
	case StrategySocketHeld:
		return "replaced: socket held (" + r.Socket + ")"
	case StrategyStartFirst:
		return "replaced: start-first (" + r.Reason + ")"
	}
	return string(r.Strategy) + ": " + r.Reason
}

// Closes reports whether the replacement closes the container's socket
// for a while (a stop-start of a container that has one).
func (r Replacement) Closes() bool { return r.Strategy == StrategyStopStart && r.Socket != "" }

// replacement decides how the running container u is replaced, given why
// its service changes: the one place a strategy is chosen. The order of
// the cases is the order of preference.
func replacement(u *render.Unit, why causes) *Replacement {
	// Start-first (issue 53, part 2) is decided here, before the socket:
	// a container behind syslet's proxy, with a readiness probe.
	if u.Socket == nil {
		return &Replacement{Strategy: StrategyStopStart, Reason: "no socket, no probe"}
	}
	name := u.Socket.Name
	switch {
	case why.socket != "":
		// The socket unit itself is new, changed or not listening: systemd
		// takes a socket's new settings only when it is opened again, and
		// it cannot be started while its service runs.
		return &Replacement{Strategy: StrategyStopStart, Socket: name, Reason: why.socket + ", so it closes with its container (stopped in step 2, started in step 9)"}
	case why.down != "":
		return &Replacement{Strategy: StrategyStopStart, Socket: name, Reason: why.down + ", which needs the container down before step 9; its socket closes with it"}
	}
	return &Replacement{Strategy: StrategySocketHeld, Socket: name, Reason: name + " holds the listening socket across the restart"}
}
