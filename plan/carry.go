package plan

import (
	"fmt"

	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// A volume recreated for a changed option carries its data over: step 6
// exports it (as it exports every volume it deletes) and removes it; the
// first row of step 9 creates it again through its service, with its new
// options, and imports that export into it (an OpImportVolume naming no
// backup: the one this run took of the volume, checked by its size and
// sha256), before what mounts it starts. It is a fill (fill.go) whose
// backup the run itself takes, and resumes as one: a run stopped in
// between is finished by the next, which imports the same export, named
// by the journal. Only a volume of the local driver is carried over;
// another is refused unless the run lets its data go (--no-backup: no
// export, no import).

// recreated adds what makes a recreated unit's object again: its
// service's start or, for a volume whose data is carried over, its
// creation through that start and the import of its export.
func (in *inputs) recreated(u *render.Unit, iu *installedUnit, up *unitPlan, rank int) {
	start := Action{Op: OpStart, Target: u.Service, Unit: u.FileName, Reason: "create " + string(u.Kind) + " " + u.Resource}
	if u.Kind.Quadlet().Object != unit.ObjectVolume || noBackup(iu) != nil || in.opts.NoBackups || iu.resourceName() != u.Resource {
		// Its data goes, as its marker or the run says, or stays in the
		// backup of a volume of another name.
		up.add(start, rank)
		return
	}
	if d := driverOf(u.Kind.Quadlet().Section, iu.parsed(), u.Parsed()); d != "" {
		up.refusals = append(up.refusals, Refusal{Unit: u.FileName, Source: up.change.Source, Message: fmt.Sprintf(
			"volume %s changed (%s), which needs it deleted and created again, but its data cannot be carried over: syslet carries data over only into a volume of the local driver, and it uses driver %s; to recreate it all the same, neither exporting its data nor carrying it over, apply with --no-backup",
			u.Resource, summarizeKeys(up.change.Keys), d)})
		return
	}
	up.add(Action{Op: OpCreateVolume, Target: u.Resource, Unit: u.FileName, Payload: &Payload{Service: u.Service}, Reason: "through " + u.Service + ", with its new options"}, rank)
	up.add(Action{Op: OpImportVolume, Target: u.Resource, Unit: u.FileName, Reason: "its data carried over: the export step 6 takes of it"}, rank)
}

// driverOf is the first volume driver of the files (their section of
// the kind) that podman cannot import into ("" when each is the local
// one).
func driverOf(section string, files ...*unit.File) string {
	for _, f := range files {
		if f == nil {
			continue
		}
		if d, _ := f.Last(section, "Driver"); d != "" && d != "local" {
			return d
		}
	}
	return ""
}

// CarriesOver reports whether the plan carries volume's data over into
// it, recreated: an import of the export the run takes of it.
func (p *Plan) CarriesOver(volume string) bool {
	for i := range p.Actions {
		if a := &p.Actions[i]; a.Op == OpImportVolume && a.Target == volume && a.Data().Backup == "" {
			return true
		}
	}
	return false
}
