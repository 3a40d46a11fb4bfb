package secrets

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sopsEncryptWith runs the sops CLI with extra flags and, when config is
// not empty, a .sops.yaml beside the input (how key groups are declared).
func sopsEncryptWith(t *testing.T, plaintext, format, config string, args ...string) []byte {
	t.Helper()
	bin, err := sopsBin()
	if err != nil {
		t.Fatalf("building the sops tool (go tool -n sops): %v", err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "secret."+format)
	if err := os.WriteFile(in, []byte(plaintext), 0o600); err != nil {
		t.Fatal(err)
	}
	if config != "" {
		if err := os.WriteFile(filepath.Join(dir, ".sops.yaml"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, append(append([]string{"encrypt"}, args...), "--input-type", format, "--output-type", format, in)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SOPS_AGE_KEY_FILE=/nonexistent", "HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sops encrypt %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// TestOpenReadsWhatSopsWrites opens documents the sops CLI encrypted with
// each of its rules for what is encrypted and what the MAC covers, with
// comments, an empty value, and key groups split by Shamir's scheme: the
// document model here is SOPS's own, not the library's code.
func TestOpenReadsWhatSopsWrites(t *testing.T) {
	host, other := newAgeKey(t), newAgeKey(t)
	rh, ro := host.Recipient().String(), other.Recipient().String()
	const doc = "# a comment\npassword: s3cret-hunter2\npublic-note: plain words\n\n# another\nempty: ''\ntoken: tok-4f9a1c77e2 # inline\n"
	want := map[string]string{"password": "s3cret-hunter2", "public-note": "plain words", "empty": "", "token": "tok-4f9a1c77e2"}
	groups := "creation_rules:\n  - shamir_threshold: 2\n    key_groups:\n      - age: [" + rh + "]\n      - age: [" + ro + "]\n"
	third := newAgeKey(t)
	twoOfThree := "creation_rules:\n  - shamir_threshold: 2\n    key_groups:\n      - age: [" + ro + "]\n      - age: [" + third.Recipient().String() + "]\n      - age: [" + rh + "]\n"
	macOnly := "creation_rules:\n  - age: " + rh + "\n    unencrypted_regex: ^public\n    mac_only_encrypted: true\n"
	commentRule := "creation_rules:\n  - age: " + rh + "\n    encrypted_comment_regex: ^ enc$\n"
	tests := []struct {
		name   string
		format string
		doc    string
		config string
		args   []string
		ids    []Identity
		is     error
	}{
		{"yaml with comments", "yaml", doc, "", []string{"--age", rh}, ids(host), nil},
		{"json", "json", `{"password": "s3cret-hunter2", "public-note": "plain words", "empty": "", "token": "tok-4f9a1c77e2"}`, "", []string{"--age", rh}, ids(host), nil},
		{"unencrypted regex", "yaml", doc, "", []string{"--age", rh, "--unencrypted-regex", "^public"}, ids(host), nil},
		{"encrypted regex", "yaml", doc, "", []string{"--age", rh, "--encrypted-regex", "^(password|token)$"}, ids(host), nil},
		{"encrypted suffix", "yaml", doc, "", []string{"--age", rh, "--encrypted-suffix", "word"}, ids(host), nil},
		{"mac only encrypted", "yaml", doc, macOnly, nil, ids(host), nil},
		{"encrypted comment regex", "yaml", "# enc\npassword: s3cret-hunter2\n# enc\ntoken: tok-4f9a1c77e2\npublic-note: plain words\nempty: ''\n", commentRule, nil, ids(host), nil},
		{"two key groups, both needed", "yaml", doc, groups, nil, ids(host, other), nil},
		{"two key groups, one held", "yaml", doc, groups, nil, ids(host), ErrNoIdentity},
		{"three key groups, two of them held", "yaml", doc, twoOfThree, nil, ids(other, host), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := sopsEncryptWith(t, tt.doc, tt.format, tt.config, tt.args...)
			got, err := Open(enc, tt.ids)
			checkNoLeak(t, err)
			if tt.is != nil {
				if !errors.Is(err, tt.is) {
					t.Fatalf("error %v, want %v", err, tt.is)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v\n%s", err, enc)
			}
			str := map[string]string{}
			for k, v := range got {
				str[k] = string(v)
			}
			if !maps.Equal(str, want) {
				t.Errorf("got %q, want %q", str, want)
			}
			// Any value changed in the clear breaks the MAC, unless the
			// MAC covers only encrypted values.
			if tampered := bytes.Replace(enc, []byte("plain words"), []byte("plain wordz"), 1); !bytes.Equal(tampered, enc) {
				_, err := Open(tampered, tt.ids)
				if macOnly := strings.Contains(tt.name, "mac only"); macOnly != (err == nil) {
					t.Errorf("a clear value changed: error %v (the MAC covers only encrypted values: %v)", err, macOnly)
				}
			}
		})
	}
}
