package commitsig

import (
	"bytes"
	"crypto"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// gpgHome is a fresh GnuPG home with one unprotected ed25519 signing key
// for uid, made by the real gpg; it returns the home, the environment
// that selects it and the key's fingerprint.
func gpgHome(t *testing.T, uid string) (string, []string, string) {
	t.Helper()
	need(t, "gpg", "gpgconf")
	// A short path: gpg-agent's socket lives in it.
	home, err := os.MkdirTemp("", "gpg")
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"GNUPGHOME=" + home}
	t.Cleanup(func() {
		run(t, home, env, "gpgconf", "--kill", "gpg-agent")
		os.RemoveAll(home)
	})
	run(t, home, env, "gpg", "--batch", "--quiet", "--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key", uid, "ed25519", "sign", "never")
	var fpr string
	for _, l := range strings.Split(string(run(t, home, env, "gpg", "--batch", "--with-colons", "--list-keys", uid)), "\n") {
		if f := strings.Split(l, ":"); len(f) > 9 && f[0] == "fpr" && fpr == "" {
			fpr = f[9]
		}
	}
	if fpr == "" {
		t.Fatal("gpg listed no fingerprint")
	}
	return home, env, fpr
}

// TestGPGSignedCommits: git commit -S with the real gpg, checked against
// the key exported armored and binary; a key that is not in the keyring
// is an unknown key, altered content a bad signature.
func TestGPGSignedCommits(t *testing.T) {
	home, env, fpr := gpgHome(t, "Alice <alice@example.org>")
	r := newRepo(t)
	commit := func(msg string, env []string, key string) (string, []byte) {
		if err := os.WriteFile(filepath.Join(r.dir, "f.json"), []byte(msg), 0o644); err != nil {
			t.Fatal(err)
		}
		r.git(nil, "add", "f.json")
		r.git(env, "-c", "gpg.format=openpgp", "-c", "user.signingkey="+key, "commit", "-q", "-S", "-m", msg)
		h := strings.TrimSpace(string(r.git(nil, "rev-parse", "HEAD")))
		return h, r.git(nil, "cat-file", "commit", h)
	}
	hash, raw := commit("signed by alice", env, fpr)
	if !bytes.Contains(raw, []byte("gpgsig "+pgpSigBegin)) {
		t.Fatalf("git made no OpenPGP signature:\n%s", raw)
	}
	dir := t.TempDir()
	for _, armored := range []bool{true, false} {
		args := []string{"--batch", "--export"}
		if armored {
			args = append(args, "--armor")
		}
		pub := run(t, home, env, "gpg", append(args, fpr)...)
		if !IsKeyring(pub) {
			t.Fatalf("armored=%v: not taken for a keyring", armored)
		}
		file := filepath.Join(dir, fmt.Sprintf("keyring-%v", armored))
		if err := os.WriteFile(file, pub, 0o644); err != nil {
			t.Fatal(err)
		}
		trust, err := LoadTrustFile(file)
		if err != nil || trust.PGP == nil || trust.SSH != nil {
			t.Fatalf("armored=%v: %+v %v", armored, trust, err)
		}
		s, err := trust.Verify(hash, raw, time.Now())
		if err != nil {
			t.Fatalf("armored=%v: %v", armored, err)
		}
		if s.Principal != "Alice <alice@example.org>" || s.Fingerprint != fpr || s.KeyType != "openpgp" {
			t.Fatalf("signer %+v, want Alice and %s", s, fpr)
		}
		t.Logf("armored=%v: %s", armored, s)

		// The same commit, its message changed after signing.
		_, err = trust.Verify(hash, bytes.Replace(raw, []byte("signed by alice"), []byte("signed by alice!"), 1), time.Now())
		wantReason(t, err, BadSignature)
		t.Log(err)
	}
	trust, err := LoadTrustFile(filepath.Join(dir, "keyring-true"))
	if err != nil {
		t.Fatal(err)
	}
	_, malloryEnv, mallory := gpgHome(t, "Mallory <mallory@example.org>")
	mhash, mraw := commit("signed by mallory", malloryEnv, mallory)
	_, err = trust.Verify(mhash, mraw, time.Now())
	wantReason(t, err, UnknownKey)
	if !strings.Contains(err.Error(), mallory) {
		t.Errorf("the refusal does not name the key %s: %v", mallory, err)
	}
	t.Log(err)
	// An SSH-only trust refuses it as an unknown key too; an OpenPGP-only
	// trust refuses an SSH signature so.
	_, err = allowed(t, "alice@example.org ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl").Verify(hash, raw, time.Now())
	wantReason(t, err, UnknownKey)
	keys := t.TempDir()
	sshKey, _ := keygen(t, keys, "alice", "ed25519")
	r.git(nil, "config", "gpg.format", "ssh")
	shash, sraw := r.commit(sshKey, "ssh signed", time.Time{})
	_, err = trust.Verify(shash, sraw, time.Now())
	wantReason(t, err, UnknownKey)
	t.Log(err)
}

// pgpKey makes an OpenPGP entity created at created, expiring after
// lifetime (0: never), with the library (its dates cannot be set with gpg
// without faking the clock).
func pgpKey(t *testing.T, name string, created time.Time, lifetime time.Duration) *openpgp.Entity {
	t.Helper()
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return created }, KeyLifetimeSecs: uint32(lifetime / time.Second)}
	e, err := openpgp.NewEntity(name, "", strings.ToLower(name)+"@example.org", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func keyringOf(t *testing.T, es ...*openpgp.Entity) *Keyring {
	t.Helper()
	var b bytes.Buffer
	for _, e := range es {
		if err := e.Serialize(&b); err != nil {
			t.Fatal(err)
		}
	}
	k, err := ParseKeyring("keyring.gpg", b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// pgpCommit is a commit object dated when, signed by e at signed (unsigned
// when e is nil).
func pgpCommit(t *testing.T, e *openpgp.Entity, when, signed time.Time, h crypto.Hash) []byte {
	t.Helper()
	payload := fmt.Sprintf("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@b> %d +0000\ncommitter A <a@b> %d +0000\n\nmsg\n", when.Unix(), when.Unix())
	if e == nil {
		return []byte(payload)
	}
	var sig bytes.Buffer
	cfg := &packet.Config{Time: func() time.Time { return signed }, DefaultHash: h}
	if err := openpgp.ArmoredDetachSign(&sig, e, strings.NewReader(payload), cfg); err != nil {
		t.Fatal(err)
	}
	return splice([]byte(payload), sig.Bytes())
}

func TestOpenPGPValidity(t *testing.T) {
	now := time.Now()
	year := 365 * 24 * time.Hour
	alice := pgpKey(t, "Alice", now.Add(-year), 0)
	old := pgpKey(t, "Old", now.Add(-3*year), year) // expired two years ago
	revoked := pgpKey(t, "Revoked", now.Add(-year), 0)
	byRevoked := pgpCommit(t, revoked, now.Add(-time.Hour), now.Add(-time.Hour), crypto.SHA256) // signed, then revoked
	if err := revoked.RevokeKey(packet.KeyCompromised, "lost", nil); err != nil {
		t.Fatal(err)
	}
	// Valid now, until next year: a commit that claims a date after that
	// is refused for the key expired at its date.
	short := pgpKey(t, "Short", now.Add(-year), 2*year)
	future := pgpKey(t, "Future", now.Add(time.Hour), 0)
	k := keyringOf(t, alice, old, revoked, future, short)
	trust := Trust{PGP: k}

	s, err := trust.Verify("c", pgpCommit(t, alice, now.Add(-time.Minute), now.Add(-time.Minute), crypto.SHA256), now)
	if err != nil || s.Principal != "Alice <alice@example.org>" || s.Fingerprint != fmt.Sprintf("%X", alice.PrimaryKey.Fingerprint) {
		t.Fatalf("%+v %v", s, err)
	}
	for name, c := range map[string]struct {
		raw  []byte
		want Reason
	}{
		"unsigned":                {pgpCommit(t, nil, now, now, 0), Unsigned},
		"expired key":             {pgpCommit(t, old, now.Add(-2*year-time.Hour), now.Add(-2*year-time.Hour), crypto.SHA256), Expired},
		"expired at commit date":  {pgpCommit(t, short, now.Add(2*year), now, crypto.SHA256), Expired},
		"revoked key":             {byRevoked, Expired},
		"key from the future":     {pgpCommit(t, future, now.Add(2*time.Hour), now.Add(2*time.Hour), crypto.SHA256), NotYetValid},
		"commit before the key":   {pgpCommit(t, alice, now.Add(-2*year), now, crypto.SHA256), NotYetValid},
		"not in the keyring":      {pgpCommit(t, pgpKey(t, "Mallory", now.Add(-year), 0), now, now, crypto.SHA256), UnknownKey},
		"signature in the future": {pgpCommit(t, alice, now, now.Add(time.Hour), crypto.SHA256), NotYetValid},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := trust.Verify("c", c.raw, now)
			wantReason(t, err, c.want)
			t.Log(err)
		})
	}
}

func TestKeyringFile(t *testing.T) {
	alice := pgpKey(t, "Alice", time.Now().Add(-time.Hour), 0)
	var secret bytes.Buffer
	if err := alice.SerializePrivate(&secret, nil); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		raw  string
		want string
	}{
		"secret key":       {secret.String(), "holds the secret key"},
		"garbage":          {"\x99\xff\xfe not a key", "holds no OpenPGP key"},
		"a signature":      {"-----BEGIN PGP SIGNATURE-----\n\niQ==\n-----END PGP SIGNATURE-----\n", "want \"PGP PUBLIC KEY BLOCK\""},
		"broken armor":     {"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n!!!\n", "not a readable"},
		"empty armor":      {"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n-----END PGP PUBLIC KEY BLOCK-----\n", "holds no OpenPGP key"},
		"allowed signers?": {"alice@example.org ssh-ed25519 AAAA\n", "no key"},
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "keys")
			if err := os.WriteFile(file, []byte(c.raw), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadTrustFile(file)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
			t.Log(err)
		})
	}
	var pub bytes.Buffer
	if err := alice.Serialize(&pub); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "keyring.gpg")
	if err := os.WriteFile(file, pub.Bytes(), 0o664); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o664); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKeyring(file); err == nil || !strings.Contains(err.Error(), "0644 or stricter") {
		t.Fatalf("a group-writable keyring: %v", err)
	}
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	if k, err := LoadKeyring(file); err != nil || k.Len() != 1 {
		t.Fatalf("%v %v", k, err)
	}
}

// TestHostileOpenPGPSignatures: the hostile blocks, as OpenPGP armor.
func TestHostileOpenPGPSignatures(t *testing.T) {
	now := time.Now()
	alice := pgpKey(t, "Alice", now.Add(-time.Hour), 0)
	trust := Trust{PGP: keyringOf(t, alice)}
	good := pgpCommit(t, alice, now, now, crypto.SHA256)
	unsigned := pgpCommit(t, nil, now, now, 0)
	_, sig, _ := split(good)
	big := bytes.Repeat([]byte("QUFBQUFBQUFB"), 10<<20/12)
	wrap := func(body []byte) []byte {
		return append(append([]byte(pgpSigBegin+"\n\n"), body...), []byte("\n"+pgpSigEnd+"\n")...)
	}
	for name, raw := range map[string][]byte{
		"10 MB signature":  splice(unsigned, wrap(big)),
		"NUL in signature": bytes.Replace(good, []byte("-----END PGP"), []byte("\x00----END PGP"), 1),
		"not armored":      splice(unsigned, []byte("iHUEABYIAB0WIQ==\n")),
		"no end line":      splice(unsigned, []byte(pgpSigBegin+"\n\niQ==\n")),
		"armor, no base64": splice(unsigned, wrap([]byte("!!!!"))),
		"empty armor":      splice(unsigned, wrap(nil)),
		"a key, not a sig": splice(unsigned, bytes.ReplaceAll(armoredKey(t, alice), []byte("PUBLIC KEY BLOCK"), []byte("SIGNATURE"))),
		"truncated":        splice(unsigned, bytes.Replace(sig, []byte("\n-----END"), []byte("AAAA\n-----END"), 1)),
		"trailing garbage": splice(unsigned, append(bytes.Clone(sig), []byte("junk\n")...)),
		"two gpgsig":       splice(good, sig),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := trust.Verify("c", raw, now)
			wantReason(t, err, BadSignature)
			t.Log(err)
			if len(err.Error()) > 400 {
				t.Errorf("the error is %d bytes long: %.200s…", len(err.Error()), err)
			}
		})
	}
}

func armoredKey(t *testing.T, e *openpgp.Entity) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := armor.Encode(&b, openpgp.PublicKeyType, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return b.Bytes()
}

// BenchmarkHostileSignatures shows what refusing a hostile commit costs:
// a 10 MB commit object, a 60 KiB signature block just under the cap and
// a 60 KiB armored OpenPGP block of garbage (ns/op, B/op).
func BenchmarkHostileSignatures(b *testing.B) {
	now := time.Now()
	unsigned := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@b> 1700000000 +0000\ncommitter A <a@b> 1700000000 +0000\n\nmsg\n")
	big := bytes.Repeat([]byte("QUFBQUFBQUFB"), 10<<20/12)
	trust := Trust{SSH: &AllowedSigners{File: "allowed_signers"}, PGP: &Keyring{File: "keyring"}}
	for name, raw := range map[string][]byte{
		"10MB-commit":   splice(unsigned, append(append([]byte(armorBegin+"\n"), big...), []byte("\n"+armorEnd+"\n")...)),
		"60KiB-ssh":     splice(unsigned, append(append([]byte(armorBegin+"\n"), big[:60<<10]...), []byte("\n"+armorEnd+"\n")...)),
		"60KiB-openpgp": splice(unsigned, append(append([]byte(pgpSigBegin+"\n\n"), big[:60<<10]...), []byte("\n"+pgpSigEnd+"\n")...)),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := trust.Verify("c", raw, now); ReasonOf(err) != BadSignature {
					b.Fatalf("%v", err)
				}
			}
		})
	}
}
