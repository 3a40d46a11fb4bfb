package deploy

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/getsops/sops/v3"
	"github.com/getsops/sops/v3/aes"
	sopsage "github.com/getsops/sops/v3/age"
	"github.com/getsops/sops/v3/config"
	sopsyaml "github.com/getsops/sops/v3/stores/yaml"
	"golang.org/x/crypto/ssh"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/secrets"
	"github.com/syslet/syslet/render"
)

// The values the secret tests encrypt: none may ever be printed or
// journalled.
const (
	dbPassword = "s3cret-hunter2"
	apiToken   = "tok-4f9a1c77e2"
)

// hostKey gives the fake host an SSH ed25519 host key, where syslet
// derives the host's age identity from, and returns that identity's
// recipient (what `syslet host-key` prints).
func hostKey(t *testing.T, h *fakeHost) string {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	blk, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(h.root, secrets.DefaultSSHKeyPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, pem.EncodeToMemory(blk), 0o600); err != nil {
		t.Fatal(err)
	}
	kr, err := secrets.Load(h.root)
	if err != nil {
		t.Fatal(err)
	}
	r, err := kr.HostRecipient()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sopsEncrypt encrypts a flat YAML document for one age recipient with the
// SOPS library, in process, as `sops encrypt --age` does (data key, value
// encryption, MAC over the values).
func sopsEncrypt(t *testing.T, plaintext, recipient string) string {
	t.Helper()
	store := sopsyaml.NewStore(&config.YAMLStoreConfig{})
	branches, err := store.LoadPlainFile([]byte(plaintext))
	if err != nil {
		t.Fatal(err)
	}
	mk, err := sopsage.MasterKeyFromRecipient(recipient)
	if err != nil {
		t.Fatal(err)
	}
	dataKey := make([]byte, 32)
	if _, err := rand.Read(dataKey); err != nil {
		t.Fatal(err)
	}
	if err := mk.Encrypt(dataKey); err != nil {
		t.Fatal(err)
	}
	tree := sops.Tree{Branches: branches, Metadata: sops.Metadata{
		KeyGroups: []sops.KeyGroup{{mk}}, UnencryptedSuffix: "_unencrypted", Version: "3.13.3",
	}}
	cipher := aes.NewCipher()
	mac, err := tree.Encrypt(dataKey, cipher)
	if err != nil {
		t.Fatal(err)
	}
	tree.Metadata.LastModified = time.Now().UTC()
	if tree.Metadata.MessageAuthenticationCode, err = cipher.Encrypt(mac, dataKey, tree.Metadata.LastModified.Format(time.RFC3339)); err != nil {
		t.Fatal(err)
	}
	out, err := store.EmitEncryptedFile(tree)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// secretStack is a secret spec and a container that consumes both of its
// keys (one as an environment variable, one as a file).
func secretStack(t *testing.T, ciphertext string) string {
	t.Helper()
	ct, err := json.Marshal(ciphertext)
	if err != nil {
		t.Fatal(err)
	}
	return `{"apiVersion":"v1","type":"secret","name":"shop","ciphertext":` + string(ct) + "}\n" +
		`{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":"registry.example/web:1","Secret":{"shop-api-token":"type=env,target=API_TOKEN","shop-db-password":""}}}}` + "\n"
}

func shopDoc(password string) string {
	return "db-password: " + password + "\napi-token: " + apiToken + "\n"
}

// noPlaintext fails the test when a secret value shows in any of texts.
func noPlaintext(t *testing.T, where string, text string, values ...string) {
	t.Helper()
	for _, v := range values {
		if strings.Contains(text, v) {
			t.Errorf("%s contains the plaintext %q", where, v)
		}
	}
}

// A secret spec encrypted for the host opens with its SSH host key: the
// values reach podman's secret store and nothing else — not the plan, not
// the log, not the journal. The host identity is remembered (an apply,
// not a --diff), and a rotated value replaces the secret and restarts
// its consumer.
func TestSecretsReachPodmanOnly(t *testing.T) {
	h := newHost(t)
	recipient := hostKey(t, h)
	specs := writeSpecs(t, secretStack(t, sopsEncrypt(t, shopDoc(dbPassword), recipient)))

	diff := h.request(specs)
	diff.Diff = true
	if r := h.run(t, diff); r.err != nil || len(h.Calls("secret ")) != 0 || h.exists(secrets.CachePath) {
		t.Fatalf("--diff: err %v, secrets created %q, identity cached %v", r.err, h.Calls("secret "), h.exists(secrets.CachePath))
	}

	r := h.apply(t, specs)
	if got := h.Calls("secret "); !slices.Equal(got, []string{"secret shop-api-token", "secret shop-db-password"}) {
		t.Errorf("secrets created %q", got)
	}
	if slices.Index(h.Calls(), "secret shop-db-password") > slices.Index(h.Calls(), "start web.service") {
		t.Errorf("the secrets must exist before their consumer starts: %q", h.Calls())
	}
	if got := string(h.secretData["shop-db-password"]); got != dbPassword {
		t.Errorf("podman got db-password %q, want %q", got, dbPassword)
	}
	if got := string(h.secretData["shop-api-token"]); got != apiToken {
		t.Errorf("podman got api-token %q, want %q", got, apiToken)
	}
	if h.secrets["shop-db-password"].Labels[render.HashLabel] == "" {
		t.Errorf("secret created without its %s label: %+v", render.HashLabel, h.secrets["shop-db-password"])
	}
	out, _ := json.Marshal(r.out)
	noPlaintext(t, "stdout", r.stdout, dbPassword, apiToken)
	noPlaintext(t, "stderr", r.stderr, dbPassword, apiToken)
	noPlaintext(t, "the JSON outcome", string(out), dbPassword, apiToken)
	noPlaintext(t, "the run journal", h.file(t, layout.Journal), dbPassword, apiToken)
	if !strings.Contains(r.stdout, "secret shop-db-password = (secret)") {
		t.Errorf("the plan does not list the secret (without its value):\n%s", r.stdout)
	}
	if fi, err := os.Stat(filepath.Join(h.root, secrets.CachePath)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("host identity cache: %v %v, want a 0600 file", fi, err)
	}

	// Converged: the secret store's labels say the values are current.
	h.reset()
	if r := h.apply(t, specs); !r.out.Plan.Empty() {
		t.Errorf("converged secrets planned %d actions", len(r.out.Plan.Actions))
	}

	// Rotated: the changed secret is created again, and web restarted.
	const rotated = "n3w-pa55word"
	h.reset()
	r = h.apply(t, writeSpecs(t, secretStack(t, sopsEncrypt(t, shopDoc(rotated), recipient))))
	for _, want := range []string{"secret shop-db-password", "stop web.service", "start web.service"} {
		if !slices.Contains(h.Calls(), want) {
			t.Errorf("rotation calls %q lack %q", h.Calls(), want)
		}
	}
	if got := string(h.secretData["shop-db-password"]); got != rotated {
		t.Errorf("podman holds db-password %q after rotation, want %q", got, rotated)
	}
	noPlaintext(t, "stdout", r.stdout+r.stderr+h.file(t, layout.Journal), rotated)
}

// Values are shown by --diff when asked (SYSLET_SHOW_SECRETS=true), only
// by a person's view, and never by an apply.
func TestShowSecretsOnlyInDiff(t *testing.T) {
	h := newHost(t)
	specs := writeSpecs(t, secretStack(t, sopsEncrypt(t, shopDoc(dbPassword), hostKey(t, h))))
	diff := h.request(specs)
	diff.Diff, diff.ShowSecrets = true, true
	r := h.run(t, diff)
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, want := range []string{"Secret values (SYSLET_SHOW_SECRETS=true; shown by --diff only):", `shop-db-password = "` + dbPassword + `"`, `shop-api-token = "` + apiToken + `"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--diff stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	var doc, text syncBuffer
	diff.View = view.NewJSON(&doc, &text)
	if _, err := Run(t.Context(), diff); err != nil {
		t.Fatal(err)
	}
	noPlaintext(t, "--diff --output json", doc.String()+text.String(), dbPassword, apiToken)

	apply := h.request(specs)
	apply.ShowSecrets = true
	r = h.run(t, apply)
	if r.err != nil || r.view.has("SecretValues") {
		t.Fatalf("apply: %v; it showed values: %q", r.err, r.view.Calls("SecretValues"))
	}
	noPlaintext(t, "the apply's output", r.stdout+r.stderr, dbPassword, apiToken)
}

// A secret the host cannot open stops the run by spec name before
// anything changes.
func TestSecretForAnotherHost(t *testing.T) {
	h := newHost(t)
	hostKey(t, h)
	other, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	specs := writeSpecs(t, secretStack(t, sopsEncrypt(t, shopDoc(dbPassword), other.Recipient().String())))
	r := h.run(t, h.request(specs))
	if !errors.Is(r.err, ErrSecrets) || !errors.Is(r.err, secrets.ErrNoIdentity) {
		t.Fatalf("err = %v, want ErrSecrets and ErrNoIdentity", r.err)
	}
	for _, want := range []string{`secret "shop" (` + specs + ` [0])`, "it is encrypted for " + other.Recipient().String()} {
		if !strings.Contains(r.err.Error(), want) {
			t.Errorf("error %q lacks %q", r.err, want)
		}
	}
	noPlaintext(t, "the error", r.err.Error(), dbPassword, apiToken)
	if got := h.Calls(); len(got) != 0 {
		t.Errorf("host asked %q", got)
	}
	if files := h.managedTrees(t); len(files) != 0 || h.exists(layout.Journal) || h.exists(secrets.CachePath) {
		t.Errorf("changed: files %q, journal %v, identity cache %v", files, h.exists(layout.Journal), h.exists(secrets.CachePath))
	}
}
