package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPushVerify: push --verify sends nothing unless the specs are a
// clean checkout whose HEAD an allowed key signed (real ssh-keygen keys,
// real git commit -S); each refusal says why, before any connection.
func TestPushVerify(t *testing.T) {
	dir, keys := t.TempDir(), t.TempDir()
	sh := func(d string, args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = d
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	for _, k := range []string{"alice", "mallory"} {
		sh(keys, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", k, "-f", k)
	}
	pub, _ := os.ReadFile(filepath.Join(keys, "alice.pub"))
	allowed := filepath.Join(keys, "allowed_signers")
	writeFile(t, allowed, "alice@example.org "+string(pub))
	git := func(args ...string) {
		t.Helper()
		sh(dir, append([]string{"git", "-c", "user.name=a", "-c", "user.email=a@example.org", "-c", "gpg.format=ssh"}, args...)...)
	}
	git("init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "web1", "v.json"), `{"apiVersion":"v1","type":"volume","name":"data","unit":{}}`)
	git("add", "-A")
	specs := filepath.Join(dir, "web1")

	addr, conns := listener(t)
	push := func(want string, code int) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		got := run([]string{"push", "--verify", allowed, addr, specs}, strings.NewReader(""), &stdout, &stderr)
		if got != code || !strings.Contains(stderr.String(), want) {
			t.Fatalf("exit %d, stderr:\n%s\nwant exit %d and %q", got, stderr.String(), code, want)
		}
	}
	git("commit", "-q", "-m", "unsigned")
	push("unsigned: commit ", exitError)
	git("-c", "user.signingkey="+filepath.Join(keys, "mallory"), "commit", "-q", "-S", "--allow-empty", "-m", "mallory")
	push("unknown-key: commit ", exitError)
	git("-c", "user.signingkey="+filepath.Join(keys, "alice"), "commit", "-q", "-S", "--allow-empty", "-m", "alice")
	writeFile(t, filepath.Join(dir, "web1", "w.json"), `{"apiVersion":"v1","type":"volume","name":"more","unit":{}}`)
	push("1 file(s) changed or not committed", exitError)
	if n := conns(); n != 0 {
		t.Fatalf("%d connection(s) made before the check passed", n)
	}
	os.Remove(filepath.Join(dir, "web1", "w.json"))
	// Signed and clean: the check passes and the push goes on (to a
	// listener that is no SSH server, so it fails there, after the check).
	var stdout, stderr bytes.Buffer
	run([]string{"push", "--verify", allowed, addr, specs}, strings.NewReader(""), &stdout, &stderr)
	if !strings.Contains(stderr.String(), "signed by alice@example.org (ssh-ed25519 SHA256:") {
		t.Fatalf("stderr:\n%s", stderr.String())
	}

	var stderr2 bytes.Buffer
	if code := run([]string{"push", "--verify", allowed, addr, "-"}, strings.NewReader(""), &stdout, &stderr2); code != exitUsage || !strings.Contains(stderr2.String(), "stdin cannot be verified") {
		t.Fatalf("stdin: exit %d\n%s", code, stderr2.String())
	}
}
