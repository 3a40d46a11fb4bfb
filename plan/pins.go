package plan

import (
	"bytes"
	"strings"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// A rollback pins each container to the image it ran in the generation
// being restored with a drop-in (layout.PinPath): the unit file itself
// stays exactly what that generation's specs render, so once the rollback
// is done a plan of those specs is empty. The pin stays while the host
// runs that generation's input and goes with the next other input: the
// container then runs what its Image= says again.

// pin plans the pin drop-in of a desired container and reports whether the
// image it runs changes (the container then restarts), or its unit changes
// without that (meta: a pin removed whose image the container's Image=
// names anyway). lifted: an update of its image lifts the pin (update).
// The pin takes no part in what a unit's drop-ins mean (dropins.go).
func (in *inputs) pin(u *render.Unit, lifted bool, up *unitPlan) (restart, meta bool) {
	p := layout.PinPath(u.FileName)
	cur, installed := in.obs.Files[p]
	installed = installed && cur.Link == "" && !cur.Mode.IsDir()
	if want, ok := in.opts.Pins[u.FileName]; ok {
		data := render.PinDropIn(want)
		if installed && bytes.Equal(cur.Data, data) {
			return false, false
		}
		up.add(Action{Op: OpWriteUnit, Target: p, Unit: u.FileName, Payload: &Payload{Content: data, Mode: 0o644}, Reason: "rollback: pin image " + want.ImageID}, kindRank(u.Kind))
		if had, ours := render.ParsePin(cur.Data); installed && ours && had.ImageID == want.ImageID {
			// Pinned to the same image by an earlier rollback: the file
			// says another run, the container runs the same.
			up.change.Reasons = append(up.change.Reasons, "rollback: keeps running image "+shortID(want.ImageID)+", as in run "+want.Run)
			return false, false
		}
		up.change.Reasons = append(up.change.Reasons, "rollback: runs image "+shortID(want.ImageID)+" again, as in run "+want.Run)
		return true, false
	}
	if !installed {
		return false, false
	}
	had, ours := render.ParsePin(cur.Data)
	if !ours || (had.InputDigest == in.opts.InputDigest && !lifted) {
		return false, false // someone else's drop-in, or the rollback's input is still the host's
	}
	if lifted {
		// An update runs the tag's new image (update): the restart is
		// planned there, its reason said.
		up.add(Action{Op: OpRemoveUnit, Target: p, Unit: u.FileName, Payload: &Payload{Root: layout.UnitDir}, Reason: "update: the rollback pin to run " + had.Run + " lifts"}, kindRank(u.Kind))
		return true, false
	}
	// Root: its drop-in directory goes too when the pin leaves it empty.
	up.add(Action{Op: OpRemoveUnit, Target: p, Unit: u.FileName, Payload: &Payload{Root: layout.UnitDir}, Reason: "the specs changed since the rollback to run " + had.Run}, kindRank(u.Kind))
	if id := in.obs.ImageIDs[u.Image]; id != "" && strings.TrimPrefix(id, "sha256:") == strings.TrimPrefix(had.ImageID, "sha256:") {
		// The specs changed, not this container: its Image= names the
		// image it was pinned to, so it runs on as it is.
		up.change.Reasons = append(up.change.Reasons, "rollback pin removed: "+u.Image+" is image "+shortID(id)+", the one it was pinned to")
		return false, true
	}
	up.change.Reasons = append(up.change.Reasons, "rollback pin to image "+shortID(had.ImageID)+" removed: the specs changed since")
	return true, false
}

// unpinStale removes the pin drop-in of a container no spec declares.
func unpinStale(iu *installedUnit, obs *Observed, rank int, pt *part) {
	if iu.kind != spec.Container {
		return
	}
	p := layout.PinPath(iu.fileName)
	if f, ok := obs.Files[p]; ok && f.Link == "" && !f.Mode.IsDir() {
		if _, ours := render.ParsePin(f.Data); ours {
			pt.add(Action{Op: OpRemoveUnit, Target: p, Unit: iu.fileName, Payload: &Payload{Root: layout.UnitDir}, Reason: "its container is removed"}, rank)
		}
	}
}

// keepResource says why a stale volume, network or image with
// reclaimPolicy Delete is kept after all, or "": a rollback never deletes
// data or images, and an image a kept generation ran stays for the
// rollback that may need it.
func (in *inputs) keepResource(iu *installedUnit, res string) string {
	if !iu.reclaimDelete() {
		return ""
	}
	switch k := iu.kind.Quadlet(); {
	case in.opts.Rollback && k.HoldsData:
		return "not deleted: a rollback never deletes data; podman volume " + res + " is kept"
	case in.opts.Rollback && k.Object == unit.ObjectImage:
		return "not deleted: a rollback never deletes images; " + res + " is kept"
	case k.Object == unit.ObjectImage && in.opts.KeepImages[res]:
		return "not deleted: a kept generation ran " + res + " (syslet rollback may need it)"
	}
	return ""
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
