package plan

import (
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// Image units and artifacts. An image unit's image is pulled by the
// apply's first step, like a container's registry image, so that a new
// image is in the store before anything stops: podman's pull API pulls
// its Image= with the unit's [Image] settings (render.Unit.Pull). A unit
// using keys the API does not take (Creds=, CertDir=, …) is pulled by its
// own service, which the start step runs before the containers that
// require it. A changed unit is pulled again and its service run again;
// the containers that run or mount its image restart, as they do when a
// .build rebuilds theirs. Artifacts (podman 5.7 and later) are pulled by
// their service alone.

// pullUnit plans the pull step for an image unit into its plan; false
// when its service must pull it.
func pullUnit(u *render.Unit, why string, up *unitPlan) bool {
	if u.Pull == nil || u.Image == "" {
		return false
	}
	up.add(Action{Op: OpPull, Target: u.Image, Unit: u.FileName, Payload: &Payload{Pull: u.Pull}, Reason: why}, 0)
	return true
}

// pulled plans an image unit or artifact that already exists: pulled
// again when its unit changed (its users restart) or its image is gone
// from the store (they do not).
func (in *inputs) pulled(u *render.Unit, iu *installedUnit, up *unitPlan, changed, meta bool) {
	rank := kindRank(u.Kind)
	st := in.state(u.Service, iu)
	missing := u.Kind.Quadlet().Object == unit.ObjectImage && !in.imagePresent(u.Resource)
	uc := &up.change
	switch {
	case changed || missing:
		uc.Effect = EffectPull
		why := "image " + u.Resource + " missing"
		if changed {
			why = summarizeKeys(uc.Keys)
			up.told.restarted = true
		}
		uc.Reasons = append(uc.Reasons, why)
		pulled := pullUnit(u, why, up)
		if changed || !pulled {
			// Its service runs once and stays active: run it again with
			// the new definition (or to pull what is missing).
			if running(st) {
				up.add(Action{Op: OpStop, Target: u.Service, Unit: u.FileName, Reason: "pull again"}, rank)
			}
			up.add(Action{Op: OpStart, Target: u.Service, Unit: u.FileName, Reason: "pull " + u.Resource}, rank)
		}
		uc.After = "active"
	case meta:
		uc.Effect = EffectMetadata
		uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
	}
}
