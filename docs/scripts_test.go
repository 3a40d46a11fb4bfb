package docs

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// TestEncryptSecretSharesSopsWithTheDemo: the demo runs
// examples/encrypt-secret.sh under Task's build settings (Taskfile.yml's
// env: CGO_ENABLED=0 and GOFLAGS), the tutorial's step 3 runs it in a plain
// shell. Both must resolve the same sops binary (`go tool -n sops` names
// it), or the tutorial builds sops again (minutes) right after the demo
// built it. A go wrapper in PATH records the path the real go command
// resolves for each; the script then encrypts with that sops as usual.
func TestEncryptSecretSharesSopsWithTheDemo(t *testing.T) {
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("no go command in PATH, which go test itself needs:", err)
	}
	plain := withoutEnv(os.Environ(), "CGO_ENABLED", "GOFLAGS")
	underTask := append(withoutEnv(os.Environ(), "CGO_ENABLED", "GOFLAGS"), "CGO_ENABLED=0", "GOFLAGS="+taskfileEnv(t, "GOFLAGS"))
	resolved := map[string]string{}
	for name, env := range map[string][]string{"a plain shell": plain, "Task's build settings": underTask} {
		bin := t.TempDir()
		log := filepath.Join(bin, "resolved")
		wrapper := "#!/bin/sh\nif [ \"$1 $2 $3\" = 'tool -n sops' ]; then\n" +
			"  out=$(" + realGo + " \"$@\") || exit\n  echo \"$out\" > " + log + "\n  echo \"$out\"\n  exit\nfi\n" +
			"exec " + realGo + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(bin, "go"), []byte(wrapper), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", filepath.Join("..", "examples", "encrypt-secret.sh"), "shop", filepath.Join("..", "examples", "secrets", "shop.yaml"),
			"age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p")
		cmd.Env = append(env, "PATH="+bin+":"+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("under %s: %v\n%s", name, err, out)
		}
		path, err := os.ReadFile(log)
		if err != nil {
			t.Fatalf("under %s the script did not ask go tool -n sops: %v", name, err)
		}
		resolved[name] = strings.TrimSpace(string(path))
	}
	if resolved["a plain shell"] != resolved["Task's build settings"] {
		t.Errorf("encrypt-secret.sh resolves a different sops in a plain shell than under Task's build settings, so it builds sops twice:\n plain shell: %s\n under Task:  %s",
			resolved["a plain shell"], resolved["Task's build settings"])
	}
}

// taskfileEnv is the value Taskfile.yml's top-level env gives key.
func taskfileEnv(t *testing.T, key string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "Taskfile.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(text), "\n") {
		if v, ok := strings.CutPrefix(l, "  "+key+": "); ok {
			return strings.Trim(v, `'"`)
		}
	}
	t.Fatalf("Taskfile.yml sets no %s", key)
	return ""
}

// withoutEnv is env without the variables named.
func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, e := range env {
		name, _, _ := strings.Cut(e, "=")
		if !slices.Contains(names, name) {
			out = append(out, e)
		}
	}
	return out
}
