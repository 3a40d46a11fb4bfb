package plan_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/host/fsroot"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

func TestTaggedImage(t *testing.T) {
	for img, want := range map[string]string{
		"registry.example/web:1":                        "registry.example/web:1",
		"docker://registry.example/web:1":               "registry.example/web:1",
		"localhost:5000/app:2":                          "localhost:5000/app:2",
		"localhost:5000/team/app":                       "localhost:5000/team/app:latest",
		"quay.io/a/b@sha256:" + strings.Repeat("a", 64): "",
		"localhost/app:v1":                              "", // built or loaded on this host
		"busybox":                                       "", // a short name: registries.conf decides
		"library/busybox:1":                             "",
		"app.build":                                     "",
		"oci:/srv/app:latest":                           "",
		"docker-archive:/x.tar":                         "",
	} {
		if got := plan.TaggedImage(img); got != want {
			t.Errorf("TaggedImage(%q) = %q, want %q", img, got, want)
		}
	}
}

// A tag that moved: the image is pulled in step 1 and only the containers
// running it restart; a tag that did not move, or no registry answer (a
// plain apply), plans nothing.
func TestUpdatePullsAndRestartsOnlyItsContainers(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	if p := plan.Build(out, h.obs, plan.Options{}); !p.Empty() {
		t.Fatalf("converged: %q", actions(p))
	}
	h.obs.Tags = map[string]plan.Tag{"registry.example/web:1": {Registry: "sha256:new", Host: []string{"registry.example/web@sha256:old"}}}
	p := plan.Build(out, h.obs, plan.Options{})
	want := []string{"pull-image registry.example/web:1", "stop web.service", "start web.service"}
	if got := actions(p); !slices.Equal(got, want) {
		t.Fatalf("actions %q, want %q", got, want)
	}
	if len(p.Updates) != 1 || p.Updates[0].To != "sha256:new" || !slices.Equal(p.Updates[0].From, []string{"sha256:old"}) || !slices.Equal(p.Updates[0].Restarts, []string{"web.service"}) {
		t.Errorf("updates %+v", p.Updates)
	}
	if effect(p, "web.container") != plan.EffectRestart {
		t.Errorf("web: %s", effect(p, "web.container"))
	}
	// Pinned by a rollback: restarting it would run the pinned image
	// again, so no update, and the plan says why.
	pinned := plan.Build(out, h.obs, plan.Options{Rollback: true, Pins: map[string]render.Pin{"web.container": {ImageID: "sha256:abc", Run: "r1"}}})
	if len(pinned.Updates) != 0 || countOp(pinned, plan.OpPull) != 0 || len(pinned.Notes) != 1 || !strings.Contains(pinned.Notes[0].Message, "pinned") {
		t.Errorf("pinned web: updates %+v, actions %q, notes %v", pinned.Updates, actions(pinned), pinned.Notes)
	}
	h.obs.Tags["registry.example/web:1"] = plan.Tag{Registry: "sha256:old", Host: []string{"registry.example/web@sha256:old"}}
	if p := plan.Build(out, h.obs, plan.Options{}); !p.Empty() || len(p.Updates) != 0 {
		t.Fatalf("tag did not move: %q", actions(p))
	}
}

// tagStore answers as a registry and an image store would, and counts
// what it was asked.
type tagStore struct {
	secretStore
	asked []string
	err   error
}

func (s *tagStore) TagDigest(_ context.Context, ref string) (string, error) {
	s.asked = append(s.asked, ref)
	return "sha256:new", s.err
}

func (s *tagStore) ImageDigests(context.Context, string) ([]string, error) {
	return []string{"x@sha256:old"}, nil
}

// Only an update asks a registry, only about the tags of containers meant
// to run, and a registry that does not answer stops the plan naming the
// image.
func TestObserveAsksRegistriesOnlyForAnUpdate(t *testing.T) {
	out := renderStream(t, base)
	r := fsroot.New(t.TempDir())
	st := &tagStore{}
	obs, err := plan.Observe(context.Background(), plan.Sources{Files: r, Store: st}, out)
	must(t, err)
	if len(st.asked) != 0 || obs.Tags != nil {
		t.Fatalf("an apply asked registries: %q", st.asked)
	}
	obs, err = plan.Observe(context.Background(), plan.Sources{Files: r, Store: st, Tags: st}, out)
	must(t, err)
	if !slices.Equal(st.asked, []string{"registry.example/web:1"}) || obs.Tags["registry.example/web:1"].Registry != "sha256:new" {
		t.Fatalf("asked %q, tags %+v (job is a oneshot, idle stopped, api a build)", st.asked, obs.Tags)
	}
	st.err = errors.New("dial tcp: connection refused")
	if _, err := plan.Observe(context.Background(), plan.Sources{Files: r, Store: st, Tags: st}, out); err == nil || !strings.Contains(err.Error(), `"registry.example/web:1"`) {
		t.Fatalf("err %v, want it to name the image", err)
	}
}

// A container setting AutoUpdate= on a host whose podman-auto-update.timer
// runs: the plan warns, naming the container and syslet update; with the
// timer stopped it says nothing, and Observe asks systemd about the timer
// only when a spec sets the key.
func TestAutoUpdateTimerIsWarnedOf(t *testing.T) {
	stream := edit(t, `"Image":"registry.example/web:1",`, `"Image":"registry.example/web:1","AutoUpdate":"registry",`)
	out := renderStream(t, stream)
	h := install(t, out)
	if p := plan.Build(out, h.obs, plan.Options{}); len(p.Warnings) != 0 {
		t.Fatalf("no timer, warnings %v", p.Warnings)
	}
	h.obs.Units[plan.AutoUpdateTimer] = host.UnitState{Name: plan.AutoUpdateTimer, LoadState: "loaded", ActiveState: "active"}
	p := plan.Build(out, h.obs, plan.Options{})
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0].Message, "web.service") || !strings.Contains(p.Warnings[0].Message, "syslet update") || !p.Empty() {
		t.Fatalf("timer running: warnings %v, actions %q", p.Warnings, actions(p))
	}
	units := &unitLister{}
	_, err := plan.Observe(context.Background(), plan.Sources{Files: h.root, Units: units}, out)
	must(t, err)
	if !slices.Contains(units.asked, plan.AutoUpdateTimer) {
		t.Errorf("systemd was asked about %q, not the timer", units.asked)
	}
	units.asked = nil
	_, err = plan.Observe(context.Background(), plan.Sources{Files: h.root, Units: units}, renderStream(t, base))
	must(t, err)
	if slices.Contains(units.asked, plan.AutoUpdateTimer) {
		t.Errorf("no spec sets AutoUpdate=, yet systemd was asked about the timer")
	}
}

type unitLister struct{ asked []string }

func (u *unitLister) UnitStates(_ context.Context, names []string) (map[string]host.UnitState, error) {
	u.asked = append(u.asked, names...)
	return map[string]host.UnitState{}, nil
}

// After a failed update a rollback pinned web to the image it ran: the
// digest that failed the gate is not tried again, and says why; a later
// push to the tag is compared with the pinned image, not the failed one
// the host's name holds, and updated: the pin lifts and web restarts on
// the new image.
func TestUpdateAfterAFailedOne(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	pin := render.Pin{ImageID: "sha256:good", Run: "r2", InputDigest: "in1"}
	h.obs.Files[layout.PinPath("web.container")] = host.File{Data: render.PinDropIn(pin), Mode: 0o644}
	opts := plan.Options{InputDigest: "in1", HeldUpdates: map[string]plan.HeldUpdate{"registry.example/web:1": {Digest: "sha256:bad", Run: "r3"}}}
	// The host's name holds the failed image; the registry names it too.
	h.obs.Tags = map[string]plan.Tag{"registry.example/web:1": {Registry: "sha256:bad", Host: []string{"registry.example/web@sha256:bad"},
		Runs: map[string]string{"web.container": "sha256:good"}, Running: map[string][]string{"sha256:good": {"registry.example/web@sha256:good"}}}}
	p := plan.Build(out, h.obs, opts)
	if !p.Empty() || len(p.Updates) != 0 || len(p.Notes) != 1 || !strings.Contains(p.Notes[0].Message, "failed the health gate in run r3") {
		t.Fatalf("held digest: actions %q, updates %+v, notes %v", actions(p), p.Updates, p.Notes)
	}
	// Without the journal's memory the pinned container is still compared
	// by the image it runs, so the failed digest would be tried: the memory
	// is what stops the loop.
	if p := plan.Build(out, h.obs, plan.Options{InputDigest: "in1"}); len(p.Updates) != 1 {
		t.Fatalf("no held digest: updates %+v", p.Updates)
	}
	// A good push: the tag moved again.
	h.obs.Tags["registry.example/web:1"] = plan.Tag{Registry: "sha256:fixed", Host: []string{"registry.example/web@sha256:bad"},
		Runs: map[string]string{"web.container": "sha256:good"}, Running: map[string][]string{"sha256:good": {"registry.example/web@sha256:good"}}}
	p = plan.Build(out, h.obs, opts)
	want := []string{"pull-image registry.example/web:1", "stop web.service", "remove-unit " + layout.PinPath("web.container"), "daemon-reload systemd", "start web.service"}
	if got := actions(p); !slices.Equal(got, want) {
		t.Fatalf("actions %q, want %q", got, want)
	}
	if len(p.Updates) != 1 || !slices.Equal(p.Updates[0].From, []string{"sha256:good"}) || p.Updates[0].To != "sha256:fixed" {
		t.Errorf("updates %+v", p.Updates)
	}
	// The pinned image is the one it runs: nothing to do.
	h.obs.Tags["registry.example/web:1"] = plan.Tag{Registry: "sha256:good", Host: []string{"registry.example/web@sha256:bad"},
		Runs: map[string]string{"web.container": "sha256:good"}, Running: map[string][]string{"sha256:good": {"registry.example/web@sha256:good"}}}
	if p := plan.Build(out, h.obs, opts); !p.Empty() {
		t.Errorf("pinned to the tag's image: %q", actions(p))
	}
}

// The host's store and the running container part: someone pulled the
// moved tag (the host's name holds the registry's image, the container
// runs the old one), or removed the tag (the container runs an image no
// name points at). An update compares the running image with the
// registry: a restart without a pull in the first case, a pull and a
// restart in the second; and a container running the tag's image is left
// alone whatever the host's name holds.
func TestUpdateJudgesTheRunningImage(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	running := map[string]string{"web.container": "sha256:oldid"}
	h.obs.Tags = map[string]plan.Tag{"registry.example/web:1": {Registry: "sha256:new", Host: []string{"registry.example/web@sha256:new"},
		Runs: running, Running: map[string][]string{"sha256:oldid": {"registry.example/web@sha256:old", "@sha256:old"}}}}
	p := plan.Build(out, h.obs, plan.Options{})
	if got, want := actions(p), []string{"stop web.service", "start web.service"}; !slices.Equal(got, want) {
		t.Fatalf("pulled, not restarted: actions %q, want %q", got, want)
	}
	if len(p.Updates) != 1 || !p.Updates[0].Pulled || !slices.Equal(p.Updates[0].From, []string{"sha256:old"}) {
		t.Errorf("updates %+v", p.Updates)
	}
	if r := strings.Join(unitChange(t, p, "web.container").Reasons, "; "); !strings.Contains(r, "web.service runs sha256:old; the tag names sha256:new, pulled on this host already: restart") {
		t.Errorf("reasons %q", r)
	}
	// Untagged: the host holds nothing under the name.
	h.obs.Tags["registry.example/web:1"] = plan.Tag{Registry: "sha256:new", Runs: running, Running: map[string][]string{"sha256:oldid": {"@sha256:old"}}}
	p = plan.Build(out, h.obs, plan.Options{})
	if got, want := actions(p), []string{"pull-image registry.example/web:1", "stop web.service", "start web.service"}; !slices.Equal(got, want) {
		t.Fatalf("untagged: actions %q, want %q", got, want)
	}
	if r := strings.Join(unitChange(t, p, "web.container").Reasons, "; "); !strings.Contains(r, "web.service runs sha256:old; the tag names sha256:new: pull and restart") {
		t.Errorf("reasons %q", r)
	}
	// Untagged, but the registry still names the image it runs.
	h.obs.Tags["registry.example/web:1"] = plan.Tag{Registry: "sha256:old", Runs: running, Running: map[string][]string{"sha256:oldid": {"@sha256:old"}}}
	if p := plan.Build(out, h.obs, plan.Options{}); !p.Empty() {
		t.Errorf("runs the tag's image: %q", actions(p))
	}
}

// A container that runs an older image than its tag names on the host is
// not changed by a plain plan, but the plan says so (and the drift check
// counts it); a pinned container is not, nor one the plan restarts.
func TestPlanShowsAContainerRunningAnOlderImage(t *testing.T) {
	out := renderStream(t, base)
	h := install(t, out)
	h.obs.Containers = map[string]string{"web": "oldid"}
	h.obs.ImageIDs = map[string]string{"registry.example/web:1": "sha256:newid"}
	p := plan.Build(out, h.obs, plan.Options{})
	if !p.Empty() || len(p.StaleImages) != 1 || p.StaleImages[0].Service != "web.service" {
		t.Fatalf("actions %q, stale %+v", actions(p), p.StaleImages)
	}
	if m := p.StaleImages[0].Message(); !strings.Contains(m, "web.service runs an older image than registry.example/web:1 names on this host") || !strings.Contains(m, "syslet update restarts it") {
		t.Errorf("message %q", m)
	}
	h.obs.ImageIDs["registry.example/web:1"] = "sha256:oldid"
	if p := plan.Build(out, h.obs, plan.Options{}); len(p.StaleImages) != 0 {
		t.Errorf("same image (IDs written two ways): stale %+v", p.StaleImages)
	}
	h.obs.ImageIDs["registry.example/web:1"] = "sha256:newid"
	pin := render.Pin{ImageID: "sha256:oldid", Run: "r2", InputDigest: "in1"}
	h.obs.Files[layout.PinPath("web.container")] = host.File{Data: render.PinDropIn(pin), Mode: 0o644}
	if p := plan.Build(out, h.obs, plan.Options{InputDigest: "in1"}); len(p.StaleImages) != 0 {
		t.Errorf("pinned by a rollback: stale %+v", p.StaleImages)
	}
}
