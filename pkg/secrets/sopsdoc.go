package secrets

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// This file reads SOPS documents itself instead of through the SOPS
// library: the library's packages link every cloud KMS client it supports
// (AWS, GCP, Azure, Vault, Huawei, with gRPC and protobuf under them),
// whose package initialisers ran on every syslet start — about 25 ms of
// each process's start on a test host, for a secret format whose only
// key type here is age. What it reads is the library's own document
// model, restricted to what syslet accepts (one flat map of strings):
// top-level items in document order, comments as SOPS turns them into
// items (they decide nothing but the comment regexes), and the metadata
// under the "sops" key. The tests check it against documents the real
// sops CLI encrypts.

// sopsItem is one top-level entry of a document: a key and its value, or
// a comment line.
type sopsItem struct {
	key     string
	comment string // a comment line, without its "#"
	isCmt   bool
	// value is what the document holds: an encrypted value is a string;
	// a value left in the clear may be any scalar; nested marks a map or
	// a list.
	value  any
	nested bool
}

// sopsKey is one master key's encrypted copy of the data key.
type sopsKey struct {
	Recipient string `yaml:"recipient" json:"recipient"`
	Enc       string `yaml:"enc" json:"enc"`
}

// sopsGroup is a key group. Only its age keys can open anything here;
// the others count as keys that did not open it.
type sopsGroup struct {
	Age    []sopsKey `yaml:"age" json:"age"`
	Others int       `yaml:"-" json:"-"`
}

// sopsMeta is the document's "sops" block, as the library's stores read it.
type sopsMeta struct {
	KeyGroups         []rawGroup `yaml:"key_groups" json:"key_groups"`
	ShamirThreshold   int        `yaml:"shamir_threshold" json:"shamir_threshold"`
	Age               []sopsKey  `yaml:"age" json:"age"`
	LastModified      string     `yaml:"lastmodified" json:"lastmodified"`
	MAC               string     `yaml:"mac" json:"mac"`
	UnencryptedSuffix string     `yaml:"unencrypted_suffix" json:"unencrypted_suffix"`
	EncryptedSuffix   string     `yaml:"encrypted_suffix" json:"encrypted_suffix"`
	UnencryptedRegex  string     `yaml:"unencrypted_regex" json:"unencrypted_regex"`
	EncryptedRegex    string     `yaml:"encrypted_regex" json:"encrypted_regex"`
	UnencryptedCmtRe  string     `yaml:"unencrypted_comment_regex" json:"unencrypted_comment_regex"`
	EncryptedCmtRe    string     `yaml:"encrypted_comment_regex" json:"encrypted_comment_regex"`
	MACOnlyEncrypted  bool       `yaml:"mac_only_encrypted" json:"mac_only_encrypted"`
	// Keys of other kinds, counted so that a group of them is a group
	// this host cannot open.
	KMS   []any `yaml:"kms" json:"kms"`
	GCP   []any `yaml:"gcp_kms" json:"gcp_kms"`
	HCKMS []any `yaml:"hckms" json:"hckms"`
	Azure []any `yaml:"azure_kv" json:"azure_kv"`
	Vault []any `yaml:"hc_vault" json:"hc_vault"`
	PGP   []any `yaml:"pgp" json:"pgp"`
}

type rawGroup struct {
	Age   []sopsKey `yaml:"age" json:"age"`
	KMS   []any     `yaml:"kms" json:"kms"`
	GCP   []any     `yaml:"gcp_kms" json:"gcp_kms"`
	HCKMS []any     `yaml:"hckms" json:"hckms"`
	Azure []any     `yaml:"azure_kv" json:"azure_kv"`
	Vault []any     `yaml:"hc_vault" json:"hc_vault"`
	PGP   []any     `yaml:"pgp" json:"pgp"`
}

// macOnlyEncryptedInit starts the MAC of a document with
// mac_only_encrypted, as SOPS does, so that its MAC never equals one
// without the setting.
var macOnlyEncryptedInit = []byte{0x8a, 0x3f, 0xd2, 0xad, 0x54, 0xce, 0x66, 0x52, 0x7b, 0x10, 0x34, 0xf3, 0xd1, 0x47, 0xbe, 0xb, 0xb, 0x97, 0x5b, 0x3b, 0xf4, 0x4f, 0x72, 0xc6, 0xfd, 0xad, 0xec, 0x81, 0x76, 0xf2, 0x7d, 0x69}

// sopsDoc is a parsed document: its items (one list per YAML document)
// and its metadata.
type sopsDoc struct {
	docs         [][]sopsItem
	meta         sopsMeta
	lastModified time.Time
	groups       []sopsGroup
}

var errNoMetadata = errors.New("sops metadata not found")

// parseSops reads a YAML or JSON SOPS document.
func parseSops(doc []byte) (*sopsDoc, error) {
	var d *sopsDoc
	var err error
	if t := bytes.TrimSpace(doc); len(t) > 0 && t[0] == '{' {
		d, err = parseSopsJSON(doc)
	} else {
		d, err = parseSopsYAML(doc)
	}
	if err != nil {
		return nil, err
	}
	m := &d.meta
	if d.lastModified, err = time.Parse(time.RFC3339, m.LastModified); err != nil {
		return nil, err
	}
	rules := 0
	for _, r := range []string{m.UnencryptedSuffix, m.EncryptedSuffix, m.UnencryptedRegex, m.EncryptedRegex, m.UnencryptedCmtRe, m.EncryptedCmtRe} {
		if r != "" {
			rules++
		}
	}
	if rules > 1 {
		return nil, errors.New("cannot use more than one of encrypted_suffix, unencrypted_suffix, encrypted_regex, unencrypted_regex, encrypted_comment_regex, or unencrypted_comment_regex in the same file")
	}
	if rules == 0 {
		m.UnencryptedSuffix = "_unencrypted"
	}
	for _, re := range []string{m.UnencryptedRegex, m.EncryptedRegex, m.UnencryptedCmtRe, m.EncryptedCmtRe} {
		if _, err := regexp.Compile(re); err != nil {
			return nil, err
		}
	}
	if len(m.KeyGroups) > 0 {
		for _, g := range m.KeyGroups {
			d.groups = append(d.groups, sopsGroup{Age: g.Age, Others: len(g.KMS) + len(g.GCP) + len(g.HCKMS) + len(g.Azure) + len(g.Vault) + len(g.PGP)})
		}
	} else {
		d.groups = []sopsGroup{{Age: m.Age, Others: len(m.KMS) + len(m.GCP) + len(m.HCKMS) + len(m.Azure) + len(m.Vault) + len(m.PGP)}}
	}
	return d, nil
}

func parseSopsYAML(in []byte) (*sopsDoc, error) {
	if len(in) > 0 {
		// Duplicate keys are refused, as the SOPS store refuses them.
		if err := yaml.NewDecoder(bytes.NewReader(in)).Decode(make(map[string]any)); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
	d := &sopsDoc{}
	found := false
	dec := yaml.NewDecoder(bytes.NewReader(in))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("error unmarshaling input YAML: %w", err)
		}
		items, meta, err := yamlItems(&n)
		if err != nil {
			return nil, err
		}
		if meta != nil {
			if err := meta.Decode(&d.meta); err != nil {
				return nil, fmt.Errorf("reading the sops metadata: %w", err)
			}
			found = true
		}
		d.docs = append(d.docs, items)
	}
	if !found {
		return nil, errNoMetadata
	}
	return d, nil
}

// yamlItems lists a document's top-level items in the order SOPS's YAML
// store makes them, comments included, and returns the "sops" node apart.
func yamlItems(doc *yaml.Node) ([]sopsItem, *yaml.Node, error) {
	var items []sopsItem
	comments := func(c string) {
		for _, line := range strings.Split(c, "\n") {
			if line != "" {
				items = append(items, sopsItem{isCmt: true, comment: line[1:]})
			}
		}
	}
	var meta *yaml.Node
	var walk func(n *yaml.Node, handled bool) error
	walk = func(n *yaml.Node, handled bool) error {
		if !handled {
			comments(n.HeadComment)
			comments(n.LineComment)
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				if err := walk(c, false); err != nil {
					return err
				}
			}
		case yaml.SequenceNode:
			return errors.New("YAML documents that are sequences are not supported")
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if v.Kind == yaml.AliasNode {
					v = v.Alias
				}
				comments(k.HeadComment)
				comments(k.LineComment)
				scalar := v.Kind == yaml.ScalarNode
				if scalar {
					comments(v.HeadComment)
					comments(v.LineComment)
				}
				var key any
				if err := k.Decode(&key); err != nil {
					return err
				}
				ks, ok := key.(string)
				if !ok {
					ks = fmt.Sprint(key)
				}
				if ks == "sops" && ok {
					meta = v
				} else {
					it := sopsItem{key: ks}
					if scalar {
						if err := v.Decode(&it.value); err != nil {
							return err
						}
					} else {
						it.nested = true
					}
					items = append(items, it)
				}
				if scalar {
					comments(v.FootComment)
				}
				comments(k.FootComment)
			}
		case yaml.ScalarNode:
			if n.ShortTag() != "!!null" {
				return errors.New("YAML documents that are values are not supported")
			}
		case yaml.AliasNode:
			return walk(n.Alias, false)
		}
		if !handled {
			comments(n.FootComment)
		}
		return nil
	}
	if err := walk(doc, false); err != nil {
		return nil, nil, fmt.Errorf("error unmarshaling input YAML: %w", err)
	}
	return items, meta, nil
}

func parseSopsJSON(in []byte) (*sopsDoc, error) {
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	d := &sopsDoc{}
	var items []sopsItem
	found := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if key == "sops" {
			if err := json.Unmarshal(raw, &d.meta); err != nil {
				return nil, fmt.Errorf("reading the sops metadata: %w", err)
			}
			found = true
			continue
		}
		it := sopsItem{key: key}
		switch r := bytes.TrimSpace(raw); {
		case len(r) > 0 && (r[0] == '{' || r[0] == '['):
			it.nested = true
		default:
			var v any
			if err := json.Unmarshal(r, &v); err != nil {
				return nil, err
			}
			if f, ok := v.(float64); ok && f == float64(int(f)) && !bytes.ContainsAny(r, ".eE") {
				it.value = int(f)
			} else {
				it.value = v
			}
		}
		items = append(items, it)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if !found {
		return nil, errNoMetadata
	}
	d.docs = [][]sopsItem{items}
	return d, nil
}

// encrypted reports whether a top-level value is encrypted under the
// document's rule (SOPS's shouldBeEncrypted for a path of one key).
func (m *sopsMeta) encrypted(key string, cmts []string) bool {
	switch {
	case m.UnencryptedSuffix != "":
		return !strings.HasSuffix(key, m.UnencryptedSuffix)
	case m.EncryptedSuffix != "":
		return strings.HasSuffix(key, m.EncryptedSuffix)
	case m.UnencryptedRegex != "":
		return !regexp.MustCompile(m.UnencryptedRegex).MatchString(key)
	case m.EncryptedRegex != "":
		return regexp.MustCompile(m.EncryptedRegex).MatchString(key)
	case m.UnencryptedCmtRe != "":
		re := regexp.MustCompile(m.UnencryptedCmtRe)
		for _, c := range cmts {
			if re.MatchString(c) {
				return false
			}
		}
		return true
	case m.EncryptedCmtRe != "":
		re := regexp.MustCompile(m.EncryptedCmtRe)
		for _, c := range cmts {
			if re.MatchString(c) {
				return true
			}
		}
		return false
	}
	return true
}

var encRe = regexp.MustCompile(`^ENC\[AES256_GCM,data:(.+),iv:(.+),tag:(.+),type:(.+)\]`)

// decryptValue opens one SOPS value envelope. It returns the plaintext and
// its declared type.
func decryptValue(ciphertext string, key []byte, aad string) ([]byte, string, error) {
	if ciphertext == "" {
		return nil, "str", nil
	}
	m := encRe.FindStringSubmatch(ciphertext)
	if m == nil {
		return nil, "", errors.New("a value is not a SOPS envelope")
	}
	var parts [3][]byte
	for i := range parts {
		b, err := base64.StdEncoding.DecodeString(m[i+1])
		if err != nil {
			return nil, "", err
		}
		parts[i] = b
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, "", err
	}
	gcm, err := cipher.NewGCMWithNonceSize(block, len(parts[1]))
	if err != nil {
		return nil, "", err
	}
	plain, err := gcm.Open(nil, parts[1], append(parts[0], parts[2]...), []byte(aad))
	if err != nil {
		return nil, "", err
	}
	return plain, m[4], nil
}

// macBytes is what a decrypted value adds to the MAC (SOPS's ToBytes of
// the typed value); comment reports a value whose type is a comment,
// which adds nothing.
func macBytes(plain []byte, typ string) (b []byte, comment bool, err error) {
	switch typ {
	case "str", "bytes":
		return plain, false, nil
	case "int":
		n, err := strconv.Atoi(string(plain))
		return []byte(strconv.Itoa(n)), false, err
	case "float":
		f, err := strconv.ParseFloat(string(plain), 64)
		return []byte(strconv.FormatFloat(f, 'f', -1, 64)), false, err
	case "bool":
		v, err := strconv.ParseBool(string(plain))
		if v {
			return []byte("True"), false, err
		}
		return []byte("False"), false, err
	case "time":
		var t time.Time
		if err := t.UnmarshalText(plain); err != nil {
			return nil, false, err
		}
		b, err := t.MarshalText()
		return b, false, err
	case "comment":
		return nil, true, nil
	}
	return nil, false, fmt.Errorf("unknown datatype")
}

// typeNames are the words for a decrypted value that is not a string.
var typeNames = map[string]string{"int": "number", "float": "number", "bool": "boolean", "bytes": "binary value", "time": "time.Time", "comment": "sops.Comment"}
