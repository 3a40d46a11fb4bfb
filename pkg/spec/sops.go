package spec

import (
	"errors"
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"
)

// sopsKeys returns the top-level keys of a SOPS-encrypted YAML document in
// document order. SOPS leaves keys in clear text and encrypts only values,
// so references to secret keys can be checked without the host's identity.
// A document without SOPS metadata is refused: plaintext secrets must never
// reach a config repository by accident.
func sopsKeys(doc []byte) ([]string, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("ciphertext is not a YAML document: %w", err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("ciphertext must be a SOPS-encrypted YAML map of keys to values")
	}
	m := root.Content[0]
	var keys []string
	hasSops := false
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		// yaml.v3 refuses duplicate keys only when decoding into Go values,
		// not into a Node; a repeated key would name one podman secret twice
		// with two values, and sops would decrypt only one of them.
		if slices.Contains(keys, k.Value) || (k.Value == "sops" && hasSops) {
			return nil, fmt.Errorf("key %q appears twice in the ciphertext", k.Value)
		}
		if k.Value == "sops" {
			hasSops = v.Kind == yaml.MappingNode
			continue
		}
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("secret key %q must hold a single value, not a nested map or list", k.Value)
		}
		keys = append(keys, k.Value)
	}
	if !hasSops {
		return nil, errors.New("ciphertext has no sops metadata: encrypt it with sops (age recipients) before committing it")
	}
	if len(keys) == 0 {
		return nil, errors.New("ciphertext holds no keys")
	}
	return keys, nil
}
