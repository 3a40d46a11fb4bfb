package plan

import (
	"fmt"
	"strings"
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

// KnownResources lists the podman objects the units of a rendered set
// manage that outlive their services (volumes, networks, the images of
// builds and image units), by unit file.
func KnownResources(out *render.Output) map[string]Managed {
	m := map[string]Managed{}
	for _, u := range out.Units {
		if outlives(u.Kind) {
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

// What is carried (CarryForward's switch): the ops whose need cannot be
// read back from the host's files once the files are written — systemd has
// not loaded new unit files, a swapped config dir was not reloaded, a start
// or a oneshot run never happened, a podman object whose unit is already
// gone was not deleted, a volume was not filled from its backup.
// Everything else (pulls, writes, prunes, secrets, stops) is planned again
// from the host anyway — but for the stops of a run that was filling a
// volume (fill.go): the specs do not say the volume's users must stop, the
// fill does.

// deletedObject is the podman object each delete op deletes (deleteOp
// read backwards).
var deletedObject = func() map[Op]string {
	m := map[Op]string{}
	for obj, op := range deleteOp {
		m[op] = obj
	}
	return m
}()

// makers names the kinds of unit whose podman object of that kind
// outlives them, as a sentence says it: "a volume", "an image or build".
func makers(object string) string {
	var names []string
	for _, k := range unit.Kinds {
		if k.Object == object && outlives(spec.Kind(k.Name)) {
			names = append(names, k.Name)
		}
	}
	s := strings.Join(names, " or ")
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

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
// started holds, for the services it started or restarted, when systemd
// last started each one: a oneshot that started after the earlier run
// began has run (or is running) and is not run again, and a container
// restarted since was restarted. It returns nil when nothing was carried.
func CarryForward(p *Plan, out *render.Output, obs *Observed, u *Unfinished, started map[string]time.Time) *Resume {
	if u == nil {
		return nil
	}
	c := &carrier{p: p, obs: obs, u: u, started: started, byService: map[string]*render.Unit{}, byFile: map[string]*render.Unit{},
		has: map[Op]map[string]bool{}, written: map[string]string{}, filling: map[string]bool{}, why: fmt.Sprintf("previous run %s did not finish", u.Run)}
	for _, du := range out.Units {
		c.byService[du.Service] = du
		c.byFile[du.FileName] = du
	}
	for _, a := range p.Actions {
		c.mark(a)
	}
	for _, a := range u.Actions {
		switch a.Op {
		case OpWriteUnit:
			c.written[a.Unit] = a.Data().Digest
		case OpImportVolume:
			c.filling[a.Target] = true
		}
	}
	for _, a := range u.Actions {
		switch a.Op {
		case OpDaemonReload:
			c.carry(Action{Op: OpDaemonReload, Target: a.Target}, 0)
		case OpReload:
			c.reload(a)
		case OpStart:
			c.start(a)
		case OpRestart:
			c.restart(a)
		case OpStop:
			c.stop(a)
		case OpCreateVolume, OpImportVolume:
			c.fill(a)
		case OpDeleteVolume, OpDeleteNetwork, OpDeleteImage:
			c.delete(a)
		}
	}
	sortActions(p.Actions)
	r := &Resume{Run: u.Run, Unfinished: len(u.Actions), Carried: c.n, PutBack: u.PutBack}
	for _, a := range u.Actions {
		if c.has[a.Op][a.Target] {
			r.Resumed++
		}
	}
	return r
}

// carrier is one CarryForward: the plan it adds to, what the earlier run
// left, and the specs' units by service and by file.
type carrier struct {
	p         *Plan
	obs       *Observed
	u         *Unfinished
	started   map[string]time.Time
	byService map[string]*render.Unit
	byFile    map[string]*render.Unit
	// has marks the plan's actions by op and target; written holds, by
	// unit file, the digest the earlier run was writing; filling the
	// volumes it was filling from a backup (fill.go), whose fill is
	// carried whole.
	has     map[Op]map[string]bool
	written map[string]string
	filling map[string]bool
	why     string
	n       int // actions carried
}

func (c *carrier) mark(a Action) {
	if c.has[a.Op] == nil {
		c.has[a.Op] = map[string]bool{}
	}
	c.has[a.Op][a.Target] = true
}

// carry adds a to the plan unless it holds one like it already.
func (c *carrier) carry(a Action, rank int) {
	if c.has[a.Op][a.Target] {
		return
	}
	a.Reason, a.Carried = c.why, true // carried actions hold no payload but what the op needs
	c.mark(a)
	a.Step, a.rank = StepOf(a.Op), int32(rank)
	c.p.Actions = append(c.p.Actions, a)
	c.n++
}

// reload carries a config dir's reload, unless the container is gone, no
// longer runs, or starts afresh anyway.
func (c *carrier) reload(a Action) {
	du := c.byService[a.Target]
	if du == nil || du.Kind != spec.Container || du.State != spec.Running || c.has[OpStart][a.Target] {
		return
	}
	c.carry(Action{Op: OpReload, Target: a.Target, Unit: du.FileName}, kindRank(du.Kind))
}

// start carries a start the specs still want.
func (c *carrier) start(a Action) {
	du := c.byService[a.Target]
	if du == nil || (du.Kind == spec.Container && du.State == spec.Stopped) {
		return
	}
	if du.Kind == spec.Container && du.State == spec.Oneshot {
		if t, ok := c.started[a.Target]; ok && !t.Before(c.u.Started) {
			return // systemd ran it for the earlier run
		}
	}
	if du.Kind == spec.Container && du.State == spec.Running && c.obs.Units[a.Target].Active() && !c.has[OpStop][a.Target] {
		return // already up: systemd finished the start the earlier run asked for
	}
	// Still activating (or stopping): the start the earlier run queued has
	// not finished, so this run starts it again — the job joins the one in
	// systemd — and its health gate judges it.
	c.carry(Action{Op: OpStart, Target: a.Target, Unit: du.FileName}, kindRank(du.Kind))
}

// restart carries the restart of a socket-held container the specs still
// run, unless systemd started it after the earlier run began (the restart
// happened; its journal line did not) or this plan starts, stops or
// restarts it anyway. Not carried, it would be lost: the unit files the
// earlier run wrote are the specs' already, so nothing else would restart
// the container that still runs the old ones.
func (c *carrier) restart(a Action) {
	du := c.byService[a.Target]
	if du == nil || du.Kind != spec.Container || du.State != spec.Running || c.has[OpStart][a.Target] || c.has[OpStop][a.Target] {
		return
	}
	if t, ok := c.started[a.Target]; ok && !t.Before(c.u.Started) {
		return
	}
	c.carry(Action{Op: OpRestart, Target: a.Target, Unit: du.FileName}, kindRank(du.Kind))
}

// stop carries the stop of a volume's user when the earlier run was
// filling a volume: the specs do not say it must stop, the fill does.
// Any other stop is planned again from the host.
func (c *carrier) stop(a Action) {
	if len(c.filling) == 0 {
		return
	}
	rank := kindRank(spec.Container)
	if du := c.byService[a.Target]; du != nil {
		rank = kindRank(du.Kind)
	}
	c.carry(Action{Op: OpStop, Target: a.Target, Unit: a.Unit}, rank)
}

// fill carries a volume's creation, through its service when the specs
// declare its unit, and the import of its backup: into the volume as the
// earlier run left it, freshly created or holding part of this same
// backup, which the import writes again whole, file by file.
func (c *carrier) fill(a Action) {
	var pl *Payload
	switch du := c.byFile[a.Unit]; {
	case a.Op == OpImportVolume:
		pl = &Payload{Backup: a.Data().Backup, Digest: a.Data().Digest}
	case du != nil && du.Kind == spec.Volume:
		pl = &Payload{Service: du.Service}
	}
	c.carry(Action{Op: a.Op, Target: a.Target, Unit: a.Unit, Payload: pl}, kindRank(spec.Volume))
}

// delete carries a delete of a podman object. Only what syslet manages is
// ever deleted on the journal's word, and only as its marker allows: the
// installed unit the delete names must carry syslet's marker, name that
// very object and allow its deletion (a recreate the earlier run was
// making); or, when the earlier run already removed that unit, the last
// good generation's rendering of it must. A corrupted or forged journal
// line naming any other volume, network or image deletes nothing. A
// fill's delete of a volume goes on: the volume is exported first, and
// filled again after.
func (c *carrier) delete(a Action) {
	if a.Op == OpDeleteVolume && c.filling[a.Target] && !a.Data().NoBackup {
		c.carry(Action{Op: a.Op, Target: a.Target, Unit: a.Unit}, kindRank(spec.Volume))
		return
	}
	object := deletedObject[a.Op]
	if iu := installedFor(c.obs, a.Unit); iu != nil {
		du := c.byFile[a.Unit]
		switch {
		case !iu.managed || !iu.parses || iu.kind.Quadlet().Object != object || iu.resourceName() != a.Target || !iu.reclaimDelete() || !iu.removalAllowed():
			c.leftAlone(a, "the installed unit "+a.Unit+" is not "+makers(object)+" unit of syslet's naming it with ReclaimPolicy=Delete")
		case du != nil && c.written[a.Unit] != "" && contentDigest(du.Bytes()) == c.written[a.Unit]:
			// A recreate: the specs still want the unit the earlier run
			// wrote, so the old object must still go.
			c.carry(Action{Op: a.Op, Target: a.Target, Unit: a.Unit, Payload: carriedNoBackup(a)}, 0)
		}
		return
	}
	if m, ok := c.u.Managed[a.Unit]; ok && outlives(m.Kind) && m.Kind.Quadlet().Object == object && m.Name == a.Target && m.Deletable && c.byFile[a.Unit] == nil {
		// The unit was removed by the earlier run; its object goes as the
		// marker syslet wrote for it said.
		c.carry(Action{Op: a.Op, Target: a.Target, Unit: a.Unit, Payload: carriedNoBackup(a)}, 0)
		return
	}
	c.leftAlone(a, "no unit carrying syslet's marker names it, installed or in the last good generation")
}

// leftAlone notes a delete the journal asks for that is not carried.
func (c *carrier) leftAlone(a Action, because string) {
	who := a.Unit
	if who == "" {
		who = "run " + c.u.Run
	}
	c.p.Notes = append(c.p.Notes, Note{Unit: who, Message: fmt.Sprintf("previous run %s meant to delete %s %s, but %s: nothing shows it is syslet's to delete, so it is left alone (delete it by hand if it should go)",
		c.u.Run, deletedObject[a.Op], a.Target, because)})
}

// carriedNoBackup keeps, on a volume's delete carried forward, what the
// earlier run planned: no export when its marker said Backup=false.
func carriedNoBackup(a Action) *Payload {
	if a.Op == OpDeleteVolume && a.Data().NoBackup {
		return &Payload{NoBackup: true}
	}
	return nil
}
