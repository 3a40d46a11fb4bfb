package plan_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/plan"
	"github.com/syslet/syslet/render"
)

// refill copies m into a new map, inserting keys in the given order.
func refill[V any](m map[string]V, reverse bool) map[string]V {
	keys := slices.Sorted(maps.Keys(m))
	if reverse {
		slices.Reverse(keys)
	}
	out := make(map[string]V, len(m))
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

// TestPlanIsDeterministic builds the same plan from observations whose maps
// were filled in opposite orders, many times, and compares the JSON byte for
// byte: stale secrets, orphan directories and every other map-fed part of
// the plan must come out in one order.
func TestPlanIsDeterministic(t *testing.T) {
	h := install(t, renderStream(t, base))
	for _, n := range []string{"zeta", "alpha", "mid", "beta", "omega"} {
		h.obs.Secrets["old-"+n] = host.Secret{Name: "old-" + n, Labels: map[string]string{render.HashLabel: "x"}}
		must(t, h.root.WriteFile(layout.ConfigRoot+"/orphan-"+n+"/f", []byte("x"), 0o644))
		must(t, h.root.WriteFile(layout.BuildRoot+"/gone-"+n+"/Containerfile", []byte("FROM x"), 0o644))
	}
	h.reread(t)
	out := renderStream(t, edit(t, `"Image":"registry.example/web:1"`, `"Image":"registry.example/web:2"`, `"a=1\n"`, `"a=2\n"`))
	var first []byte
	for i := range 20 {
		obs := *h.obs
		obs.Files = refill(h.obs.Files, i%2 == 1)
		obs.Secrets = refill(h.obs.Secrets, i%2 == 0)
		obs.Units = refill(h.obs.Units, i%2 == 1)
		obs.Images = refill(h.obs.Images, i%2 == 0)
		p := plan.Build(out, &obs, plan.Options{})
		b, err := json.Marshal(p)
		must(t, err)
		if first == nil {
			first = b
			if !strings.Contains(string(b), "old-alpha") || !strings.Contains(string(b), "orphan-alpha") {
				t.Fatalf("the plan lacks the stale secrets or orphan dirs the test relies on:\n%s", b)
			}
			continue
		}
		if !bytes.Equal(b, first) {
			t.Fatalf("build %d differs from the first:\nfirst: %s\nthis:  %s", i, first, b)
		}
	}
}

func TestPlanDigest(t *testing.T) {
	h := install(t, renderStream(t, base))
	a := plan.Build(renderStream(t, edit(t, `"a=1\n"`, `"a=2\n"`)), h.obs, plan.Options{})
	b := plan.Build(renderStream(t, edit(t, `"a=1\n"`, `"a=2\n"`)), h.obs, plan.Options{})
	c := plan.Build(renderStream(t, edit(t, `"a=1\n"`, `"a=3\n"`)), h.obs, plan.Options{})
	if a.Digest() != b.Digest() {
		t.Errorf("same input, different digests: %s %s", a.Digest(), b.Digest())
	}
	if a.Digest() == c.Digest() {
		t.Errorf("different file content, same digest %s", a.Digest())
	}
	if len(a.ShortDigest()) != 12 || !strings.Contains(view.PlanSummary(a), a.ShortDigest()) {
		t.Errorf("summary %q should carry the short digest %s", view.PlanSummary(a), a.ShortDigest())
	}
}
