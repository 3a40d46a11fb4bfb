//go:build integration

package integration

// Issue 40's OpenPGP half on a real test host: webhookd with
// repos[].verify.keyring deploys a commit signed by the real gpg (`git
// commit -S`, gpg.format=openpgp) with a key of the keyring, and refuses
// one signed by a key not in it before checkout. The guest has no gpg:
// the commits are signed on this machine, in a clone of the guest's work
// repository brought over as a git bundle, and pushed back the same way
// to the "forge" webhookd fetches from.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gpgSigner is a GnuPG home on this machine with one unprotected ed25519
// signing key, made by the real gpg.
type gpgSigner struct {
	env []string // selects the home
	fpr string   // the key's fingerprint, as gpg prints it
	uid string
}

func newGPGSigner(t *testing.T, uid string) gpgSigner {
	t.Helper()
	if _, err := exec.LookPath("gpg"); err != nil {
		t.Fatalf("gpg is needed on this machine to sign commits: %v", err)
	}
	home, err := os.MkdirTemp("", "gpg") // short: gpg-agent's socket lives in it
	must(t, err)
	g := gpgSigner{env: []string{"GNUPGHOME=" + home}, uid: uid}
	t.Cleanup(func() {
		cmd := exec.Command("gpgconf", "--kill", "gpg-agent")
		cmd.Env = append(os.Environ(), g.env...)
		_ = cmd.Run()
		os.RemoveAll(home)
	})
	g.gpg(t, "--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key", uid, "ed25519", "sign", "never")
	for _, l := range strings.Split(g.gpg(t, "--with-colons", "--list-keys", uid), "\n") {
		if f := strings.Split(l, ":"); len(f) > 9 && f[0] == "fpr" && g.fpr == "" {
			g.fpr = f[9]
		}
	}
	if g.fpr == "" {
		t.Fatal("gpg listed no fingerprint")
	}
	return g
}

func (g gpgSigner) gpg(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("gpg", append([]string{"--batch", "--quiet"}, args...)...)
	cmd.Env = append(os.Environ(), g.env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gpg %v: %v", args, err)
	}
	return string(out)
}

// git runs git in dir on this machine with the signer's GnuPG home.
func (g gpgSigner) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=ops", "-c", "user.email=ops@example", "-c", "gpg.format=openpgp", "-c", "user.signingkey=" + g.fpr}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append(g.env, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// gpgCommit commits the guest's work clone, signs the commit here with
// the real gpg (`git commit --amend -S`, the same tree and message),
// pushes the signed commit to the bare repository and returns it.
func (w *whHost) gpgCommit(g gpgSigner, msg string) string {
	t := w.t
	t.Helper()
	w.MustRun(t, "cd "+whWork+" && git add -A && git commit -q -m "+quoteArg(msg)+" && git bundle create -q /root/unsigned.bundle HEAD")
	dir := t.TempDir()
	must(t, w.CopyOut("/root/unsigned.bundle", filepath.Join(dir, "unsigned.bundle")))
	g.git(t, dir, "clone", "-q", "unsigned.bundle", "repo")
	repo := filepath.Join(dir, "repo")
	g.git(t, repo, "commit", "-q", "--amend", "--no-edit", "-S")
	g.git(t, repo, "bundle", "create", "-q", filepath.Join(dir, "signed.bundle"), "HEAD")
	must(t, w.CopyIn(filepath.Join(dir, "signed.bundle"), "/root/signed.bundle"))
	out := w.MustRun(t, "cd "+whWork+" && git fetch -q /root/signed.bundle HEAD && git reset -q --hard FETCH_HEAD && git push -q -f origin HEAD:main && git rev-parse HEAD")
	return strings.TrimSpace(out)
}

func quoteArg(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestGPGSignedCommitsOnly(t *testing.T) {
	alice := newGPGSigner(t, "Alice <alice@example.org>")
	mallory := newGPGSigner(t, "Mallory <mallory@example.org>")
	w := startWebhookd(t)
	const keyring = "/etc/syslet/keyring.asc"
	must(t, w.WriteFile(keyring, []byte(alice.gpg(t, "--export", "--armor", alice.fpr)), 0o644))

	// --check reads the keyring: a group-writable one is refused.
	w.MustRun(t, "chmod 0664 "+keyring)
	w.writeConfigLines("ssh://root@127.0.0.1/srv/git/infra.git", "    secretFile: "+whSecret, "    verify: {keyring: "+keyring+"}")
	if r := w.Run("webhookd --check --config " + whConfig); r.OK() || !strings.Contains(r.Stderr+r.Stdout, "verify.keyring") || !strings.Contains(r.Stderr+r.Stdout, "0644 or stricter") {
		t.Fatalf("--check of a group-writable keyring: %s", r)
	}
	w.MustRun(t, "chmod 0644 "+keyring+" && webhookd --check --config "+whConfig+" && systemctl restart webhookd.service")

	// A commit alice signed with gpg deploys; /status and syslet history
	// name her key.
	w.writeSpec("localhost:5000/web:v2", "gpg-signed", "")
	good := w.gpgCommit(alice, "signed by alice with gpg")
	if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: good}); code != 202 {
		t.Fatalf("push: %d %s", code, reply)
	}
	st := w.waitSig("the gpg-signed commit applied", func(s sigStatus) bool { return s.LastApplied == good })
	if s := st.Last.Signer; s == nil || s.Principal != alice.uid || s.Fingerprint != alice.fpr {
		t.Fatalf("signer %+v, want %s %s", st.Last.Signer, alice.uid, alice.fpr)
	}
	if _, _, rev := w.running(); rev != "gpg-signed" {
		t.Fatalf("running REV %q", rev)
	}
	inv := prop(t, w.Host, "web.service", "InvocationID")
	hist := w.MustRun(t, "syslet history")
	if !strings.Contains(hist, "git infra@"+good+" (signed by "+alice.uid+")") {
		t.Fatalf("syslet history does not name the signer:\n%s", hist)
	}
	t.Logf("$ syslet history\n%s", hist)
	show := w.MustRun(t, "syslet history --output json")
	if !strings.Contains(show, alice.fpr) {
		t.Fatalf("syslet history --output json lacks the fingerprint %s:\n%s", alice.fpr, show)
	}

	// A commit signed with gpg by a key not in the keyring, and an
	// unsigned one: refused before checkout, nothing restarted.
	for _, c := range []struct {
		reason string
		commit func() string
		want   string
	}{
		{"unknown-key", func() string { return w.gpgCommit(mallory, "signed by mallory with gpg") }, mallory.fpr},
		{"unsigned", func() string { return w.commit("unsigned") }, "no signature"},
	} {
		w.writeSpec("localhost:5000/web:v3", c.reason, "")
		commit := c.commit()
		if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: commit}); code != 202 {
			t.Fatalf("push: %d %s", code, reply)
		}
		st := w.waitSig("the refusal", func(s sigStatus) bool { return s.Last != nil && s.Last.Commit == commit && s.State == "idle" })
		t.Logf("%s: /status last error %q", c.reason, st.Last.Error)
		if st.Last.Result != "failed" || st.Last.Stage != "signature" || st.Last.Refusal != c.reason || !strings.Contains(st.Last.Error, c.want) || st.LastApplied != good {
			t.Fatalf("%s: %+v", c.reason, *st.Last)
		}
		if h := w.head(); h != good {
			t.Errorf("%s: the checkout is at %s, want %s", c.reason, h, good)
		}
		if got := prop(t, w.Host, "web.service", "InvocationID"); got != inv {
			t.Errorf("%s: web.service restarted: InvocationID %s, was %s", c.reason, got, inv)
		}
		if _, _, rev := w.running(); rev != "gpg-signed" {
			t.Errorf("%s: running REV %q", c.reason, rev)
		}
		if got := w.metric(`webhookd_signature_refusals_total{reason="` + c.reason + `",repo="infra"}`); got != 1 {
			t.Errorf("refusals metric for %s: %v", c.reason, got)
		}
	}
	hist = w.MustRun(t, "syslet history --output json")
	if strings.Count(hist, `"source"`) != 1 {
		t.Fatalf("a refused commit left a run:\n%s", hist)
	}
}
