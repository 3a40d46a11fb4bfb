package deploy

import (
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/runlog"
	"github.com/syslet/syslet/plan"
)

// An update asks the registry about each tagged image a running container
// names, pulls the one whose tag moved before anything stops and restarts
// only its container; a plain apply asks no registry.
func TestUpdatePullsFirstAndRestartsOnlyItsContainer(t *testing.T) {
	h := newHost(t)
	specs := writeSpecs(t, stack)
	h.apply(t, specs)
	h.repoDigests = map[string][]string{"registry.example/web:1": {"registry.example/web@sha256:old"}, "registry.example/api:1": {"registry.example/api@sha256:api"}}
	h.tags = map[string]string{"registry.example/web:1": "sha256:new", "registry.example/api:1": "sha256:api"}

	h.reset()
	if r := h.apply(t, specs); len(h.Calls("tag-digest")) != 0 || !r.out.Plan.Empty() {
		t.Fatalf("a plain apply asked %q and planned %v", h.Calls("tag-digest"), r.out.Plan.Actions)
	}
	req := h.request(specs)
	req.Update, req.Diff = true, true
	r := h.run(t, req)
	if r.err != nil || len(r.out.Plan.Updates) != 1 || r.out.Plan.Updates[0].To != "sha256:new" {
		t.Fatalf("update --diff: %v %+v", r.err, r.out.Plan)
	}
	if got := h.Calls("pull", "stop", "start"); len(got) != 0 {
		t.Fatalf("--diff changed the host: %q", got)
	}
	h.reset()
	req.Diff = false
	if r := h.run(t, req); r.err != nil {
		t.Fatalf("update: %v\n%s", r.err, r.stdout)
	}
	got := h.Calls("tag-digest", "pull", "stop", "start")
	want := []string{"tag-digest registry.example/api:1", "tag-digest registry.example/web:1", "pull registry.example/web:1", "stop web.service", "start web.service"}
	if !slices.Equal(got, want) {
		t.Errorf("calls %q, want %q", got, want)
	}
	if strings.Contains(strings.Join(got, " "), "job") {
		t.Errorf("the oneshot job's image was asked about or run: %q", got)
	}
}

// The journal's memory of failed updates: the newest update of an image
// decides, a failed gate holds its digest, one that ended ok releases it,
// and a run that failed otherwise (a pull that did not reach the
// registry) holds nothing.
func TestHeldUpdates(t *testing.T) {
	run := func(id, result string, gateFailed int, image, to string) *runlog.RunInfo {
		return &runlog.RunInfo{Intent: runlog.Record{Run: id, Updates: []runlog.ImageUpdate{{Image: image, To: to}}},
			End: &runlog.Record{Result: result, GateFailed: gateFailed}}
	}
	runs := []*runlog.RunInfo{
		run("r1", runlog.ResultFailed, 1, "reg/a:1", "sha256:a1"),
		run("r2", runlog.ResultOK, 0, "reg/a:1", "sha256:a2"),
		run("r3", runlog.ResultFailed, 1, "reg/b:1", "sha256:b1"),
		run("r4", runlog.ResultFailed, 0, "reg/c:1", "sha256:c1"),
	}
	held := heldUpdates(runs)
	if len(held) != 1 || held["reg/b:1"] != (plan.HeldUpdate{Digest: "sha256:b1", Run: "r3"}) {
		t.Fatalf("held %+v", held)
	}
}
