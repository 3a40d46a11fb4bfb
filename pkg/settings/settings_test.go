package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in, err string
		check         func(t *testing.T, s Settings)
	}{
		{name: "empty object", in: `{}`},
		{name: "identities", in: `{"sshKeyPath": "/k", "ageIdentityFiles": ["/a"]}`, check: func(t *testing.T, s Settings) {
			if s.SSHKeyPath != "/k" || len(s.AgeIdentityFiles) != 1 {
				t.Errorf("%+v", s)
			}
		}},
		{name: "notify target", in: `{"notify": [{"type": "webhook", "url": "https://h.example/x", "secretFile": "/etc/syslet/n.secret", "events": ["failed"], "timeout": "2s", "attempts": 2}]}`,
			check: func(t *testing.T, s Settings) {
				if len(s.Notify) != 1 || time.Duration(s.Notify[0].Timeout) != 2*time.Second || s.Notify[0].Attempts != 2 || s.Notify[0].Events[0] != "failed" {
					t.Errorf("%+v", s.Notify)
				}
			}},
		{name: "unknown field", in: `{"sshKeyPat": "/x"}`, err: `unknown field "sshKeyPat"`},
		{name: "unknown target field", in: `{"notify": [{"type": "webhook", "uri": "x"}]}`, err: `unknown field "uri"`},
		{name: "bad duration", in: `{"notify": [{"type": "ntfy", "timeout": "soon"}]}`, err: `"soon" is not a duration`},
		{name: "relative key path names the field", in: `{"sshKeyPath": "keys/host"}`, err: `settings /etc/syslet/syslet.json: sshKeyPath: path "keys/host" must be absolute`},
		{name: "relative identity file", in: `{"ageIdentityFiles": ["/a", "b"]}`, err: `ageIdentityFiles[1]: path "b" must be absolute`},
		{name: "two objects", in: `{} {}`, err: "more than one JSON object"},
		{name: "malformed", in: `{"sshKeyPath": `, err: "settings /etc/syslet/syslet.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}

func TestLoadMissingFileIsDefaults(t *testing.T) {
	s, err := Load(t.TempDir())
	if err != nil || s.SSHKeyPath != "" || s.Notify != nil {
		t.Fatalf("%+v %v", s, err)
	}
}

func TestReadCredential(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, file, want, err string
	}{
		{"private", write("ok", "  tok-123\n", 0o600), "tok-123", ""},
		{"readable by others", write("open", "tok-456", 0o644), "", "readable by group or others (mode 0644): chmod 600 it"},
		{"empty", write("empty", "\n", 0o600), "", "is empty"},
		{"directory", dir, "", "is not a regular file"},
		{"missing", filepath.Join(dir, "none"), "", "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ReadCredential(tc.file)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "tok-") {
					t.Errorf("error shows the credential: %v", err)
				}
				return
			}
			if err != nil || string(b) != tc.want {
				t.Fatalf("%q %v", b, err)
			}
		})
	}
}
