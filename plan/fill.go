package plan

import (
	"slices"

	"github.com/syslet/syslet/pkg/spec"
)

// Filling a volume from one of its backups: `syslet restore`, and the
// rollback after a failed gate for each volume the failed run deleted. It
// is executor work in the nine steps like any other change, journalled and
// resumed as they are: the services of the containers mounting the volume
// stop in step 2, with the volume's own service (its start creates the
// volume again); step 6 exports what the volume holds now into a backup of
// its own and removes it, as every delete of a volume does; step 9 creates
// it again — by starting its quadlet service, which gives it its unit's
// options, or with podman's defaults when systemd has none — imports the
// backup into it, and only then starts the services that ran (Op.Fills).
// A run stopped anywhere in between is finished by the next one
// (resume.go carries a fill forward whole).

// Fill is one volume to fill from a backup, with what the host says of it
// (the caller reads it: Build reads no host).
type Fill struct {
	Volume string
	// Backup is the backup's file name in the store (pkg/backup); Digest
	// its sha256 when it is known (the import then checks it).
	Backup, Digest string
	// Unit and Service are the volume's quadlet unit file and its service,
	// when systemd has one; without, the volume is created with podman's
	// defaults.
	Unit, Service string
	// ServiceActive: the volume's service is active, so it is stopped
	// first and its start creates the volume again.
	ServiceActive bool
	// Exists: the volume exists now. What it holds is exported into a
	// backup of its own before it is removed: nothing is lost by a fill.
	Exists bool
	// Users are the services of the containers that mount the volume,
	// stopped before it is removed; Running those of them that run now,
	// started again once it is filled (unless the plan removes them or
	// leaves them stopped).
	Users, Running []string
}

// AddFill adds to p what filling f's volume takes, each action once (a
// rollback's plan may stop and start a user already), and puts the
// actions in their order again.
func (p *Plan) AddFill(f Fill) {
	has := map[Op]map[string]bool{}
	for _, a := range p.Actions {
		if has[a.Op] == nil {
			has[a.Op] = map[string]bool{}
		}
		has[a.Op][a.Target] = true
	}
	add := func(a Action, k spec.Kind) {
		if has[a.Op][a.Target] {
			return
		}
		a.Step, a.rank, a.Irreversible = StepOf(a.Op), int32(kindRank(k)), irreversible[a.Op]
		p.Actions = append(p.Actions, a)
	}
	filled := "volume " + f.Volume + ", filled from backup " + f.Backup
	// A user the plan restarts behind its socket is stopped for the fill
	// and started after it instead: its restart would not wait for it.
	p.Actions = slices.DeleteFunc(p.Actions, func(a Action) bool { return a.Op == OpRestart && slices.Contains(f.Users, a.Target) })
	for _, s := range f.Users {
		add(Action{Op: OpStop, Target: s, Reason: "it mounts " + filled}, spec.Container)
	}
	if f.ServiceActive {
		add(Action{Op: OpStop, Target: f.Service, Unit: f.Unit, Reason: "its start creates volume " + f.Volume + " again"}, spec.Volume)
	}
	if f.Exists {
		add(Action{Op: OpDeleteVolume, Target: f.Volume, Unit: f.Unit, Reason: "exported and removed: " + filled}, spec.Volume)
	}
	create := Action{Op: OpCreateVolume, Target: f.Volume, Unit: f.Unit, Reason: "with podman's defaults (systemd has no unit of it)"}
	if f.Service != "" {
		create.Payload, create.Reason = &Payload{Service: f.Service}, "through "+f.Service
		// The create is the service's start.
		p.Actions = slices.DeleteFunc(p.Actions, func(a Action) bool { return a.Op == OpStart && a.Target == f.Service })
	}
	add(create, spec.Volume)
	add(Action{Op: OpImportVolume, Target: f.Volume, Unit: f.Unit, Payload: &Payload{Backup: f.Backup, Digest: f.Digest}, Reason: "backup " + f.Backup}, spec.Volume)
	for _, s := range f.Running {
		if !p.leavesDown(s) {
			add(Action{Op: OpStart, Target: s, Reason: "it mounts " + filled}, spec.Container)
		}
	}
	sortActions(p.Actions)
}

// leavesDown reports whether the plan removes the service's unit or
// leaves it stopped.
func (p *Plan) leavesDown(service string) bool {
	return slices.ContainsFunc(p.Units, func(u UnitChange) bool {
		return u.Service == service && (u.Effect == EffectRemove || u.Effect == EffectStop)
	})
}
