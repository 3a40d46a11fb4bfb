//go:build integration

package integration

// Issue 10's acceptance on real test hosts: secret specs encrypted with the
// real sops CLI (run on this machine, `go tool sops`) for the guest's own
// recipient (`syslet host-key` in the guest), applied by syslet, and every
// claim checked with podman, systemd and the journal of the guest.

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"filippo.io/age"

	"github.com/syslet/syslet/integration/testhost"
)

const secretSpecs = "/root/secret-specs"

// sopsTool is the sops CLI pinned in go.mod, built once per run.
var sopsTool = sync.OnceValues(func() (string, error) {
	root, err := testhost.ModuleRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "tool", "-n", "sops")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go tool -n sops: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
})

// sopsEncryptFor encrypts a flat YAML document with the real sops CLI for
// the given age recipients, in an empty directory (no .sops.yaml applies).
func sopsEncryptFor(t *testing.T, plaintext string, recipients ...string) string {
	t.Helper()
	bin, err := sopsTool()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "secret.yaml")
	if err := os.WriteFile(in, []byte(plaintext), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "encrypt", "--age", strings.Join(recipients, ","), in)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "SOPS_AGE_KEY_FILE=/nonexistent")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sops encrypt: %v\n%s", err, stderr.String())
	}
	return string(out)
}

// secretSpec is a secret spec as JSON.
func secretSpec(t *testing.T, name, ciphertext string) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]string{"apiVersion": "v1", "type": "secret", "name": name, "ciphertext": ciphertext})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sleeper is a container spec that runs until stopped (catatonit forwards
// SIGTERM, so stops are prompt) and consumes the given Secret= entries.
func secretSleeper(name string, secrets map[string]string) []byte {
	c := map[string]any{"Image": "localhost:5000/busybox:latest", "RunInit": "true", "Exec": "sleep 2147483647"}
	if len(secrets) > 0 {
		c["Secret"] = secrets
	}
	b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "type": "container", "name": name, "unit": map[string]any{"Container": c}})
	return b
}

// randomValue is a secret value unique to this run, so a search for it
// cannot meet it by chance.
func randomValue(prefix string) string {
	b := make([]byte, 12)
	rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// secretsRun collects everything syslet printed in a test, for the search
// for leaked values at the end.
type secretsRun struct {
	t       *testing.T
	h       *testhost.Host
	printed strings.Builder
}

func (s *secretsRun) syslet(args ...string) testhost.Result {
	r := s.h.Run("syslet " + testhost.QuoteArgs(args...))
	s.printed.WriteString(r.Stdout)
	s.printed.WriteString(r.Stderr)
	return r
}

func (s *secretsRun) apply() testhost.Result {
	s.t.Helper()
	r := s.syslet(secretSpecs)
	if !r.OK() {
		s.t.Fatalf("apply failed:\n%s", r)
	}
	return r
}

func (s *secretsRun) write(file string, data []byte) {
	s.t.Helper()
	if err := s.h.WriteFile(filepath.Join(secretSpecs, file), data, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

func (s *secretsRun) recipient() string {
	s.t.Helper()
	r := s.syslet("host-key")
	if !r.OK() || !strings.HasPrefix(strings.TrimSpace(r.Stdout), "age1") {
		s.t.Fatalf("syslet host-key:\n%s", r)
	}
	return strings.TrimSpace(r.Stdout)
}

// podmanSecret is podman's record of one secret, read over its REST API
// (the CLI of podman 5.4 does not print labels).
type podmanSecret struct {
	Spec struct {
		Name   string            `json:"Name"`
		Labels map[string]string `json:"Labels"`
	} `json:"Spec"`
	ID        string `json:"ID"`
	UpdatedAt string `json:"UpdatedAt"`
}

func (s *secretsRun) podmanSecrets() map[string]podmanSecret {
	s.t.Helper()
	out := s.h.MustRun(s.t, "curl -fsS --unix-socket /run/podman/podman.sock http://d/v5.0.0/libpod/secrets/json")
	var list []podmanSecret
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		s.t.Fatalf("podman secrets: %v\n%s", err, out)
	}
	m := map[string]podmanSecret{}
	for _, p := range list {
		m[p.Spec.Name] = p
	}
	return m
}

func (s *secretsRun) invocation(unit string) string {
	s.t.Helper()
	return strings.TrimSpace(s.h.MustRun(s.t, "systemctl show -P InvocationID "+unit))
}

// inside returns what a command run in a container prints.
func (s *secretsRun) inside(container, cmd string) string {
	s.t.Helper()
	return strings.TrimSpace(s.h.MustRun(s.t, "podman exec "+container+" sh -c "+testhost.Quote(cmd)))
}

// hostState is everything an apply could change: the managed files, the
// secret store with labels and update times, and which unit runs since
// when.
func (s *secretsRun) hostState(units ...string) string {
	s.t.Helper()
	files := s.h.MustRun(s.t, "find /etc/containers /etc/syslet /var/lib/syslet -type f -exec sha256sum {} + 2>/dev/null | sort; true")
	var b strings.Builder
	b.WriteString(files)
	for n, p := range s.podmanSecrets() {
		fmt.Fprintf(&b, "secret %s %s %v %s\n", n, p.ID, p.Spec.Labels, p.UpdatedAt)
	}
	for _, u := range units {
		fmt.Fprintf(&b, "%s %s\n", u, s.invocation(u))
	}
	return b.String()
}

// noLeaks searches every file under /etc/containers, /etc/syslet and
// /var/lib/syslet, the guest's whole journal, and everything syslet printed
// in the test for each value.
func (s *secretsRun) noLeaks(values ...string) {
	s.t.Helper()
	var pats []string
	for _, v := range values {
		pats = append(pats, "-e", v)
	}
	args := testhost.QuoteArgs(pats...)
	// /etc/syslet exists only once syslet stored something there.
	if r := s.h.Run("grep -rlaF " + args + " $(ls -d /etc/containers /etc/syslet /var/lib/syslet 2>/dev/null)"); r.Code != 1 {
		s.t.Errorf("a secret value is in a file syslet manages (grep exit %d):\n%s", r.Code, r)
	}
	if r := s.h.Run("journalctl --no-pager -o export | grep -caF " + args); r.Code != 1 {
		s.t.Errorf("a secret value is in the journal (grep exit %d):\n%s", r.Code, r)
	}
	for _, v := range values {
		if strings.Contains(s.printed.String(), v) {
			s.t.Errorf("syslet printed the value %q", v)
		}
	}
	s.t.Logf("searched /etc/containers, /etc/syslet, /var/lib/syslet, the journal and %d bytes of syslet output for %d values: none found", s.printed.Len(), len(values))
}

func secretsHost(t *testing.T) *secretsRun {
	t.Helper()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket && mkdir -p "+secretSpecs)
	return &secretsRun{t: t, h: h}
}

// TestSecretsConsumeRotatePrune: a container sees a secret as an
// environment variable and as a file; rotating the ciphertext changes the
// label and restarts exactly the containers that use it, which then see
// the new values; a secret spec removed from the specs has its podman
// secrets pruned while an unlabelled podman secret of the same name is
// left alone and reported; no value is anywhere syslet writes, logs or
// prints (but in --diff with SYSLET_SHOW_SECRETS=true).
func TestSecretsConsumeRotatePrune(t *testing.T) {
	t.Parallel()
	s := secretsHost(t)
	host := s.recipient()
	pw1, tok1, extra := randomValue("pw"), randomValue("tok"), randomValue("extra")
	pw2, tok2 := randomValue("pw"), randomValue("tok")

	s.write("10-app-secret.json", secretSpec(t, "app", sopsEncryptFor(t, fmt.Sprintf("password: %s\ntoken: %s\n", pw1, tok1), host)))
	s.write("11-extra-secret.json", secretSpec(t, "extra", sopsEncryptFor(t, "key: "+extra+"\n", host)))
	s.write("20-consumer.json", secretSleeper("consumer", map[string]string{"app-password": "type=env,target=APP_PASSWORD", "app-token": ""}))
	s.write("21-bystander.json", secretSleeper("bystander", map[string]string{"extra-key": "type=env,target=EXTRA"}))
	s.write("22-plain.json", secretSleeper("plain", nil))

	d := s.syslet("--diff", secretSpecs)
	if !d.OK() || !strings.Contains(d.Stdout, "+ app-password = (secret)") || !strings.Contains(d.Stdout, "+ app-token = (secret)") {
		t.Fatalf("--diff does not plan the secrets as (secret):\n%s", d)
	}
	show := s.h.Run("SYSLET_SHOW_SECRETS=true syslet --diff " + secretSpecs) // not recorded: it reveals by design
	if !show.OK() || !strings.Contains(show.Stdout, fmt.Sprintf("app-password = %q", pw1)) {
		t.Errorf("SYSLET_SHOW_SECRETS=true --diff does not show the value:\n%s", show)
	}
	if j := s.h.Run("SYSLET_SHOW_SECRETS=true syslet --diff --output json " + secretSpecs); strings.Contains(j.Stdout+j.Stderr, pw1) {
		t.Errorf("--output json shows a value even with SYSLET_SHOW_SECRETS=true")
	}

	s.apply()
	if got := s.inside("consumer", `echo "$APP_PASSWORD"`); got != pw1 {
		t.Errorf("consumer sees APP_PASSWORD=%q, want the decrypted value", got)
	}
	if got := s.inside("consumer", "cat /run/secrets/app-token"); got != tok1 {
		t.Errorf("consumer sees /run/secrets/app-token=%q, want the decrypted value", got)
	}
	if got := s.inside("bystander", `echo "$EXTRA"`); got != extra {
		t.Errorf("bystander sees EXTRA=%q", got)
	}
	sec := s.podmanSecrets()
	hash1 := sec["app-password"].Spec.Labels["syslet/hash"]
	if hash1 == "" || sec["app-token"].Spec.Labels["syslet/hash"] != hash1 {
		t.Fatalf("app secrets labels: %v / %v", sec["app-password"].Spec.Labels, sec["app-token"].Spec.Labels)
	}
	if d := s.syslet("--diff", "--detailed-exitcode", secretSpecs); d.Code != 0 {
		t.Errorf("a second plan is not empty (exit %d):\n%s", d.Code, d)
	}

	// Rotate the app secret: new values, new ciphertext.
	before := map[string]string{}
	for _, u := range []string{"consumer.service", "bystander.service", "plain.service"} {
		before[u] = s.invocation(u)
	}
	ct2 := sopsEncryptFor(t, fmt.Sprintf("password: %s\ntoken: %s\n", pw2, tok2), host)
	s.write("10-app-secret.json", secretSpec(t, "app", ct2))
	d = s.syslet("--diff", secretSpecs)
	if !strings.Contains(d.Stdout, "~ app-password = (secret)  ciphertext changed") || !strings.Contains(d.Stdout, "secret app-password changed") {
		t.Errorf("--diff of the rotation:\n%s", d)
	}
	s.apply()
	sum := sha256.Sum256([]byte(ct2))
	sec = s.podmanSecrets()
	if got := sec["app-password"].Spec.Labels["syslet/hash"]; got != hex.EncodeToString(sum[:]) || got == hash1 {
		t.Errorf("label after rotation %q, want sha256 of the new ciphertext %x (was %s)", got, sum, hash1)
	}
	if sec["extra-key"].Spec.Labels["syslet/hash"] == "" {
		t.Errorf("extra-key lost its label")
	}
	if s.invocation("consumer.service") == before["consumer.service"] {
		t.Errorf("consumer was not restarted by the rotation of a secret it uses")
	}
	for _, u := range []string{"bystander.service", "plain.service"} {
		if got := s.invocation(u); got != before[u] {
			t.Errorf("%s was restarted (InvocationID %s -> %s), but uses no rotated secret", u, before[u], got)
		}
	}
	if got := s.inside("consumer", `echo "$APP_PASSWORD"; cat /run/secrets/app-token`); got != pw2+"\n"+tok2 {
		t.Errorf("after rotation the consumer sees %q, want the new values", got)
	}

	// Remove the extra secret (and its user); an unlabelled podman secret
	// named like the spec is someone else's.
	s.h.MustRun(t, "printf %s not-syslets | podman secret create extra - >/dev/null")
	s.h.MustRun(t, "rm "+secretSpecs+"/11-extra-secret.json "+secretSpecs+"/21-bystander.json")
	d = s.syslet("--diff", secretSpecs)
	if !strings.Contains(d.Stdout, "- extra-key = (secret)  no longer declared") ||
		!strings.Contains(d.Stdout, "= secret extra: podman secret without the syslet/hash label: not managed by syslet, left alone") {
		t.Errorf("--diff of the removal does not prune extra-key and report extra:\n%s", d)
	}
	r := s.apply()
	if !strings.Contains(r.Stdout, "secret extra: podman secret without the syslet/hash label") {
		t.Errorf("the apply does not report the unlabelled secret:\n%s", r.Stdout)
	}
	sec = s.podmanSecrets()
	if _, ok := sec["extra-key"]; ok {
		t.Errorf("extra-key was not pruned")
	}
	if p, ok := sec["extra"]; !ok || len(p.Spec.Labels) != 0 {
		t.Errorf("the unlabelled secret extra was touched: %+v (present %v)", p, ok)
	}
	if _, ok := sec["app-password"]; !ok {
		t.Errorf("app-password was pruned")
	}
	s.noLeaks(pw1, tok1, extra, pw2, tok2)
}

// TestSecretsRefusedAndHostKeyRotation: a secret for another host, or one
// whose MAC does not verify, stops --diff and apply by spec name and
// changes nothing; after the SSH host key is replaced by a new ed25519
// key, the secrets encrypted for the old key still open through the
// identity cache, and a secret encrypted for the new key opens too.
func TestSecretsRefusedAndHostKeyRotation(t *testing.T) {
	t.Parallel()
	s := secretsHost(t)
	old := s.recipient()
	v1, v2, v3 := randomValue("old"), randomValue("new"), randomValue("lost")
	s.write("10-db-secret.json", secretSpec(t, "db", sopsEncryptFor(t, "password: "+v1+"\n", old)))
	s.write("20-db.json", secretSleeper("db", map[string]string{"db-password": "type=env,target=DB_PASSWORD"}))
	s.apply()
	if got := s.inside("db", `echo "$DB_PASSWORD"`); got != v1 {
		t.Fatalf("db sees %q", got)
	}
	if c := s.h.MustRun(t, "stat -c %a /var/lib/syslet/key.txt"); strings.TrimSpace(c) != "600" {
		t.Errorf("identity cache mode %s, want 600", c)
	}

	// A secret for another host's key, and one tampered with after
	// encryption: both refused by name, before anything changes.
	other, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	wrong := sopsEncryptFor(t, "password: "+v3+"\n", other.Recipient().String())
	good := sopsEncryptFor(t, "password: "+v3+"\n", old)
	tampered := strings.Replace(good, "password: ENC[AES256_GCM,data:", "password: ENC[AES256_GCM,data:AAAA", 1)
	state := s.hostState("db.service")
	for _, c := range []struct{ name, ct, want string }{
		{"wrong recipient", wrong, "no identity of this host can open it: it is encrypted for " + other.Recipient().String()},
		{"bad MAC", tampered, "MAC check failed"},
	} {
		s.write("30-cache-secret.json", secretSpec(t, "cache", c.ct))
		s.write("40-cache.json", secretSleeper("cache", map[string]string{"cache-password": ""}))
		for _, args := range [][]string{{"--diff", secretSpecs}, {secretSpecs}} {
			r := s.syslet(args...)
			if r.Code != 1 || !strings.Contains(r.Stderr, `secret "cache" (`+secretSpecs+`/30-cache-secret.json [0]): `+c.want) ||
				!strings.Contains(r.Stderr, "nothing was changed") {
				t.Errorf("%s: syslet %s: want exit 1 naming the secret spec\n%s", c.name, strings.Join(args, " "), r)
			}
			if strings.Contains(r.Stdout, "Applying") {
				t.Errorf("%s: syslet %s went on to apply", c.name, strings.Join(args, " "))
			}
		}
		if now := s.hostState("db.service"); now != state {
			t.Errorf("%s: the host changed:\nbefore:\n%s\nafter:\n%s", c.name, state, now)
		}
	}
	s.h.MustRun(t, "rm "+secretSpecs+"/30-cache-secret.json "+secretSpecs+"/40-cache.json")

	// Replace the host key with a new ed25519 key.
	s.h.MustRun(t, "rm -f /etc/ssh/ssh_host_ed25519_key /etc/ssh/ssh_host_ed25519_key.pub && ssh-keygen -q -t ed25519 -N '' -f /etc/ssh/ssh_host_ed25519_key")
	fresh := s.recipient()
	if fresh == old {
		t.Fatalf("host-key still prints the old recipient %s", old)
	}
	if d := s.syslet("--diff", "--detailed-exitcode", secretSpecs); d.Code != 0 {
		t.Errorf("after the host key change, the secret for the old key does not open or the plan is not empty (exit %d):\n%s", d.Code, d)
	}
	// The old key's secret rotated (still for the old key), and a new
	// secret for the new key only.
	s.write("10-db-secret.json", secretSpec(t, "db", sopsEncryptFor(t, "password: "+v3+"\n", old)))
	s.write("30-fresh-secret.json", secretSpec(t, "fresh", sopsEncryptFor(t, "token: "+v2+"\n", fresh)))
	s.write("40-fresh.json", secretSleeper("fresh", map[string]string{"fresh-token": "type=env,target=TOKEN"}))
	s.apply()
	if got := s.inside("db", `echo "$DB_PASSWORD"`); got != v3 {
		t.Errorf("db sees %q after rotation, want the value encrypted for the old key", got)
	}
	if got := s.inside("fresh", `echo "$TOKEN"`); got != v2 {
		t.Errorf("fresh sees %q, want the value encrypted for the new key", got)
	}
	cache := s.h.MustRun(t, "grep -c '^AGE-SECRET-KEY-1' /var/lib/syslet/key.txt")
	if strings.TrimSpace(cache) != "2" {
		t.Errorf("identity cache holds %s identities, want the old and the new one", cache)
	}
	s.noLeaks(v1, v2, v3)
}

// exampleSecret is the secret spec of examples/ and its demo plaintext:
// the committed ciphertext is encrypted for a key nobody holds, so tests
// (like the demo) encrypt the plaintext again for their guest.
const (
	exampleSecretName  = "shop"
	exampleSecretFile  = "70-secrets.json"
	examplePlaintextIn = "examples/secrets/shop.yaml"
)

func examplePlaintext(t *testing.T) string {
	t.Helper()
	root, err := testhost.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, examplePlaintextIn))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// encryptExamples rewrites DIR/70-secrets.json in the guest with the
// example secret encrypted for the guest's own recipient, as
// examples/demo.sh does, so `syslet DIR` can open it there.
func encryptExamples(t *testing.T, h *testhost.Host, dir string) {
	t.Helper()
	r := h.Run("syslet host-key")
	if !r.OK() {
		t.Fatalf("syslet host-key:\n%s", r)
	}
	ct := sopsEncryptFor(t, examplePlaintext(t), strings.TrimSpace(r.Stdout))
	if err := h.WriteFile(filepath.Join(dir, exampleSecretFile), secretSpec(t, exampleSecretName, ct), 0o644); err != nil {
		t.Fatal(err)
	}
}

// createExampleSecrets stores the example secret's values in podman by
// hand, for tests that install rendered units without syslet's apply.
func createExampleSecrets(t *testing.T, h *testhost.Host) {
	t.Helper()
	for _, line := range strings.Split(examplePlaintext(t), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		h.MustRun(t, fmt.Sprintf("printf %%s %s | podman secret create %s - >/dev/null", testhost.Quote(v), testhost.Quote(exampleSecretName+"-"+k)))
	}
}
