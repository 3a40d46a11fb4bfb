package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/render"
)

// secretPlan is what planning the podman secrets found: its part of the
// plan, and the secrets it creates or replaces (by podman name), whose
// containers restart.
type secretPlan struct {
	part
	changed map[string]bool
}

// secrets plans the podman secrets: each declared one created or replaced
// when its ciphertext changed, each syslet made that no spec declares any
// more removed, and the external ones checked.
func (in *inputs) secrets() (sp secretPlan) {
	sp.changed = map[string]bool{}
	for _, s := range in.out.Secrets {
		for _, k := range s.Keys {
			name := s.PodmanName(k)
			cur, exists := in.obs.Secrets[name]
			sc := SecretChange{Name: name, Secret: s.Name}
			switch {
			case exists && cur.Labels[render.HashLabel] == "":
				sp.refusals = append(sp.refusals, Refusal{Unit: "secret " + name, Source: s.Spec.Source + " " + s.Spec.Path(),
					Message: fmt.Sprintf("podman secret %q exists without the %s label, so it is not syslet's; syslet will not replace it", name, render.HashLabel)})
				continue
			case exists && cur.Labels[render.HashLabel] == s.Hash:
				continue
			case exists:
				sc.Op, sc.Reason = "~", "ciphertext changed"
			default:
				sc.Op, sc.Reason = "+", "new secret"
			}
			sp.changed[name] = true
			sp.secrets = append(sp.secrets, sc)
			sp.add(Action{Op: OpCreateSecret, Target: name, Payload: &Payload{Secret: s, Key: k, Labels: map[string]string{render.HashLabel: s.Hash}}, Reason: sc.Reason}, kindRank(spec.Secret))
		}
	}
	external := map[string]bool{}
	for _, s := range in.out.ExternalSecrets {
		external[s.Name] = true
		externalSecret(s, in.obs, &sp.part)
	}
	// In name order, so that two plans of one host read the same.
	for _, name := range slices.Sorted(maps.Keys(in.obs.Secrets)) {
		cur := in.obs.Secrets[name]
		if slices.ContainsFunc(in.out.Secrets, func(s *render.Secret) bool {
			return slices.ContainsFunc(s.Keys, func(k string) bool { return s.PodmanName(k) == name })
		}) {
			continue // declared: handled above
		}
		if external[name] {
			// Declared external: never removed, whatever its labels say
			// (a secret syslet once managed may be handed over to the
			// operator this way).
			continue
		}
		if cur.Labels[render.HashLabel] == "" {
			// Someone else's secret (made by hand, or by another tool):
			// never removed, and said so, as for unit files without the
			// [X-Syslet] marker.
			sp.notes = append(sp.notes, Note{Unit: "secret " + name,
				Message: fmt.Sprintf("podman secret without the %s label: not managed by syslet, left alone", render.HashLabel)})
			continue
		}
		sp.secrets = append(sp.secrets, SecretChange{Name: name, Op: "-", Reason: "no longer declared"})
		sp.add(Action{Op: OpRemoveSecret, Target: name, Reason: "no longer declared"}, kindRank(spec.Secret))
	}
	slices.SortFunc(sp.secrets, func(a, c SecretChange) int { return strings.Compare(a.Name, c.Name) })
	return sp
}

// externalSecret checks that a secret syslet does not manage exists: a
// container whose Secret= names a missing one would fail to start, so the
// plan is refused before anything changes. Without podman (--root) it
// cannot be checked, and the plan says so.
func externalSecret(s *render.ExternalSecret, obs *Observed, pt *part) {
	switch _, ok := obs.Secrets[s.Name]; {
	case !obs.StoreKnown:
		pt.notes = append(pt.notes, Note{Unit: "secret " + s.Name,
			Message: "external podman secret: not checked, podman's secret store is not read under --root"})
	case !ok:
		pt.refusals = append(pt.refusals, Refusal{Unit: "secret " + s.Name, Source: s.Spec.Source + " " + s.Spec.Path(),
			Message: fmt.Sprintf("external podman secret %q does not exist on this host; syslet never creates it: run `podman secret create %s -` (value on stdin), then apply again", s.Name, s.Name)})
	}
}
