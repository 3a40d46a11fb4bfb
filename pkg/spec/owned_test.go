package spec_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// TestEveryKindChecksItsUnit: whatever else a kind's spec checks, its unit
// gets the checks every unit gets — a key syslet owns set otherwise is
// warned about, ServiceName= is checked — and a drop-in may not set the
// name key.
func TestEveryKindChecksItsUnit(t *testing.T) {
	for _, k := range unit.Kinds {
		keys := `"ServiceName": "x.service"`
		if k.NameKey != "" {
			keys += fmt.Sprintf(`, %q: "other"`, k.NameKey)
		}
		src := fmt.Sprintf(`{"apiVersion": "v1", "type": %q, "name": "n", "unit": {%q: {%s}}, "dropIns": {"10-a.conf": {%q: {%q: "z"}}}}`,
			k.Name, k.Section, keys, k.Section, k.NameKey)
		if k.NameKey == "" {
			src = fmt.Sprintf(`{"apiVersion": "v1", "type": %q, "name": "n", "unit": {%q: {%s}}}`, k.Name, k.Section, keys)
		}
		_, rep := decode(t, src)
		rules := func() []string {
			var rs []string
			for _, f := range rep.Findings {
				rs = append(rs, f.Rule)
			}
			return rs
		}()
		want := []string{spec.RuleServiceName}
		if k.NameKey != "" {
			want = append(want, spec.RuleForcedKey, spec.RuleDropIn)
		}
		for _, r := range want {
			if !slices.Contains(rules, r) {
				t.Errorf("%s: no %s finding in:\n%s", k.Name, r, rep.String())
			}
		}
	}
}

// TestOwned: the keys a spec's unit gets from syslet, for its kind and
// desiredState.
func TestOwned(t *testing.T) {
	keys := func(s *spec.Spec, section string) []string {
		var out []string
		for _, o := range s.Kind.Owned() {
			if o.Section == section && o.For(s) {
				out = append(out, o.Key+"="+o.Value(s))
			}
		}
		return out
	}
	web := &spec.Spec{Kind: spec.Container, Name: "web", DesiredState: spec.Running}
	if got := keys(web, unit.Container); !slices.Equal(got, []string{"ContainerName=web"}) {
		t.Errorf("container: %q", got)
	}
	if got := keys(web, unit.Service); !slices.Equal(got, []string{"Restart=always"}) {
		t.Errorf("running container's [Service]: %q", got)
	}
	job := &spec.Spec{Kind: spec.Container, Name: "job", DesiredState: spec.Oneshot, Instances: []spec.Instance{}}
	if got := append(keys(job, unit.Container), keys(job, unit.Service)...); !slices.Equal(got, []string{"ContainerName=job-%i", "Type=oneshot"}) {
		t.Errorf("oneshot template: %q", got)
	}
	if got := keys(&spec.Spec{Kind: spec.Build, Name: "app"}, unit.Build); !slices.Equal(got, []string{"File=/etc/containers/builds/app/Containerfile", "SetWorkingDirectory=/etc/containers/builds/app"}) {
		t.Errorf("build: %q", got)
	}
	if got := keys(&spec.Spec{Kind: spec.Image, Name: "i"}, unit.Image); got != nil {
		t.Errorf("image unit: %q", got)
	}
}

// TestEveryKindIsASpec: each kind of the kind table is a type of spec,
// and the spec's kinds are the table's and secrets.
func TestEveryKindIsASpec(t *testing.T) {
	for _, k := range unit.Kinds {
		if !spec.Kind(k.Name).Accepts("unit") || spec.Kind(k.Name).Quadlet() != k {
			t.Errorf("%s: no spec fields for it", k.Name)
		}
	}
	if len(spec.Kinds) != len(unit.Kinds)+1 || !slices.Contains(spec.Kinds, spec.Secret) {
		t.Errorf("spec kinds %v", spec.Kinds)
	}
}
