package deploy

import (
	"slices"
	"strings"
	"testing"
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
