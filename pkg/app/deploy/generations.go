package deploy

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/syslet/syslet/pkg/generation"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// What a run keeps of a generation and reads back from one. A run that
// passes its health gate records, with its input, the image each of its
// containers runs (with the registry digest its tag named then); a
// rollback runs each container again pinned to that image; no image a
// kept generation ran is deleted.

// pins are the images a generation's containers ran, by unit file name:
// for each container that runs another image now (a container the failed
// run did not touch runs the same and is left alone: pinning it would
// restart it), and whose image podman still has.
func (r *runner) pins(ctx context.Context, gen *generation.Generation) map[string]render.Pin {
	pins := map[string]render.Pin{}
	digest := load.Bytes("generation", gen.Input).Digest()
	var now map[string]host.Container
	if r.h.live != nil {
		var err error
		if now, err = r.h.live.Podman.Containers(ctx); err != nil {
			r.view.Warning("pinning every container of the generation: " + err.Error())
		}
	}
	for file, im := range gen.Images {
		if im.ID == "" {
			continue
		}
		if c, ok := now[strings.TrimSuffix(file, ".container")]; ok && c.ImageID == im.ID && !r.pinned(file) {
			continue
		}
		if r.h.live != nil {
			if ok, err := r.h.live.Podman.ImageExists(ctx, im.ID); err == nil && !ok {
				r.view.Warning(fmt.Sprintf("image %s that %s ran in run %s is gone; it runs what its Image= names now", im.ID, file, gen.Run))
				continue
			}
		}
		pins[file] = render.Pin{ImageID: im.ID, Run: gen.Run, InputDigest: digest, Digest: im.Digest}
	}
	return pins
}

// keptImages are the images the kept generations ran, by name and ID:
// syslet deletes none of them.
func keptImages(gens []*generation.Generation) map[string]bool {
	out := generation.ImageIDs(gens)
	for _, g := range gens {
		for _, im := range g.Images {
			if im.Name != "" {
				out[im.Name] = true
			}
		}
	}
	return out
}

// containerImages maps each container of the loaded set to the image
// podman says it runs.
func containerImages(l *load.Set, cs map[string]host.Container) map[string]generation.Image {
	out := map[string]generation.Image{}
	for _, u := range l.Out.Units {
		if u.Kind != spec.Container {
			continue
		}
		if c, ok := cs[u.Container]; ok && c.ImageID != "" && !u.Template { // syslet names the container (NAME, NAME-INSTANCE)
			out[u.FileName] = generation.Image{ID: c.ImageID, Name: c.Image}
		}
	}
	return out
}

// imageDigests adds to each image pulled from a registry its manifest
// digest there, read from the image's repository digests (one question to
// podman per image): what a generation says a tag named when it ran. An
// image podman cannot say it of is recorded without one.
func (r *runner) imageDigests(ctx context.Context, images map[string]generation.Image) {
	byID := map[string][]string{}
	for file, im := range images {
		repo := plan.TaggedImage(im.Name)
		if repo == "" {
			continue
		}
		digests, ok := byID[im.ID]
		if !ok {
			var err error
			if digests, err = r.h.live.Podman.ImageDigests(ctx, im.ID); err != nil {
				r.view.Warning(fmt.Sprintf("the generation records no digest of image %s: %s", im.Name, err))
			}
			byID[im.ID] = digests
		}
		im.Digest = repoDigest(repo, digests)
		images[file] = im
	}
}

// repoDigest is the digest among an image's repository digests
// ("name@sha256:…") of ref's repository, "" when it has none.
func repoDigest(ref string, digests []string) string {
	name := ref[:strings.LastIndexByte(ref, ':')] // TaggedImage always ends in a tag
	for _, d := range digests {
		if n, dg, ok := strings.Cut(d, "@"); ok && n == name {
			return dg
		}
	}
	return ""
}

// pinned reports whether a container carries a rollback pin now: it is
// then pinned again (to this generation's image), not left with the pin
// of another rollback.
func (r *runner) pinned(file string) bool {
	_, err := os.Lstat(layout.Under(r.req.Root, layout.PinPath(file)))
	return err == nil
}
