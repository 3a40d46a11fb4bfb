package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostKey: `syslet host-key` prints the recipient of the SSH host key
// (the vector made by libsodium and age-keygen) and caches the identity.
func TestHostKey(t *testing.T) {
	root := t.TempDir()
	key, err := os.ReadFile(filepath.Join("..", "..", "pkg", "secrets", "testdata", "hostkey-1"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "etc/ssh/ssh_host_ed25519_key")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, key, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "host-key", "--root", root)
	if code != exitOK || strings.TrimSpace(out) != "age1f7ff6qlwn63f4a50292vzgvdha4ccep6gk4a9cgsnrqwn9lxuq8saq804k" {
		t.Fatalf("host-key: exit %d, %q %q", code, out, errOut)
	}
	cache, err := os.ReadFile(filepath.Join(root, "var/lib/syslet/key.txt"))
	if err != nil || !strings.Contains(string(cache), "AGE-SECRET-KEY-1") {
		t.Errorf("identity not cached: %v", err)
	}
	if strings.Contains(out+errOut, "AGE-SECRET-KEY") {
		t.Errorf("host-key printed the private identity")
	}

	if code, _, errOut := runCLI(t, "host-key", "--root", t.TempDir()); code != exitError || !strings.Contains(errOut, "no SSH ed25519 host key at /etc/ssh/ssh_host_ed25519_key") {
		t.Errorf("host-key without a key: exit %d, %q", code, errOut)
	}
}
