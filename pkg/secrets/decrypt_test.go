package secrets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"filippo.io/age"

	"github.com/syslet/syslet/pkg/spec"
)

func ids(xs ...*age.X25519Identity) []Identity {
	var out []Identity
	for _, x := range xs {
		out = append(out, Identity{Identity: x, Recipient: x.Recipient().String(), Origin: "test"})
	}
	return out
}

// values the tests encrypt; no error message may ever contain one.
var plainValues = []string{"s3cret-hunter2", "tok-4f9a1c77e2", "with spaces and: colons", "7777"}

func checkNoLeak(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, v := range plainValues {
		if strings.Contains(err.Error(), v) {
			t.Errorf("error message contains a plaintext value: %v", err)
		}
	}
}

func TestOpen(t *testing.T) {
	host, other, third := newAgeKey(t), newAgeKey(t), newAgeKey(t)
	r := func(x *age.X25519Identity) string { return x.Recipient().String() }
	const yamlDoc = "# the database password\ndb-password: s3cret-hunter2\napi-token: tok-4f9a1c77e2\nphrase: 'with spaces and: colons'\n"
	want := map[string]string{"db-password": "s3cret-hunter2", "api-token": "tok-4f9a1c77e2", "phrase": "with spaces and: colons"}

	yamlForHost := sopsEncrypt(t, yamlDoc, "yaml", r(host))
	jsonForHost := sopsEncrypt(t, `{"db-password": "s3cret-hunter2", "api-token": "tok-4f9a1c77e2", "phrase": "with spaces and: colons"}`, "json", r(host))
	forTwo := sopsEncrypt(t, yamlDoc, "yaml", r(other), r(host))
	forOther := sopsEncrypt(t, yamlDoc, "yaml", r(other), r(third))
	number := sopsEncrypt(t, "pin: 7777\n", "yaml", r(host))
	nested := sopsEncrypt(t, "db:\n  password: s3cret-hunter2\n", "yaml", r(host))
	upper := sopsEncrypt(t, "API_TOKEN: tok-4f9a1c77e2\n", "yaml", r(host))

	// A value's envelope changed: GCM authentication fails.
	re := regexp.MustCompile(`(db-password: ENC\[AES256_GCM,data:)([A-Za-z0-9+/])`)
	tamperedValue := re.ReplaceAllFunc(yamlForHost, func(m []byte) []byte {
		c := m[len(m)-1]
		n := byte('A')
		if c == 'A' {
			n = 'B'
		}
		return append(m[:len(m)-1:len(m)-1], n)
	})
	// The MAC of another encryption of the same plaintext (another data
	// key): it does not verify.
	macRe := regexp.MustCompile(`(?m)^    mac: .*$`)
	otherMac := macRe.Find(sopsEncrypt(t, yamlDoc, "yaml", r(host)))
	swappedMac := macRe.ReplaceAll(yamlForHost, otherMac)
	// A key dropped from the document: the MAC no longer matches.
	dropped := regexp.MustCompile(`(?m)^api-token: .*\n`).ReplaceAll(yamlForHost, nil)

	tests := []struct {
		name string
		doc  []byte
		ids  []Identity
		want map[string]string
		is   error
		msg  string
	}{
		{"yaml", yamlForHost, ids(host), want, nil, ""},
		{"json", jsonForHost, ids(host), want, nil, ""},
		{"two recipients, host is second", forTwo, ids(host), want, nil, ""},
		{"two recipients, other host", forTwo, ids(other), want, nil, ""},
		{"one of several identities", yamlForHost, ids(third, host), want, nil, ""},
		{"wrong recipient", forOther, ids(host), nil, ErrNoIdentity, "it is encrypted for " + r(other) + ", " + r(third) + "; this host holds " + r(host)},
		{"no identities", yamlForHost, nil, nil, ErrNoIdentity, "this host holds none"},
		{"tampered value", tamperedValue, ids(host), nil, ErrMAC, ""},
		{"foreign MAC", swappedMac, ids(host), nil, ErrMAC, ""},
		{"key removed", dropped, ids(host), nil, ErrMAC, ""},
		{"number", number, ids(host), nil, ErrShape, `key "pin" holds a number, not a string`},
		{"nested", nested, ids(host), nil, ErrShape, `key "db" must hold a single string`},
		{"uppercase key", upper, ids(host), nil, ErrShape, `key "API_TOKEN" must match [a-z0-9-]+`},
		{"plaintext", []byte("db-password: s3cret-hunter2\n"), ids(host), nil, ErrShape, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Open(tt.doc, tt.ids)
			checkNoLeak(t, err)
			if tt.is != nil {
				if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.msg) {
					t.Fatalf("error %v, want %v containing %q", err, tt.is, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			str := map[string]string{}
			for k, v := range got {
				str[k] = string(v)
			}
			if !maps.Equal(str, tt.want) {
				t.Errorf("got keys %v, want %v", slices.Sorted(maps.Keys(str)), slices.Sorted(maps.Keys(tt.want)))
			}
		})
	}
}

// TestOpenAll: every broken secret is reported by name in one run, and
// the values handed to the executor are zeroed by Wipe.
func TestOpenAll(t *testing.T) {
	host, other := newAgeKey(t), newAgeKey(t)
	stream := func(name string, doc []byte) string {
		return `{"apiVersion": "v1", "type": "secret", "name": "` + name + `", "ciphertext": ` + quoteJSON(string(doc)) + "}\n"
	}
	good := sopsEncrypt(t, "db-password: s3cret-hunter2\n", "yaml", host.Recipient().String())
	bad := sopsEncrypt(t, "api-token: tok-4f9a1c77e2\n", "yaml", other.Recipient().String())
	asJSON := sopsEncrypt(t, `{"token": "tok-4f9a1c77e2"}`, "json", host.Recipient().String())
	specs, rep := spec.Load([]spec.Source{{Name: "s.json", Data: []byte(stream("db", good) + stream("api", bad) + stream("js", asJSON))}})
	if len(rep.Findings) > 0 { // real sops output, YAML and JSON, validates cleanly
		t.Fatalf("%v", rep.Findings)
	}
	var all []Sealed
	for i, s := range specs {
		all = append(all, Sealed{Name: s.Name, Source: s.Source, Path: s.Path(), Keys: s.SecretKeys, Hash: fmt.Sprint(i), Ciphertext: []byte(s.Ciphertext)})
	}
	kr := &Keyring{ids: ids(host)}
	js := all[slices.IndexFunc(all, func(s Sealed) bool { return s.Name == "js" })]
	if o, err := OpenAll([]Sealed{js}, kr); err != nil {
		t.Errorf("JSON ciphertext: %v", err)
	} else if v, _ := o.Value(js, "token"); string(v) != "tok-4f9a1c77e2" {
		t.Errorf("JSON ciphertext: wrong value")
	}

	_, err := OpenAll(all, kr)
	var se *SpecError
	if !errors.As(err, &se) || se.Name != "api" || !errors.Is(err, ErrNoIdentity) {
		t.Fatalf("error %v, want the api secret's", err)
	}
	if !strings.Contains(err.Error(), `secret "api" (s.json [1])`) {
		t.Errorf("error does not name the spec and its place: %v", err)
	}
	checkNoLeak(t, err)

	db := all[slices.IndexFunc(all, func(s Sealed) bool { return s.Name == "db" })]
	o, err := OpenAll([]Sealed{db}, kr)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := o.Decrypt(db)
	if err != nil || string(vals["db-password"]) != "s3cret-hunter2" {
		t.Fatalf("Decrypt: %v", err)
	}
	held, _ := o.Value(db, "db-password")
	o.Wipe()
	if !bytes.Equal(vals["db-password"], make([]byte, len("s3cret-hunter2"))) || !bytes.Equal(held, make([]byte, len(held))) {
		t.Errorf("values not zeroed by Wipe")
	}
	if _, err := o.Decrypt(db); err == nil {
		t.Errorf("Decrypt after Wipe succeeded")
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
