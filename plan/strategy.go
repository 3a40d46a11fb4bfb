package plan

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
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
//     drains; a start-first container runs in slots, planned by
//     slots.go, which names its replacement (startFirst).
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

// strategies is the decision, a row per strategy in the order of
// preference: the first whose decide names a replacement is how the
// container is replaced (replacement). stop-start, last, always does.
var strategies = []struct {
	strategy Strategy
	decide   func(u *render.Unit, why causes) *Replacement
}{
	{StrategySocketHeld, socketHeld},
	{StrategyStopStart, stopStart},
}

// replacement decides how the running container u is replaced, given why
// its service changes: the one place a strategy is chosen.
func replacement(u *render.Unit, why causes) *Replacement {
	for _, s := range strategies {
		if r := s.decide(u, why); r != nil {
			return r
		}
	}
	return nil
}

// socketHeld: the container has a socket, and nothing this change does
// needs the socket closed or the container down before step 9.
func socketHeld(u *render.Unit, why causes) *Replacement {
	if u.Socket == nil || why.socket != "" || why.down != "" {
		return nil
	}
	return &Replacement{Strategy: StrategySocketHeld, Socket: u.Socket.Name, Reason: u.Socket.Name + " holds the listening socket across the restart"}
}

// stopStart is every other replacement, with why; a container's socket
// closes with it.
func stopStart(u *render.Unit, why causes) *Replacement {
	if u.Socket == nil {
		return &Replacement{Strategy: StrategyStopStart, Reason: "no socket, no probe"}
	}
	name := u.Socket.Name
	if why.socket != "" {
		// The socket unit itself is new or changed: systemd takes a
		// socket's new settings only when it is opened again, and a
		// container receives its descriptors only when it starts.
		return &Replacement{Strategy: StrategyStopStart, Socket: name, Reason: why.socket + ", so it closes with its container (stopped in step 2, started in step 9)"}
	}
	return &Replacement{Strategy: StrategyStopStart, Socket: name, Reason: why.down + ", which needs the container down before step 9; its socket closes with it"}
}

// replace plans the actions of a running container's replacement, as its
// strategy says: a restart in step 9 for one its socket holds; else a
// stop in step 2 (its socket's too, when the socket closes with it) and
// a start in step 9, which opens the socket again (the container wants
// it).
func (in *inputs) replace(u *render.Unit, r *Replacement, up *unitPlan) {
	rank := kindRank(u.Kind)
	reason := "restart: " + strings.Join(up.change.Reasons, "; ")
	if u.Image != "" && !in.imagePresent(u.Image) {
		up.add(Action{Op: OpPull, Target: u.Image, Unit: u.FileName, Reason: "not in the image store"}, 0)
	}
	if r.Strategy == StrategySocketHeld {
		up.add(Action{Op: OpRestart, Target: u.Service, Unit: u.FileName, Reason: reason + " (" + r.Socket + " stays open)"}, rank)
		return
	}
	if r.Closes() {
		up.add(Action{Op: OpStop, Target: r.Socket, Unit: u.FileName, Reason: "its socket closes with it: " + r.Reason}, rank)
	}
	up.add(Action{Op: OpStop, Target: u.Service, Unit: u.FileName, Reason: reason}, rank)
	up.add(Action{Op: OpStart, Target: u.Service, Unit: u.FileName, Reason: "restart"}, rank)
}

// socketChange says why a container's socket unit itself changes ("" when
// it does not): a socket new to an installed container, or a changed one.
// systemd takes a socket's new settings only when it is opened again, and
// a container receives its descriptors only when it starts. A socket file
// of the same name that syslet did not write is refused: it is the
// administrator's.
func (in *inputs) socketChange(u *render.Unit, installed bool, up *unitPlan) string {
	if u.Socket == nil {
		return ""
	}
	cur, exists := in.obs.Files[u.Socket.Path]
	switch {
	case exists && !bytes.HasPrefix(cur.Data, []byte(render.SocketHeader)):
		up.refusals = append(up.refusals, Refusal{Unit: u.FileName, Source: u.Origin.String(), Message: fmt.Sprintf(
			"%s exists and syslet did not write it: rename the socket's service (ServiceName=) or remove the file", u.Socket.Path)})
		return ""
	case !exists && installed:
		return "its socket " + u.Socket.Name + " is new"
	case exists && !cur.Holds(u.Socket.Content):
		return "its socket " + u.Socket.Name + " changes"
	}
	return ""
}

// downCause names what needs a container down before its unit files are
// written, "" when nothing does: a unit it requires is recreated or
// restarted (a network, its pod), which stops it in step 2 anyway.
func downCause(u *render.Unit, before *decided) string {
	for _, r := range u.Used().Requires {
		if rk := unit.KindOf(r); before.told[r].restarted && rk.Restarts != "" {
			return rk.RestartCause(r)
		}
	}
	return ""
}

// staleSockets stops and removes the socket units syslet wrote that no
// spec asks for any more (a container removed, or its socket field):
// stopped in step 2 with their container, their file removed in step 5.
// A socket unit syslet did not write is never touched.
func (in *inputs) staleSockets() part {
	wanted := map[string]bool{}
	for _, u := range in.out.Units {
		if u.Socket != nil {
			wanted[u.Socket.Path] = true
		}
	}
	var pt part
	var stale []string
	for p, f := range in.obs.Files {
		if path.Dir(p) == layout.SocketDir && !wanted[p] && bytes.HasPrefix(f.Data, []byte(render.SocketHeader)) {
			stale = append(stale, p)
		}
	}
	slices.Sort(stale)
	rank := kindRank(spec.Container)
	for _, p := range stale {
		name := path.Base(p)
		pt.files = append(pt.files, FileChange{Path: p, Op: "-", Kind: render.SocketFile, OldMode: uint32(in.obs.Files[p].Mode.Perm()),
			Diff: fileDiff(p, in.obs.Files[p], true, 0, nil, false)})
		pt.add(Action{Op: OpStop, Target: name, Reason: "no spec asks for the socket any more"}, rank)
		pt.add(Action{Op: OpRemoveFile, Target: p, Payload: &Payload{Root: layout.SocketDir}, Reason: "no spec asks for the socket any more"}, rank)
	}
	return pt
}
