package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/render"
)

// What each container runs. The host's store and its running containers
// can disagree: `podman pull` of a tag moves the local name to the new
// image while the container goes on running the one it was created from,
// and `podman untag` leaves a running container on an image no name
// points at. Judged by the store alone, both hosts "match the specs".
// So the image each running container of a registry tag was created from
// is read (one list of podman's containers), beside the image its tag
// names in the store: an update compares the running image with the
// registry (updates.go), and every plan shows a container that runs an
// older image than its local tag (Plan.StaleImages), which the drift check
// counts.

// ContainerLister is a StoreReader that can also list podman's
// containers with the image each was created from. A store that cannot
// (a test's small fake) reads as "each container runs its tag's image".
type ContainerLister interface {
	Containers(ctx context.Context) (map[string]host.Container, error)
}

// StaleImage is a running container whose image is not the one its tag
// names in the host's store: the tag was pulled (or built) again since the
// container started, and nothing restarted it.
type StaleImage struct {
	Unit    string `json:"unit"`    // the container's unit file
	Service string `json:"service"` // its service
	Image   string `json:"image"`   // its Image=
	Runs    string `json:"runs"`    // the ID of the image it runs
	Tag     string `json:"tag"`     // the ID of the image its Image= names on the host
}

// Message is the sentence a plan and a drift notification say of it.
func (s StaleImage) Message() string {
	return fmt.Sprintf("%s runs an older image than %s names on this host (it runs image %s, the tag names image %s: pulled, not restarted); syslet update restarts it",
		s.Service, s.Image, shortID(s.Runs), shortID(s.Tag))
}

// tagged are the running, non-template containers of a registry tag:
// the ones whose image can be older than their tag.
func tagged(out *render.Output) []*render.Unit {
	var us []*render.Unit
	for _, u := range out.Units {
		if u.Kind == spec.Container && !u.Template && u.State == spec.Running && u.Container != "" && TaggedImage(u.Image) != "" {
			us = append(us, u)
		}
	}
	return us
}

// readRunning reads Observed.Containers (the image each container of a
// registry tag was created from) and the IDs of the images those tags
// name in the store (Observed.ImageIDs): one list of containers, and one
// question per distinct tag a running container names. A host where no
// container of a registry tag runs is not asked anything.
func readRunning(ctx context.Context, store StoreReader, out *render.Output, obs *Observed) error {
	cl, ok := store.(ContainerLister)
	us := tagged(out)
	if !ok || len(us) == 0 {
		return nil
	}
	all, err := cl.Containers(ctx)
	if err != nil {
		return fmt.Errorf("listing podman's containers: %w", err)
	}
	for _, u := range us {
		c, ok := all[u.Container]
		if !ok || c.ImageID == "" || !running(obs.Units[u.Service]) {
			continue
		}
		if obs.Containers == nil {
			obs.Containers = map[string]string{}
		}
		obs.Containers[u.Container] = c.ImageID
		if obs.Images[u.Image] {
			if err := readImageID(ctx, store, u.Image, obs); err != nil {
				return err
			}
		}
	}
	return nil
}

// staleImages are the running containers whose image is older than the
// one their tag names in the store, and that the plan does not restart
// (changes). A container a rollback pinned runs an older image on
// purpose, and is left out.
func staleImages(out *render.Output, obs *Observed, pins map[string]render.Pin, changes []UnitChange) []StaleImage {
	if len(obs.Containers) == 0 {
		return nil
	}
	restarted := map[string]bool{}
	for _, c := range changes {
		if c.Effect == EffectRestart || c.Effect == EffectRemove {
			restarted[c.FileName] = true
		}
	}
	var ss []StaleImage
	for _, u := range tagged(out) {
		if restarted[u.FileName] {
			continue
		}
		runs, tag := obs.Containers[u.Container], obs.ImageIDs[u.Image]
		if runs == "" || tag == "" || sameImage(runs, tag) {
			continue
		}
		if _, pinned := pins[u.FileName]; pinned {
			continue
		}
		if _, pinned := installedPin(obs, u.FileName); pinned {
			continue
		}
		ss = append(ss, StaleImage{Unit: u.FileName, Service: u.Service, Image: u.Image, Runs: runs, Tag: tag})
	}
	slices.SortFunc(ss, func(a, b StaleImage) int { return strings.Compare(a.Unit, b.Unit) })
	return ss
}

// sameImage compares image IDs as podman writes them in its two answers:
// with the "sha256:" prefix (an image's inspect) and without (a
// container's listing).
func sameImage(a, b string) bool {
	return strings.TrimPrefix(a, "sha256:") == strings.TrimPrefix(b, "sha256:")
}
