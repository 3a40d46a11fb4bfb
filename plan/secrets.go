package plan

import (
	"fmt"
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
			b.add(Action{Op: OpCreateSecret, Target: name, Secret: s, Key: k, Labels: map[string]string{render.HashLabel: s.Hash}, Reason: sc.Reason}, kindRank(spec.Secret))
		}
	}
	for name, cur := range b.obs.Secrets {
		if cur.Labels[render.HashLabel] == "" || slices.ContainsFunc(b.out.Secrets, func(s *render.Secret) bool {
			return slices.ContainsFunc(s.Keys, func(k string) bool { return s.PodmanName(k) == name })
		}) {
			continue
		}
		b.p.Secrets = append(b.p.Secrets, SecretChange{Name: name, Op: "-", Reason: "no longer declared"})
		b.add(Action{Op: OpRemoveSecret, Target: name, Reason: "no longer declared"}, kindRank(spec.Secret))
	}
	slices.SortFunc(b.p.Secrets, func(a, c SecretChange) int { return strings.Compare(a.Name, c.Name) })
}
