package plan

import (
	"fmt"
	"time"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/render"
)

// Unfinished is what an earlier run left undone, as its run journal tells:
// the actions of its intent that never landed.
type Unfinished struct {
	Run     string    `json:"run"`
	Started time.Time `json:"started"`
	Actions []Action  `json:"actions"` // Op, Target, Unit and Digest are set
}

// Resume is the outcome of carrying an unfinished run forward.
type Resume struct {
	Run        string `json:"run"`
	Unfinished int    `json:"unfinished"` // actions of that run that never landed
	Resumed    int    `json:"resumed"`    // of those, the ones this plan does
	Carried    int    `json:"carried"`    // of those, the ones only the journal showed
}

// carried lists the ops whose need cannot be read back from the host's
// files once the files are written: systemd has not loaded new unit files,
// a swapped config dir was not reloaded, a start or a oneshot run never
// happened, a podman object whose unit is already gone was not deleted.
// Everything else (pulls, writes, prunes, secrets, stops) is planned again
// from the host anyway.
var carried = map[Op]bool{OpDaemonReload: true, OpReload: true, OpStart: true,
	OpDeleteVolume: true, OpDeleteNetwork: true, OpDeleteImage: true}

// CarryForward adds to p the unfinished actions of an earlier run that the
// new plan does not already contain and that the current specs still want.
// started holds, for the oneshot services among them, when systemd last
// started each one: a oneshot that started after the earlier run began has
// run (or is running) and is not run again. It returns nil when nothing
// was carried.
func CarryForward(p *Plan, out *render.Output, obs *Observed, u *Unfinished, started map[string]time.Time) *Resume {
	if u == nil {
		return nil
	}
	byService := map[string]*render.Unit{}
	byFile := map[string]*render.Unit{}
	for _, du := range out.Units {
		byService[du.Service] = du
		byFile[du.FileName] = du
	}
	has := map[Op]map[string]bool{}
	for _, a := range p.Actions {
		if has[a.Op] == nil {
			has[a.Op] = map[string]bool{}
		}
		has[a.Op][a.Target] = true
	}
	written := map[string]string{} // unit file → digest the earlier run was writing
	for _, a := range u.Actions {
		if a.Op == OpWriteUnit {
			written[a.Unit] = a.Digest
		}
	}
	why := fmt.Sprintf("previous run %s did not finish", u.Run)
	n := 0
	carry := func(a Action, rank int) {
		if has[a.Op][a.Target] {
			return
		}
		a.Reason, a.Content, a.Carried = why, nil, true
		if has[a.Op] == nil {
			has[a.Op] = map[string]bool{}
		}
		has[a.Op][a.Target] = true
		a.Step, a.rank = StepOf(a.Op), rank
		p.Actions = append(p.Actions, a)
		n++
	}
	for _, a := range u.Actions {
		if !carried[a.Op] {
			continue
		}
		switch a.Op {
		case OpDaemonReload:
			carry(Action{Op: OpDaemonReload, Target: a.Target}, 0)
		case OpReload:
			du := byService[a.Target]
			if du == nil || du.Kind != spec.Container || du.State != spec.Running || has[OpStart][a.Target] {
				continue // gone, no longer running, or started afresh anyway
			}
			carry(Action{Op: OpReload, Target: a.Target, Unit: du.FileName}, kindRank(du.Kind))
		case OpStart:
			du := byService[a.Target]
			if du == nil || (du.Kind == spec.Container && du.State == spec.Stopped) {
				continue
			}
			if du.Kind == spec.Container && du.State == spec.Oneshot {
				if t, ok := started[a.Target]; ok && !t.Before(u.Started) {
					continue // systemd ran it for the earlier run
				}
			}
			if du.Kind == spec.Container && du.State == spec.Running && obs.Units[a.Target].Active() && !has[OpStop][a.Target] {
				continue // already up: systemd finished the start the earlier run asked for
			}
			// Still activating (or stopping): the start the earlier run
			// queued has not finished, so this run starts it again — the
			// job joins the one in systemd — and its health gate judges it.
			carry(Action{Op: OpStart, Target: a.Target, Unit: du.FileName}, kindRank(du.Kind))
		default: // deletes
			du := byFile[a.Unit]
			_, installed := obs.Files[layout.UnitPath(a.Unit)]
			switch {
			case du == nil && !installed:
				// The unit was removed by the earlier run; its object goes
				// as that run's reclaim policy said.
			case du != nil && written[a.Unit] != "" && contentDigest(du.File.Bytes()) == written[a.Unit]:
				// A recreate: the specs still want the unit the earlier run
				// wrote, so the old object must still go.
			default:
				continue
			}
			carry(Action{Op: a.Op, Target: a.Target, Unit: a.Unit}, 0)
		}
	}
	sortActions(p.Actions)
	r := &Resume{Run: u.Run, Unfinished: len(u.Actions), Carried: n}
	for _, a := range u.Actions {
		if has[a.Op][a.Target] {
			r.Resumed++
		}
	}
	return r
}
