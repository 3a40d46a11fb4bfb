package plan

import (
	"fmt"
	"time"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// Unfinished is what an earlier run left undone, as its run journal tells:
// the actions of its intent that never landed.
type Unfinished struct {
	Run     string    `json:"run"`
	Started time.Time `json:"started"`
	Actions []Action  `json:"actions"` // Op, Target, Unit and Digest are set
	// Managed is, for a delete whose unit the earlier run already removed,
	// the evidence that the object was syslet's: the volumes, networks and
	// images the units of the last good generation managed, by unit file
	// (KnownResources). The journal alone never is.
	Managed map[string]Managed `json:"-"`
	// PutBack: that run failed before step 5 and put the host back.
	PutBack bool `json:"putBack,omitempty"`
}

// Managed is a podman object a unit syslet rendered manages: its kind (the
// unit's), its name, and whether its marker let syslet delete it
// (RemovalAllowed and ReclaimPolicy=Delete).
type Managed struct {
	Kind      spec.Kind
	Name      string
	Deletable bool
}

// KnownResources lists what the volume, network and build units of a
// rendered set manage, by unit file.
func KnownResources(out *render.Output) map[string]Managed {
	m := map[string]Managed{}
	for _, u := range out.Units {
		if u.Kind == spec.Volume || u.Kind == spec.Network || u.Kind == spec.Build {
			m[u.FileName] = Managed{Kind: u.Kind, Name: u.Resource, Deletable: u.RemovalAllowed && u.ReclaimPolicy == spec.Delete}
		}
	}
	return m
}

// Resume is the outcome of carrying an unfinished run forward.
type Resume struct {
	Run        string `json:"run"`
	Unfinished int    `json:"unfinished"` // actions of that run that never landed
	Resumed    int    `json:"resumed"`    // of those, the ones this plan does
	Carried    int    `json:"carried"`    // of those, the ones only the journal showed
	// PutBack: that run failed before step 5 and put the host back, so
	// this plan makes its change again rather than finishing it.
	PutBack bool `json:"putBack,omitempty"`
}

// carried lists the ops whose need cannot be read back from the host's
// files once the files are written: systemd has not loaded new unit files,
// a swapped config dir was not reloaded, a start or a oneshot run never
// happened, a podman object whose unit is already gone was not deleted.
// Everything else (pulls, writes, prunes, secrets, stops) is planned again
// from the host anyway.
var carried = map[Op]bool{OpDaemonReload: true, OpReload: true, OpStart: true,
	OpDeleteVolume: true, OpDeleteNetwork: true, OpDeleteImage: true}

// deletedKind is the kind of podman object each delete op deletes, as
// the unit kind that manages it.
var deletedKind = map[Op]spec.Kind{OpDeleteVolume: spec.Volume, OpDeleteNetwork: spec.Network, OpDeleteImage: spec.Build}

// installedFor reads back the installed unit file of that name, or nil.
func installedFor(obs *Observed, fileName string) *installedUnit {
	p := layout.UnitPath(fileName)
	f, ok := obs.Files[p]
	base, k, isUnit := installedFile(p)
	if !ok || !isUnit || f.Mode.IsDir() || f.Link != "" || base != fileName {
		return nil
	}
	iu := &installedUnit{path: p, fileName: fileName, name: unitBase(fileName, k), kind: k, data: f.Data, perm: uint32(f.Mode.Perm())}
	if uf, err := unit.Parse(f.Data); err == nil {
		iu.file, iu.parses, iu.managed, iu.recorded = uf, true, unit.Managed(uf), recordedFiles(uf)
	}
	return iu
}

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
			written[a.Unit] = a.Data().Digest
		}
	}
	why := fmt.Sprintf("previous run %s did not finish", u.Run)
	leftAlone := func(a Action, because string) {
		who := a.Unit
		if who == "" {
			who = "run " + u.Run
		}
		p.Notes = append(p.Notes, Note{Unit: who, Message: fmt.Sprintf("previous run %s meant to delete %s %s, but %s: nothing shows it is syslet's to delete, so it is left alone (delete it by hand if it should go)",
			u.Run, deletedKind[a.Op], a.Target, because)})
	}
	n := 0
	carry := func(a Action, rank int) {
		if has[a.Op][a.Target] {
			return
		}
		a.Reason, a.Carried = why, true // carried actions hold no payload but a delete's NoBackup
		if has[a.Op] == nil {
			has[a.Op] = map[string]bool{}
		}
		has[a.Op][a.Target] = true
		a.Step, a.rank = StepOf(a.Op), int32(rank)
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
			// Only what syslet manages is ever deleted on the journal's
			// word, and only as its marker allows: the installed unit the
			// delete names must carry syslet's marker, name that very
			// object and allow its deletion (a recreate the earlier run
			// was making); or, when the earlier run already removed that
			// unit, the last good generation's rendering of it must. A
			// corrupted or forged journal line naming any other volume,
			// network or image deletes nothing.
			kind := deletedKind[a.Op]
			if iu := installedFor(obs, a.Unit); iu != nil {
				du := byFile[a.Unit]
				switch {
				case !iu.managed || !iu.parses || iu.kind != kind || iu.resourceName() != a.Target || !iu.reclaimDelete() || !iu.removalAllowed():
					leftAlone(a, "the installed unit "+a.Unit+" is not a "+string(kind)+" unit of syslet's naming it with ReclaimPolicy=Delete")
				case du != nil && written[a.Unit] != "" && contentDigest(du.Bytes()) == written[a.Unit]:
					// A recreate: the specs still want the unit the earlier
					// run wrote, so the old object must still go.
					carry(Action{Op: a.Op, Target: a.Target, Unit: a.Unit, Payload: carriedNoBackup(a)}, 0)
				}
				continue
			}
			if m, ok := u.Managed[a.Unit]; ok && m.Kind == kind && m.Name == a.Target && m.Deletable && byFile[a.Unit] == nil {
				// The unit was removed by the earlier run; its object goes
				// as the marker syslet wrote for it said.
				carry(Action{Op: a.Op, Target: a.Target, Unit: a.Unit, Payload: carriedNoBackup(a)}, 0)
				continue
			}
			leftAlone(a, "no unit carrying syslet's marker names it, installed or in the last good generation")
		}
	}
	sortActions(p.Actions)
	r := &Resume{Run: u.Run, Unfinished: len(u.Actions), Carried: n, PutBack: u.PutBack}
	for _, a := range u.Actions {
		if has[a.Op][a.Target] {
			r.Resumed++
		}
	}
	return r
}

// carriedNoBackup keeps, on a volume's delete carried forward, what the
// earlier run planned: no export when its marker said Backup=false.
func carriedNoBackup(a Action) *Payload {
	if a.Op == OpDeleteVolume && a.Data().NoBackup {
		return &Payload{NoBackup: true}
	}
	return nil
}
