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
	// the name.
	Host []string `json:"host"`
	// Pinned are the repository digests of the images rollbacks pinned
	// containers of this name to, by image ID: a pinned container runs
	// that image, not the one the host's name holds (after a failed
	// update that is the image that failed). Where podman knows no
	// repository digest of it (no tag names it any more) the digest the
	// pin recorded stands in, as "@sha256:…".
	Pinned map[string][]string `json:"pinned,omitempty"`
}

// running are the repository digests of the image a container runs: its
// pin's when a rollback pinned it (pinID), else the host's image's.
func (t Tag) running(pinID string) []string {
	if pinID != "" {
		return t.Pinned[pinID]
	}
	return t.Host
}

// current reports whether the image a container runs (its pin's, or
// the host's under the name) is the one the tag names.
func (t Tag) current(pinID string) bool {
	return slices.ContainsFunc(t.running(pinID), func(d string) bool { return strings.HasSuffix(d, "@"+t.Registry) })
}

// old are the digests of the image a container runs, without repository
// names.
func (t Tag) old(pinID string) []string {
	var out []string
	for _, d := range t.running(pinID) {
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

// readTags reads Observed.Tags: for each tagged image the host holds (of
// only, when it is set), its
// repository digests and its registry's answer. An image the host does not
// hold is pulled by any apply; a registry that cannot be asked stops the
// update before anything changes, naming the image.
func readTags(ctx context.Context, r TagReader, only []string, out *render.Output, obs *Observed) error {
	for _, img := range updatable(out) {
		if !obs.Images[img] || (only != nil && !slices.Contains(only, TaggedImage(img))) {
			continue
		}
		host, err := r.ImageDigests(ctx, img)
		if err != nil {
			return fmt.Errorf("reading the digests of image %q: %w", img, err)
		}
		reg, err := r.TagDigest(ctx, TaggedImage(img))
		if err != nil {
			return fmt.Errorf("checking image %q for an update: %w", img, err)
		}
		t := Tag{Registry: reg, Host: host}
		for _, pin := range pins(out, obs, img) {
			if t.Pinned == nil {
				t.Pinned = map[string][]string{}
			}
			ds, err := r.ImageDigests(ctx, pin.ImageID)
			if err != nil {
				return fmt.Errorf("reading the digests of image %s that a rollback pinned a container of %q to: %w", pin.ImageID, img, err)
			}
			if len(ds) == 0 && pin.Digest != "" {
				// No tag names it any more, so podman knows no repository
				// digest of it: the generation's record stands in.
				ds = []string{"@" + pin.Digest}
			}
			t.Pinned[pin.ImageID] = ds
		}
		if obs.Tags == nil {
			obs.Tags = map[string]Tag{}
		}
		obs.Tags[img] = t
	}
	return nil
}

// pins are the pins rollbacks installed for the running containers of
// img, one per image.
func pins(out *render.Output, obs *Observed, img string) []render.Pin {
	var ps []render.Pin
	for _, u := range out.Units {
		if u.Kind != spec.Container || u.Template || u.Image != img {
			continue
		}
		if p, ok := installedPin(obs, u.FileName); ok && !slices.ContainsFunc(ps, func(q render.Pin) bool { return q.ImageID == p.ImageID }) {
			ps = append(ps, p)
		}
	}
	return ps
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
	pin, pinned := installedPin(in.obs, u.FileName)
	pinID := ""
	if pinned {
		pinID = pin.ImageID
	}
	if t.current(pinID) {
		return false, false
	}
	if h, ok := in.opts.HeldUpdates[u.Image]; ok && h.Digest == t.Registry {
		up.notes = append(up.notes, Note{Unit: u.FileName, Message: "image " + u.Image + " not updated to " + t.Registry +
			": the update to that digest failed the health gate in run " + h.Run + " and was rolled back; it is tried again when the tag names another image"})
		return false, false
	}
	from := t.old(pinID)
	why := fmt.Sprintf("image %s: its tag now names %s (host has %s)", u.Image, t.Registry, strings.Join(from, ", "))
	switch {
	case pinned:
		runs := strings.Join(from, ", ")
		if runs == "" {
			runs = "image " + shortID(pin.ImageID)
		}
		why = fmt.Sprintf("image %s: its tag now names %s (the container runs %s, pinned by a rollback to run %s; the update lifts the pin)", u.Image, t.Registry, runs, pin.Run)
		lifted = true
	case len(from) == 0:
		why = fmt.Sprintf("image %s: its tag now names %s (the host's image has no registry digest)", u.Image, t.Registry)
	}
	up.change.Reasons = append(up.change.Reasons, why)
	// The plan pulls the image once (finish), for the first container
	// updated, and restarts each.
	up.updates = append(up.updates, ImageUpdate{Image: u.Image, From: from, To: t.Registry, Restarts: []string{u.Service}})
	up.add(Action{Op: OpPull, Target: u.Image, Unit: u.FileName, Reason: "update: tag now names " + t.Registry}, 0)
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
