package plan

import (
	"path"
	"slices"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/probe"
	"github.com/syslet/syslet/pkg/proxy"
	"github.com/syslet/syslet/render"
)

// A start-first container renders as two slots (render's slot.go); the
// plan picks the one the host needs. Which slot is live comes from the
// proxy's saved server state (the slot its backend has ready), or, when
// the state does not tell, from the slot units installed. The live
// slot's unit file is never touched: when the container's plan in the
// live slot would change anything but its config dirs (which reload in
// place), the change goes into the other slot instead — written, started
// beside the live one, awaited until its probe says ready, switched to
// in the proxy — and the old slot is drained, stopped and its files
// removed, all in step 9 after the starts, each a journalled action the
// executor can do again (a kill anywhere is finished by the next plan,
// which reads the live slot from the host again).

// Switch is a start-first container's move from its live slot (Old) to
// the other one (New), which every action of it carries. On a first
// deploy Old is empty: the switch only readies New.
type Switch struct {
	Site         string `json:"site"`
	New          string `json:"new"`
	Old          string `json:"old,omitempty"`
	NewService   string `json:"newService"`
	NewContainer string `json:"newContainer"`
	OldService   string `json:"oldService,omitempty"`
	Port         int    `json:"port"` // the new slot's loopback port
	// Probe is the new slot's readiness probe: the switch waits until it
	// says ready (validation makes every start-first container have one).
	Probe *probe.Probe   `json:"probe,omitempty"`
	Drain proxy.Duration `json:"drain"`
	// Discard are the new slot's files that a new slot found not ready
	// has removed (its unit file, drop-ins and config files): it never
	// took a request, and the host is left as it was.
	Discard []string `json:"discard,omitempty"`
}

// The ops of a switch, in step 9, in this order after the starts.
const (
	// OpAwaitReady waits until the new slot's probe says ready; a slot
	// that is not ready is stopped and its files removed (Discard).
	OpAwaitReady Op = "await-ready"
	// OpSwitch readies the new slot in the proxy, drains the old one and
	// saves the proxy's server state.
	OpSwitch Op = "switch"
	// OpDrain waits, at most Drain, for the old slot's sessions to end,
	// then puts it in maintenance.
	OpDrain Op = "drain"
	// OpStopSlot stops the old slot; OpRemoveSlot removes one of its
	// files (its unit file, drop-in or config directory), without a
	// second daemon-reload (systemd keeps the stopped unit loaded until
	// the next one).
	OpStopSlot   Op = "stop-slot"
	OpRemoveSlot Op = "remove-slot"
)

// SwitchOps are the ops of a switch, in the order they run.
var SwitchOps = []Op{OpAwaitReady, OpSwitch, OpDrain, OpStopSlot, OpRemoveSlot}

// EffectReplace is a start-first container's change: its new slot
// replaces the live one; EffectRetire the old slot's end.
const (
	EffectReplace Effect = "replace"
	EffectRetire  Effect = "retire"
)

// slotted plans a start-first container from its blue slot's unit (the
// green one is found by name): the slot the host needs, and the switch to
// it with the end of the other when there is one.
func (in *inputs) slotted(blue *render.Unit, before *decided, secrets map[string]bool) []unitPlan {
	site := blue.Slot.Site
	units := map[string]*render.Unit{proxy.Blue: blue, proxy.Green: in.want.units[blue.Slot.Other()]}
	live := in.liveSlot(site)
	var plans []unitPlan
	target := live
	if live == "" {
		target = proxy.Blue
		plans = append(plans, in.running(units[target], before, secrets))
	} else {
		up := in.running(units[live], before, secrets)
		switch up.change.Effect {
		case EffectNone, EffectStart, EffectReload, EffectDrift, EffectIgnore:
			plans = append(plans, up)
		default:
			target = proxy.Other(live)
			nu := in.running(units[target], before, secrets)
			nu.change.Effect = EffectReplace
			nu.change.Replacement = startFirst(slotFile(site, target) + " starts beside " + slotFile(site, live) + ", takes its requests once ready, then " + slotFile(site, live) + " drains")
			nu.change.Keys = up.change.Keys
			nu.change.Reasons = append(up.change.Reasons, "start-first: "+slotFile(site, target)+" starts beside "+slotFile(site, live)+
				" and takes its requests once its probe says ready; then "+slotFile(site, live)+" is drained and removed")
			plans = append(plans, nu)
		}
	}
	in.switchTo(site, target, units[target], live, &plans)
	return plans
}

// switchTo plans the switch of site to its target slot, when one is
// due: the target is not the live slot, the other slot's unit is still
// installed (an earlier switch did not finish), or the saved state does
// not show the target ready alone (the first deploy, a state lost).
func (in *inputs) switchTo(site, target string, u *render.Unit, live string, plans *[]unitPlan) {
	other := proxy.Other(target)
	oldIU := in.have.units[slotFile(site, other)]
	ready := in.proxyState().Ready(site)
	if target == live && oldIU == nil && slices.Equal(ready, []string{target}) {
		return
	}
	up := &(*plans)[0]
	sw := &Switch{Site: site, New: target, NewService: u.Service, NewContainer: u.Container,
		Port: u.Slot.Route.Ports.Of(target), Probe: u.Probe, Drain: u.Slot.Route.Drain}
	if in.have.units[u.FileName] == nil {
		// What this run writes for the new slot, removed again when it is
		// not ready.
		sw.Discard = in.slotFiles(u.FileName, path.Base(layout.ConfigDirOf(u.Name)), true)
	}
	rank := kindRank(u.Kind)
	if oldIU != nil {
		sw.Old, sw.OldService = other, oldIU.service
	}
	up.add(Action{Op: OpAwaitReady, Target: u.Service, Unit: u.FileName, Payload: &Payload{Switch: sw}, Reason: "its probe says ready"}, rank)
	reason := "ready " + target
	if oldIU != nil {
		reason += ", drain " + other
	}
	up.add(Action{Op: OpSwitch, Target: site, Unit: u.FileName, Payload: &Payload{Switch: sw}, Reason: reason}, rank)
	if oldIU == nil {
		return
	}
	st := in.state(oldIU.service, oldIU)
	old := UnitChange{FileName: oldIU.fileName, Path: oldIU.path, Service: oldIU.service, Kind: oldIU.kind, Effect: EffectRetire,
		Replacement: startFirst("drained once the proxy sends requests to " + target), Before: beforeState(st), After: "removed", needReload: st.NeedDaemonReload}
	if other == live {
		old.Reasons = []string{"replaced by " + u.FileName + ": drained (at most " + sw.Drain.String() + "), stopped and removed once the proxy sends its requests to " + target}
	} else {
		old.Reasons = []string{"a slot an earlier run left: drained, stopped and removed"}
	}
	retire := unitPlan{change: old}
	retire.add(Action{Op: OpDrain, Target: oldIU.service, Unit: u.FileName, Payload: &Payload{Switch: sw}, Reason: "its sessions end (at most " + sw.Drain.String() + ")"}, rank)
	retire.add(Action{Op: OpStopSlot, Target: oldIU.service, Unit: u.FileName, Payload: &Payload{Switch: sw}, Reason: "replaced by " + target}, rank)
	for _, p := range in.slotFiles(oldIU.fileName, path.Base(layout.ConfigDirOf(oldIU.name)), false) {
		retire.add(Action{Op: OpRemoveSlot, Target: p, Unit: u.FileName, Payload: &Payload{Switch: sw, Root: path.Dir(p)}, Reason: "replaced by " + target}, rank)
	}
	*plans = append(*plans, retire)
}

// slotFiles are a slot's files: its unit file, its drop-in directory and
// its config directory — those the host has, or (planned) those this
// plan writes too.
func (in *inputs) slotFiles(fileName, name string, planned bool) []string {
	out := []string{layout.UnitPath(fileName)}
	for _, p := range []string{path.Join(layout.UnitDir, layout.DropInDir(fileName)), layout.ConfigDirOf(name)} {
		if _, ok := in.obs.Files[p]; ok || planned {
			out = append(out, p)
		}
	}
	return out
}

// liveSlot is the slot of site that serves now: the one the saved server
// state has ready when its unit is installed; else the only slot
// installed; else, of two, the one running (blue when both run: a switch
// the state does not show); "" when none is installed.
func (in *inputs) liveSlot(site string) string {
	installed := func(s string) bool { return in.have.units[slotFile(site, s)] != nil }
	if ready := in.proxyState().Ready(site); len(ready) == 1 && installed(ready[0]) {
		return ready[0]
	}
	var inst []string
	for _, s := range proxy.Slots {
		if installed(s) {
			inst = append(inst, s)
		}
	}
	switch len(inst) {
	case 0:
		return ""
	case 1:
		return inst[0]
	}
	if g := in.have.units[slotFile(site, proxy.Green)]; !running(in.state(g.service, g)) {
		return proxy.Blue
	}
	if b := in.have.units[slotFile(site, proxy.Blue)]; !running(in.state(b.service, b)) {
		return proxy.Green
	}
	return proxy.Blue
}

// proxyState is the proxy's saved server state as the host has it (none
// when absent or unreadable: no slot is known to be ready).
func (in *inputs) proxyState() proxy.State {
	if in.savedState == nil {
		in.savedState = proxy.State{}
		if f, ok := in.obs.Files[layout.ProxyState]; ok && f.Link == "" && f.Mode.IsRegular() {
			if st, err := proxy.ParseState(f.Data); err == nil && st != nil {
				in.savedState = st
			}
		}
	}
	return in.savedState
}

// slotFile is the unit file of a slot ("web", "blue" → web-blue.container).
func slotFile(site, slot string) string { return proxy.SlotName(site, slot) + ".container" }

// startFirst is the replacement of a slot of a start-first container.
func startFirst(reason string) *Replacement {
	return &Replacement{Strategy: StrategyStartFirst, Reason: reason}
}
