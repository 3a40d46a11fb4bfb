package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/render"
)

func (b *builder) secretChanges() {
	for _, s := range b.out.Secrets {
		for _, k := range s.Keys {
			name := s.PodmanName(k)
			cur, exists := b.obs.Secrets[name]
			sc := SecretChange{Name: name, Secret: s.Name}
			switch {
			case exists && cur.Labels[render.HashLabel] == "":
				b.p.Refusals = append(b.p.Refusals, Refusal{Unit: "secret " + name, Source: s.Spec.Source + " " + s.Spec.Path(),
					Message: fmt.Sprintf("podman secret %q exists without the %s label, so it is not syslet's; syslet will not replace it", name, render.HashLabel)})
				continue
			case exists && cur.Labels[render.HashLabel] == s.Hash:
				continue
			case exists:
				sc.Op, sc.Reason = "~", "ciphertext changed"
			default:
				sc.Op, sc.Reason = "+", "new secret"
			}
			b.secrets[name] = true
			b.p.Secrets = append(b.p.Secrets, sc)
			b.add(Action{Op: OpCreateSecret, Target: name, Payload: &Payload{Secret: s, Key: k, Labels: map[string]string{render.HashLabel: s.Hash}}, Reason: sc.Reason}, kindRank(spec.Secret))
		}
	}
	external := map[string]bool{}
	for _, s := range b.out.ExternalSecrets {
		external[s.Name] = true
		b.externalSecret(s)
	}
	// In name order, so that two plans of one host read the same.
	for _, name := range slices.Sorted(maps.Keys(b.obs.Secrets)) {
		cur := b.obs.Secrets[name]
		if slices.ContainsFunc(b.out.Secrets, func(s *render.Secret) bool {
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
			b.p.Notes = append(b.p.Notes, Note{Unit: "secret " + name,
				Message: fmt.Sprintf("podman secret without the %s label: not managed by syslet, left alone", render.HashLabel)})
			continue
		}
		b.p.Secrets = append(b.p.Secrets, SecretChange{Name: name, Op: "-", Reason: "no longer declared"})
		b.add(Action{Op: OpRemoveSecret, Target: name, Reason: "no longer declared"}, kindRank(spec.Secret))
	}
	slices.SortFunc(b.p.Secrets, func(a, c SecretChange) int { return strings.Compare(a.Name, c.Name) })
}

// externalSecret checks that a secret syslet does not manage exists: a
// container whose Secret= names a missing one would fail to start, so the
// plan is refused before anything changes. Without podman (--root) it
// cannot be checked, and the plan says so.
func (b *builder) externalSecret(s *render.ExternalSecret) {
	switch _, ok := b.obs.Secrets[s.Name]; {
	case !b.obs.StoreKnown:
		b.p.Notes = append(b.p.Notes, Note{Unit: "secret " + s.Name,
			Message: "external podman secret: not checked, podman's secret store is not read under --root"})
	case !ok:
		b.p.Refusals = append(b.p.Refusals, Refusal{Unit: "secret " + s.Name, Source: s.Spec.Source + " " + s.Spec.Path(),
			Message: fmt.Sprintf("external podman secret %q does not exist on this host; syslet never creates it: run `podman secret create %s -` (value on stdin), then apply again", s.Name, s.Name)})
	}
}
