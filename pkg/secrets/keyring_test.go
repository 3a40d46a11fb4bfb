package secrets

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hostRoot makes a root directory holding files at host paths.
func hostRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func testKey(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLoadKeyring(t *testing.T) {
	vs := readVectors(t)
	ageFile := newAgeKey(t)
	tests := []struct {
		name     string
		files    map[string]string
		wantErr  string // substring; "" = no error
		wantRcpt []string
		warn     string
	}{
		{"default host key", map[string]string{DefaultSSHKeyPath: testKey(t, "hostkey-1")}, "", []string{vs[0].Recipient}, ""},
		{"no key at all only warns", nil, "", nil, "no SSH host key at /etc/ssh/ssh_host_ed25519_key"},
		{"explicit key path", map[string]string{
			SettingsPath: `{"sshKeyPath": "/srv/keys/host"}`, "/srv/keys/host": testKey(t, "hostkey-2"),
			DefaultSSHKeyPath: testKey(t, "hostkey-1")}, "", []string{vs[1].Recipient}, ""},
		{"explicit key path missing", map[string]string{SettingsPath: `{"sshKeyPath": "/srv/keys/host"}`},
			"sshKeyPath /srv/keys/host (set in /etc/syslet/syslet.json) does not exist", nil, ""},
		{"relative key path", map[string]string{SettingsPath: `{"sshKeyPath": "keys/host"}`}, `path "keys/host" must be absolute`, nil, ""},
		{"unknown setting", map[string]string{SettingsPath: `{"sshKeyPat": "/x"}`}, `unknown field "sshKeyPat"`, nil, ""},
		{"malformed settings", map[string]string{SettingsPath: `{"sshKeyPath": `}, "settings /etc/syslet/syslet.json", nil, ""},
		{"not ed25519", map[string]string{DefaultSSHKeyPath: testKey(t, "hostkey-ecdsa")}, "SSH host key /etc/ssh/ssh_host_ed25519_key: not an ed25519 key", nil, ""},
		{"identity files", map[string]string{
			SettingsPath:            `{"ageIdentityFiles": ["/etc/syslet/extra.key"]}`,
			"/etc/syslet/extra.key": "# created by age-keygen\n" + ageFile.String() + "\n",
			DefaultSSHKeyPath:       testKey(t, "hostkey-1")}, "", []string{vs[0].Recipient, ageFile.Recipient().String()}, ""},
		{"identity file missing", map[string]string{SettingsPath: `{"ageIdentityFiles": ["/etc/syslet/extra.key"]}`},
			"age identity file /etc/syslet/extra.key (listed in /etc/syslet/syslet.json ageIdentityFiles) does not exist", nil, ""},
		{"identity file garbage", map[string]string{SettingsPath: `{"ageIdentityFiles": ["/k"]}`, "/k": "AGE-SECRET-KEY-1NOPE\n"},
			"age identity file /k", nil, ""},
		{"cache line garbage", map[string]string{CachePath: "# c\nAGE-SECRET-KEY-1NOPE\n"},
			"identity cache /var/lib/syslet/key.txt, line 2: not an age X25519 identity", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := Load(hostRoot(t, tt.files))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "AGE-SECRET-KEY") {
					t.Errorf("error shows key material: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := recipients(k); !slices.Equal(got, tt.wantRcpt) {
				t.Errorf("recipients %v, want %v", got, tt.wantRcpt)
			}
			if tt.warn != "" && !slices.ContainsFunc(k.Warnings, func(w string) bool { return strings.Contains(w, tt.warn) }) {
				t.Errorf("warnings %q, want %q", k.Warnings, tt.warn)
			}
		})
	}
}

func TestHostRecipientWithoutKey(t *testing.T) {
	k, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.HostRecipient(); !errors.Is(err, ErrNoHostKey) {
		t.Errorf("error %v, want ErrNoHostKey", err)
	}
}

// TestCacheKeepsRotatedKeys: the cache only grows, is 0600 in a 0700
// directory, is written once per key, and keeps opening secrets for a
// host key that has since been replaced.
func TestCacheKeepsRotatedKeys(t *testing.T) {
	vs := readVectors(t)
	root := hostRoot(t, map[string]string{DefaultSSHKeyPath: testKey(t, "hostkey-1")})
	remember := func() *Keyring {
		t.Helper()
		k, err := Load(root)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // idempotent
			if err := k.Remember(); err != nil {
				t.Fatal(err)
			}
		}
		return k
	}
	remember()
	cache := filepath.Join(root, CachePath)
	fi, err := os.Stat(cache)
	if err != nil {
		t.Fatal(err)
	}
	di, err := os.Stat(filepath.Dir(cache))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Errorf("cache mode %v in %v, want 0600 in 0700", fi.Mode(), di.Mode())
	}
	first, _ := os.ReadFile(cache)
	if strings.Count(string(first), "AGE-SECRET-KEY-") != 1 || !strings.Contains(string(first), vs[0].Identity) {
		t.Fatalf("cache after two runs:\n%s", first)
	}

	// Replace the host key: the old identity still comes from the cache.
	if err := os.WriteFile(filepath.Join(root, DefaultSSHKeyPath), []byte(testKey(t, "hostkey-2")), 0o600); err != nil {
		t.Fatal(err)
	}
	k := remember()
	if got, want := recipients(k), []string{vs[1].Recipient, vs[0].Recipient}; !slices.Equal(got, want) {
		t.Errorf("recipients after rotation %v, want %v", got, want)
	}
	if r, _ := k.HostRecipient(); r != vs[1].Recipient {
		t.Errorf("host recipient %s, want the new key's %s", r, vs[1].Recipient)
	}
	second, _ := os.ReadFile(cache)
	if !strings.HasPrefix(string(second), string(first)) || strings.Count(string(second), "AGE-SECRET-KEY-") != 2 {
		t.Errorf("cache was not appended to:\n%s", second)
	}

	// A cache someone made readable is still read, with a warning, and
	// tightened by the next Remember.
	if err := os.Chmod(cache, 0o644); err != nil {
		t.Fatal(err)
	}
	k = remember()
	if len(k.Warnings) == 0 {
		t.Errorf("no warning for a world-readable cache")
	}
	if fi, _ := os.Stat(cache); fi.Mode().Perm() != 0o600 {
		t.Errorf("cache mode %v after Remember, want 0600", fi.Mode())
	}
}

// recipients lists the recipients the host can decrypt for, in the order
// of Identities.
func recipients(k *Keyring) []string {
	var out []string
	for _, id := range k.Identities() {
		if id.Recipient != "" {
			out = append(out, id.Recipient)
		}
	}
	return out
}
