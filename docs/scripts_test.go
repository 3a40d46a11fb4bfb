package docs

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGo writes, into a new directory for PATH, a go command whose "go
// tool sops" and "go tool -n sops" take delay seconds (building sops) and
// a sops that prints a fixed document.
func fakeGo(t *testing.T, delay string) string {
	t.Helper()
	bin := t.TempDir()
	sops := filepath.Join(bin, "sops")
	goScript := "#!/bin/sh\ncase \"$1 $2 $3\" in\n" +
		"'tool -n sops') sleep " + delay + "; echo " + sops + " ;;\n" +
		"'tool sops '*) sleep " + delay + "; shift 2; exec " + sops + " \"$@\" ;;\n" +
		"*) echo \"unexpected: go $*\" >&2; exit 99 ;;\nesac\n"
	for name, body := range map[string]string{"go": goScript, "sops": "#!/bin/sh\necho 'db: ENC[AES256_GCM,data:x]'\n"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// TestEncryptSecretSaysItBuildsSops: while go tool builds sops (its first
// use on a machine: half a minute to minutes), examples/encrypt-secret.sh
// says so on stderr instead of being silent; when sops is built already it
// says nothing. Its stdout is the spec either way.
func TestEncryptSecretSaysItBuildsSops(t *testing.T) {
	for _, tc := range []struct {
		delay string
		says  bool
	}{{"2", true}, {"0", false}} {
		cmd := exec.Command("bash", filepath.Join("..", "examples", "encrypt-secret.sh"), "shop", filepath.Join("..", "examples", "secrets", "shop.yaml"), "age1test")
		cmd.Env = append(os.Environ(), "PATH="+fakeGo(t, tc.delay)+":"+os.Getenv("PATH"))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("delay %s: %v\n%s", tc.delay, err, stderr.String())
		}
		var spec struct{ Name, Ciphertext string }
		if err := json.Unmarshal(out, &spec); err != nil || spec.Name != "shop" || !strings.Contains(spec.Ciphertext, "ENC[") {
			t.Errorf("delay %s: stdout is not the spec: %v\n%s", tc.delay, err, out)
		}
		if says := strings.Contains(stderr.String(), "preparing sops"); says != tc.says {
			t.Errorf("delay %s: says it prepares sops: %v, want %v; stderr:\n%s", tc.delay, says, tc.says, stderr.String())
		}
	}
}
