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

// pullUnit plans the pull step for an image unit; false when its service
// must pull it.
func (b *builder) pullUnit(u *render.Unit, why string) bool {
	if u.Pull == nil || u.Image == "" {
		return false
	}
	if !b.pulls[u.Image] {
		b.pulls[u.Image] = true
		b.add(Action{Op: OpPull, Target: u.Image, Unit: u.FileName, Payload: &Payload{Pull: u.Pull}, Reason: why}, 0)
	}
	return true
}

// pulled plans an image unit or artifact that already exists: pulled
// again when its unit changed (its users restart) or its image is gone
// from the store (they do not).
func (b *builder) pulled(u *render.Unit, iu *installedUnit, uc *UnitChange, changed, meta bool) {
	rank := kindRank(u.Kind)
	st := b.state(u.Service, iu)
	missing := u.Kind.Quadlet().Object == unit.ObjectImage && !b.imagePresent(u.Resource)
	switch {
	case changed || missing:
		uc.Effect = EffectPull
		why := "image " + u.Resource + " missing"
		if changed {
			why = summarizeKeys(uc.Keys)
			b.recreated[u.FileName] = true
		}
		uc.Reasons = append(uc.Reasons, why)
		pulled := b.pullUnit(u, why)
		if changed || !pulled {
			// Its service runs once and stays active: run it again with
			// the new definition (or to pull what is missing).
			if running(st) {
				b.add(Action{Op: OpStop, Target: u.Service, Unit: u.FileName, Reason: "pull again"}, rank)
			}
			b.add(Action{Op: OpStart, Target: u.Service, Unit: u.FileName, Reason: "pull " + u.Resource}, rank)
		}
		uc.After = "active"
	case meta:
		uc.Effect = EffectMetadata
		uc.Reasons = append(uc.Reasons, summarizeKeys(uc.Keys))
	}
}
