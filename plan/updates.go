package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/render"
)

// Image updates (`syslet update`). A plain apply pulls an image only when
// it is missing, so a tag that moved in its registry goes unnoticed. An
// update reads one more fact for each tagged registry image a running
// container names: the digest the registry's tag names now, beside the
// repository digests of the image the host holds under that name
// (Observed.Tags). Where they differ, the plan pulls the image in its
// first step and restarts the containers that run it, like any change: the
// health gate judges them and a failure rolls back to the generation
// before, pinned to the image it ran. Only an update reads these facts: a
// plain apply never asks a registry.

// TagReader is what an update reads of the registries and the image store.
type TagReader interface {
	// TagDigest asks ref's registry for the manifest digest its tag names
	// now (one manifest HEAD, nothing pulled).
	TagDigest(ctx context.Context, ref string) (string, error)
	// ImageDigests are the repository digests ("name@sha256:…") of the
	// image ref names in the host's store.
	ImageDigests(ctx context.Context, ref string) ([]string, error)
}

// Tag is what an update knows of one tagged registry image.
type Tag struct {
	// Registry is the digest the registry's tag names now.
	Registry string `json:"registry"`
	// Host are the repository digests of the image the host holds under
	// the name (none when it holds no image under it).
	Host []string `json:"host"`
	// Runs are the IDs of the images the containers of this name run, by
	// unit file name: the image a running container was created from
	// (Observed.Containers), else the one a rollback pinned it to. A
	// container in neither runs the host's image under the name.
	Runs map[string]string `json:"runs,omitempty"`
	// Running are the repository digests of those images, by image ID.
	// Where podman knows no repository digest of one (no name points at
	// it any more) its manifest digest stands in, as "@sha256:…": from
	// podman, or from the pin's record.
	Running map[string][]string `json:"running,omitempty"`
}

// running are the repository digests of the image a container runs.
func (t Tag) running(unitFile string) []string {
	if id, ok := t.Runs[unitFile]; ok {
		return t.Running[id]
	}
	return t.Host
}

// names reports whether digests hold the tag's digest now.
func (t Tag) names(digests []string) bool {
	return slices.ContainsFunc(digests, func(d string) bool { return strings.HasSuffix(d, "@"+t.Registry) })
}

// current reports whether the image a container runs is the one the tag
// names in the registry.
func (t Tag) current(unitFile string) bool { return t.names(t.running(unitFile)) }

// pulled reports whether the host's image under the name is the one the
// tag names in the registry: a restart runs it, no pull needed.
func (t Tag) pulled() bool { return t.names(t.Host) }

// old are the digests of the image a container runs, without repository
// names.
func (t Tag) old(unitFile string) []string {
	var out []string
	for _, d := range t.running(unitFile) {
		if _, dg, ok := strings.Cut(d, "@"); ok && !slices.Contains(out, dg) {
			out = append(out, dg)
		}
	}
	slices.Sort(out)
	return out
}

// ImageUpdate is one image an update pulls again: the tag's digest now
// and the one the host had, and the services of the containers it
// restarts.
type ImageUpdate struct {
	Image    string   `json:"image"`
	From     []string `json:"from"`
	To       string   `json:"to"`
	Restarts []string `json:"restarts"`
	// Pulled says the host holds the tag's image already (someone pulled
	// it): the update restarts the containers and pulls nothing.
	Pulled bool `json:"pulled,omitempty"`
}

// TaggedImage is the registry reference an update asks about for a
// container's Image=, or "" when it names no tag in a registry: a digest
// (nothing can move), an image ID, a quadlet unit (.build, .image), an
// image only this host has (localhost/…), another transport, or a short
// name (which registry it comes from is registries.conf's search, not
// the reference's).
func TaggedImage(img string) string {
	ref := strings.TrimPrefix(img, "docker://")
	if strings.Contains(ref, "@") || (ref != img && ref == "") {
		return ""
	}
	domain, rest, ok := strings.Cut(ref, "/")
	if !ok || rest == "" || domain == "localhost" || !strings.ContainsAny(domain, ".:") {
		return ""
	}
	if _, port, ok := strings.Cut(domain, ":"); ok && (port == "" || strings.Trim(port, "0123456789") != "") {
		return "" // another transport (oci:, docker-archive:, …)
	}
	if last := rest[strings.LastIndexByte(rest, '/')+1:]; !strings.Contains(last, ":") {
		ref += ":latest"
	}
	return ref
}

// updatable lists the distinct tagged registry images of the containers
// meant to run.
func updatable(out *render.Output) []string {
	var refs []string
	for _, u := range out.Units {
		if u.Kind == spec.Container && !u.Template && u.State == spec.Running && TaggedImage(u.Image) != "" {
			refs = append(refs, u.Image)
		}
	}
	slices.Sort(refs)
	return slices.Compact(refs)
}

// readTags reads Observed.Tags: for each tagged image a running
// container names (of only, when it is set), the repository digests of
// the host's image under the name and of the images its containers run,
// and its registry's answer. An image neither the host's store nor a
// container holds is pulled by any apply; a registry that cannot be asked
// stops the update before anything changes, naming the image.
func readTags(ctx context.Context, r TagReader, only []string, out *render.Output, obs *Observed) error {
	for _, img := range updatable(out) {
		if only != nil && !slices.Contains(only, TaggedImage(img)) {
			continue
		}
		runs := runningImages(out, obs, img)
		if !obs.Images[img] && len(runs) == 0 {
			continue
		}
		t := Tag{Runs: map[string]string{}, Running: map[string][]string{}}
		if obs.Images[img] {
			host, err := r.ImageDigests(ctx, img)
			if err != nil {
				return fmt.Errorf("reading the digests of image %q: %w", img, err)
			}
			t.Host = host
		}
		for file, run := range runs {
			t.Runs[file] = run.id
			if _, done := t.Running[run.id]; done {
				continue
			}
			ds, err := r.ImageDigests(ctx, run.id)
			if err != nil {
				return fmt.Errorf("reading the digests of image %s that %s runs: %w", shortID(run.id), file, err)
			}
			if !slices.ContainsFunc(ds, func(d string) bool { return strings.HasPrefix(d, "@") }) && run.digest != "" {
				// No name points at it any more and podman did not say
				// what it was pulled as: the pin's record stands in.
				ds = append(ds, "@"+run.digest)
			}
			t.Running[run.id] = ds
		}
		reg, err := r.TagDigest(ctx, TaggedImage(img))
		if err != nil {
			return fmt.Errorf("checking image %q for an update: %w", img, err)
		}
		t.Registry = reg
		if obs.Tags == nil {
			obs.Tags = map[string]Tag{}
		}
		obs.Tags[img] = t
	}
	return nil
}

// runImage is the image a container runs: its ID, and the manifest digest
// a rollback's pin recorded of it ("" when it is not pinned).
type runImage struct{ id, digest string }

// runningImages are the images the non-template containers of img run,
// by unit file name: the one a running container was created from, else
// the one a rollback pinned it to. A container in neither is absent: it
// runs (or will start on) the host's image under the name.
func runningImages(out *render.Output, obs *Observed, img string) map[string]runImage {
	runs := map[string]runImage{}
	for _, u := range out.Units {
		if u.Kind != spec.Container || u.Template || u.Image != img {
			continue
		}
		pin, pinned := installedPin(obs, u.FileName)
		switch id := obs.Containers[u.Container]; {
		case id != "":
			r := runImage{id: id}
			if pinned && sameImage(pin.ImageID, id) {
				r.digest = pin.Digest
			}
			runs[u.FileName] = r
		case pinned:
			runs[u.FileName] = runImage{id: pin.ImageID, digest: pin.Digest}
		}
	}
	return runs
}

// installedPin is the rollback's pin drop-in installed for a container,
// when there is one of ours.
func installedPin(obs *Observed, fileName string) (render.Pin, bool) {
	f, ok := obs.Files[layout.PinPath(fileName)]
	if !ok || f.Link != "" || f.Mode.IsDir() {
		return render.Pin{}, false
	}
	return render.ParsePin(f.Data)
}

// update plans the update of a container's image when its tag moved: the
// image is pulled again in the first step and the container restarts
// (into the unit's plan). A
// container a rollback pinned is compared by the image it runs, the
// pinned one: its update lifts the pin (lifted; pin removes it), so a
// good push after a failed one is rolled out like any other. A digest
// whose update just failed the health gate is not tried again until the
// tag moves (Options.HeldUpdates): no redeploy loop.
func (in *inputs) update(u *render.Unit, up *unitPlan) (restart, lifted bool) {
	t, ok := in.obs.Tags[u.Image]
	if !ok || u.Template {
		return false, false
	}
	if _, pinned := in.opts.Pins[u.FileName]; pinned {
		// This plan pins it (a rollback): it runs the image it ran before.
		up.notes = append(up.notes, Note{Unit: u.FileName, Message: "image " + u.Image + " not updated to " + t.Registry + ": this rollback pinned the container to the image it ran before"})
		return false, false
	}
	if t.current(u.FileName) {
		return false, false
	}
	if h, ok := in.opts.HeldUpdates[u.Image]; ok && h.Digest == t.Registry {
		up.notes = append(up.notes, Note{Unit: u.FileName, Message: "image " + u.Image + " not updated to " + t.Registry +
			": the update to that digest failed the health gate in run " + h.Run + " and was rolled back; it is tried again when the tag names another image"})
		return false, false
	}
	from := t.old(u.FileName)
	runs := strings.Join(from, ", ")
	if runs == "" {
		runs = "an image with no registry digest"
		if id := t.Runs[u.FileName]; id != "" {
			runs = "image " + shortID(id) + " (no registry digest)"
		}
	}
	how := ": pull and restart"
	if t.pulled() {
		how = ", pulled on this host already: restart"
	}
	why := fmt.Sprintf("image %s: %s runs %s; the tag names %s%s", u.Image, u.Service, runs, t.Registry, how)
	if pin, pinned := installedPin(in.obs, u.FileName); pinned {
		why += " (the container is pinned by a rollback to run " + pin.Run + "; the update lifts the pin)"
		lifted = true
	}
	up.change.Reasons = append(up.change.Reasons, why)
	// The plan pulls the image once (finish), for the first container
	// updated, and restarts each; an image the host holds already is
	// not pulled again.
	up.updates = append(up.updates, ImageUpdate{Image: u.Image, From: from, To: t.Registry, Restarts: []string{u.Service}, Pulled: t.pulled()})
	if !t.pulled() {
		up.add(Action{Op: OpPull, Target: u.Image, Unit: u.FileName, Reason: "update: tag now names " + t.Registry}, 0)
	}
	return true, lifted
}

// AutoUpdateTimer is podman's own image update: it restarts each container
// that sets AutoUpdate= when its image moves, outside syslet's plan,
// health gate and generations.
const AutoUpdateTimer = "podman-auto-update.timer"

// autoUpdated reports whether a container meant to run sets AutoUpdate=.
func autoUpdated(out *render.Output) bool {
	return slices.ContainsFunc(out.Units, func(u *render.Unit) bool { return u.AutoUpdate != "" && !u.Template })
}

// autoUpdateWarnings warns of each container that sets AutoUpdate= on a
// host whose podman-auto-update.timer runs: validate warned of the key,
// the plan says it is live here.
func autoUpdateWarnings(out *render.Output, obs *Observed) []report.Finding {
	if !obs.Units[AutoUpdateTimer].Active() {
		return nil
	}
	var ws []report.Finding
	for _, u := range out.Units {
		if u.AutoUpdate == "" || u.Template {
			continue
		}
		ws = append(ws, report.Finding{Source: u.Origin.Source, Path: u.Origin.Path(), Rule: spec.RuleAutoUpdate, Severity: report.Warning,
			Message: fmt.Sprintf("%s: %s is running on this host: it will pull and restart %s (AutoUpdate=%s) outside syslet's plan, health gate and generations; use syslet update instead (remove AutoUpdate=, or systemctl disable --now %s)",
				u.FileName, AutoUpdateTimer, u.Service, u.AutoUpdate, AutoUpdateTimer)})
	}
	return ws
}
