package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// encValueRe is the envelope SOPS writes for an encrypted value. The
// envelope names the plaintext's type in clear text, so value types can be
// checked without decrypting.
var encValueRe = regexp.MustCompile(`^ENC\[AES256_GCM,data:[A-Za-z0-9+/=]*,iv:[A-Za-z0-9+/=]+,tag:[A-Za-z0-9+/=]+,type:([a-z]+)\]$`)

// sopsFinding is one problem of a ciphertext, with the rule it breaks.
// Warnings do not make the spec invalid.
type sopsFinding struct {
	rule    string
	warning bool
	err     error
}

// sopsKeys checks the shape of a SOPS-encrypted document (YAML, or JSON,
// which YAML reads too) and returns its top-level keys in document order.
// SOPS leaves keys and metadata in clear text and encrypts only values, so
// all of this is checked without the host's identity: a document without
// SOPS metadata, without a single encrypted value, without an age
// recipient, or with a value that is not a string is refused here, so that
// plaintext never reaches a config repository by accident and CI catches
// a broken secret before any host does. A value left in clear text next to
// encrypted ones (a .sops.yaml with encrypted_regex) is a warning.
func sopsKeys(doc []byte) ([]string, []sopsFinding) {
	fail := func(rule, format string, args ...any) ([]string, []sopsFinding) {
		return nil, []sopsFinding{{rule: rule, err: fmt.Errorf(format, args...)}}
	}
	// Every document of the stream is read: sops encrypts (and syslet
	// decrypts) only the first, so a second one — which could hold a
	// value in clear text next to the encrypted map — is refused.
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		return fail(RuleSecretFormat, "ciphertext is not a YAML or JSON document: %w", err)
	}
	var more yaml.Node
	switch err := dec.Decode(&more); {
	case err == nil:
		return fail(RuleSecretFormat, "ciphertext holds more than one YAML document (a second one starts at line %d): sops encrypts only one; remove everything after the first", more.Line)
	case !errors.Is(err, io.EOF):
		return fail(RuleSecretFormat, "ciphertext is not a YAML or JSON document: %w", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, []sopsFinding{{rule: RuleSecretFormat, err: errors.New("ciphertext must be a SOPS-encrypted YAML map of keys to values")}}
	}
	m := root.Content[0]
	var keys, clearKeys []string
	seen := make(map[string]bool, len(m.Content)/2)
	var meta *yaml.Node
	encrypted := 0
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		// yaml.v3 refuses duplicate keys only when decoding into Go values,
		// not into a Node; a repeated key would name one podman secret twice
		// with two values, and sops would decrypt only one of them.
		if seen[k.Value] {
			return fail(RuleSecretFormat, "key %q appears twice in the ciphertext", k.Value)
		}
		seen[k.Value] = true
		if k.Value == "sops" {
			if v.Kind != yaml.MappingNode {
				return fail(RuleSecretFormat, "ciphertext has no sops metadata: encrypt it with sops (age recipients) before committing it")
			}
			meta = v
			continue
		}
		if v.Kind != yaml.ScalarNode {
			return fail(RuleSecretFormat, "secret key %q must hold a single value, not a nested map or list", k.Value)
		}
		keys = append(keys, k.Value)
		if sub := encValueRe.FindStringSubmatch(v.Value); sub != nil {
			encrypted++
			if sub[1] != "str" {
				return fail(RuleSecretValueType, "secret key %q is encrypted with type %s; every value must be a string (quote it in the plaintext before encrypting)", k.Value, sub[1])
			}
		} else {
			clearKeys = append(clearKeys, k.Value)
		}
	}
	if meta == nil {
		return fail(RuleSecretFormat, "ciphertext has no sops metadata: encrypt it with sops (age recipients) before committing it")
	}
	if len(keys) == 0 {
		return fail(RuleSecretFormat, "ciphertext holds no keys")
	}
	if encrypted == 0 {
		return fail(RuleSecretNotEncrypted, "ciphertext holds no encrypted value: it is plaintext; encrypt it with sops for the host's age recipient (syslet host-key)")
	}
	if len(ageRecipients(meta)) == 0 {
		return fail(RuleSecretRecipients, "ciphertext has no age recipients in its sops metadata: syslet decrypts with age only (sops --age RECIPIENT)")
	}
	var out []sopsFinding
	if len(clearKeys) > 0 {
		out = append(out, sopsFinding{rule: RuleSecretNotEncrypted, warning: true,
			err: fmt.Errorf("secret keys %s are stored in clear text in the ciphertext (check encrypted_regex / unencrypted_suffix in .sops.yaml)", strings.Join(clearKeys, ", "))})
	}
	return keys, out
}

// Recipients lists the age recipients a secret spec's ciphertext is
// encrypted for, as its sops metadata names them (in clear text): what
// `syslet validate` can tell without any host's identity. Nil when the
// document is not one Validate accepts.
func Recipients(ciphertext string) []string {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(ciphertext), &root); err != nil || root.Kind != yaml.DocumentNode || len(root.Content) != 1 {
		return nil
	}
	return ageRecipients(mapGet(root.Content[0], "sops"))
}

// ageRecipients lists the age recipients of a sops metadata map: the
// top-level "age" list and those of "key_groups" (Shamir key groups).
func ageRecipients(meta *yaml.Node) []string {
	var out []string
	lists := []*yaml.Node{mapGet(meta, "age")}
	if kg := mapGet(meta, "key_groups"); kg != nil && kg.Kind == yaml.SequenceNode {
		for _, g := range kg.Content {
			lists = append(lists, mapGet(g, "age"))
		}
	}
	for _, l := range lists {
		if l == nil || l.Kind != yaml.SequenceNode {
			continue
		}
		for _, e := range l.Content {
			r, enc := mapGet(e, "recipient"), mapGet(e, "enc")
			if r != nil && enc != nil && strings.HasPrefix(r.Value, "age1") && strings.TrimSpace(enc.Value) != "" {
				out = append(out, r.Value)
			}
		}
	}
	return out
}

func mapGet(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
