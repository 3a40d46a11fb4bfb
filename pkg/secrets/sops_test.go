package secrets

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"filippo.io/age"
)

// The fixtures of these tests are made by the real sops CLI, pinned as a
// tool in go.mod (`go tool sops`), for age keys generated here with
// filippo.io/age: never by syslet's own code.

var sopsBin = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "tool", "-n", "sops").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
})

// newAgeKey generates an age X25519 identity with age's own key generator.
func newAgeKey(t *testing.T) *age.X25519Identity {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// sopsEncrypt encrypts plaintext (format "yaml" or "json") with the sops
// CLI for the given age recipients. It runs in an empty directory so no
// .sops.yaml of the checkout applies.
func sopsEncrypt(t *testing.T, plaintext, format string, recipients ...string) []byte {
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
	cmd := exec.Command(bin, "encrypt", "--age", strings.Join(recipients, ","), "--input-type", format, "--output-type", format, in)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SOPS_AGE_KEY_FILE=/nonexistent", "HOME="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sops encrypt: %v\n%s", err, stderr.String())
	}
	return out
}
