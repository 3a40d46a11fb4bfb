package spec

import (
	"regexp"

	"github.com/syslet/syslet/pkg/spec/internal/jsontree"
)

// external reports whether a secret spec says "external": true.
func external(n *jsontree.Node) bool {
	v := n.Get("external")
	return v != nil && v.Kind == jsontree.Bool && v.Text == "true"
}

var secretKeyRe = regexp.MustCompile(`^[a-z0-9-]+$`)

func (d *decoder) secret(n *jsontree.Node, s *Spec) {
	v := n.Get("ciphertext")
	if e := n.Get("external"); e != nil {
		if e.Kind != jsontree.Bool {
			d.errf(e.Path(), RuleFieldType, "external must be true or false, got %s", e.Kind)
			return
		}
		s.External = e.Text == "true"
	}
	if s.External {
		// The value lives only in podman's store, put there by someone
		// else; a ciphertext here would be a second, ignored source of it.
		if v != nil {
			d.errf(v.Path(), RuleSecretExternal, "an external secret has no ciphertext: syslet never creates, changes or removes it (create it on the host: `podman secret create %s -`); remove ciphertext, or remove external to let syslet manage it", s.Name)
		}
		return
	}
	if v == nil {
		d.errf(jsontree.Child(n.Path(), "ciphertext"), RuleRequired, "ciphertext is required: a SOPS-encrypted YAML document (or \"external\": true for a podman secret created on the host, which syslet does not manage)")
		return
	}
	if v.Kind != jsontree.String {
		d.errf(v.Path(), RuleFieldType, "ciphertext must be a string, got %s", v.Kind)
		return
	}
	s.Ciphertext = v.Text
	keys, findings := sopsKeys([]byte(v.Text))
	for _, f := range findings {
		if f.warning {
			d.rep.Warnf(d.source, v.Path(), f.rule, "%v", f.err)
		} else {
			d.errf(v.Path(), f.rule, "%v", f.err)
		}
	}
	for _, k := range keys {
		if !secretKeyRe.MatchString(k) {
			d.errf(v.Path(), RuleSecretKey, "secret key %q must match [a-z0-9-]+", k)
			continue
		}
		s.SecretKeys = append(s.SecretKeys, k)
	}
}
