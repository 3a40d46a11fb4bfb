package commitsig

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The tests sign with the real tools: ssh-keygen makes the keys and
// signatures, git makes signed commits (gpg.format=ssh).

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to make real signatures: %v", tool, err)
		}
	}
}

func run(t *testing.T, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return out
}

// keygen makes an unencrypted key pair and returns the private key's
// path and the public key's line.
func keygen(t *testing.T, dir, name, kind string) (string, string) {
	t.Helper()
	priv := filepath.Join(dir, name)
	args := []string{"-q", "-t", kind, "-N", "", "-C", name, "-f", priv}
	if kind == "rsa" {
		args = append(args, "-b", "2048")
	}
	run(t, dir, nil, "ssh-keygen", args...)
	pub, err := os.ReadFile(priv + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return priv, strings.TrimSpace(string(pub))
}

// repo is a temporary git repository that signs with key.
type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *repo {
	need(t, "git", "ssh-keygen")
	r := &repo{t: t, dir: t.TempDir()}
	r.git(nil, "init", "-q", "-b", "main")
	r.git(nil, "config", "user.name", "Alice")
	r.git(nil, "config", "user.email", "alice@example.org")
	r.git(nil, "config", "gpg.format", "ssh")
	return r
}

func (r *repo) git(env []string, args ...string) []byte {
	return run(r.t, r.dir, append([]string{"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}, env...), "git", args...)
}

// commit makes a commit (signed with key unless it is ""), dated when
// (unless zero), and returns its hash and raw object.
func (r *repo) commit(key, msg string, when time.Time) (string, []byte) {
	if err := os.WriteFile(filepath.Join(r.dir, "f.json"), []byte(msg), 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.git(nil, "add", "f.json")
	var env []string
	if !when.IsZero() {
		d := when.Format(time.RFC3339)
		env = []string{"GIT_COMMITTER_DATE=" + d, "GIT_AUTHOR_DATE=" + d}
	}
	args := []string{"commit", "-q", "-m", msg}
	if key != "" {
		args = append(args, "-S", "--gpg-sign="+key)
		args = append([]string{"-c", "user.signingkey=" + key}, args...)
	}
	r.git(env, args...)
	hash := strings.TrimSpace(string(r.git(nil, "rev-parse", "HEAD")))
	return hash, r.git(nil, "cat-file", "commit", hash)
}

func allowed(t *testing.T, lines ...string) *AllowedSigners {
	t.Helper()
	a, err := ParseAllowedSigners("allowed_signers", []byte(strings.Join(lines, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func wantReason(t *testing.T, err error, want Reason) {
	t.Helper()
	if got := ReasonOf(err); got != want {
		t.Fatalf("reason %q, want %q (error: %v)", got, want, err)
	}
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("%v is not ErrRefused", err)
	}
}

func TestSignedCommitsVerify(t *testing.T) {
	r := newRepo(t)
	keys := t.TempDir()
	for _, kind := range []string{"ed25519", "ecdsa", "rsa"} {
		t.Run(kind, func(t *testing.T) {
			priv, pub := keygen(t, keys, "alice-"+kind, kind)
			a := allowed(t, `alice@example.org namespaces="git" `+pub)
			hash, raw := r.commit(priv, "signed by "+kind, time.Time{})
			s, err := a.Verify(hash, raw, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if s.Principal != "alice@example.org" || !strings.HasPrefix(s.Fingerprint, "SHA256:") || s.Line != 1 {
				t.Fatalf("signer %+v", s)
			}
			// git agrees that it is good.
			if err := os.WriteFile(filepath.Join(keys, "as"), []byte("alice@example.org "+pub+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r.git(nil, "-c", "gpg.ssh.allowedSignersFile="+filepath.Join(keys, "as"), "verify-commit", hash)
		})
	}
}

func TestRefusals(t *testing.T) {
	r := newRepo(t)
	keys := t.TempDir()
	alice, alicePub := keygen(t, keys, "alice", "ed25519")
	mallory, _ := keygen(t, keys, "mallory", "ed25519")
	a := allowed(t, "# the deployers", "", `alice@example.org,ops@example.org namespaces="git" `+alicePub+" alice's laptop")
	now := time.Now()

	t.Run("unsigned", func(t *testing.T) {
		hash, raw := r.commit("", "unsigned", time.Time{})
		_, err := a.Verify(hash, raw, now)
		wantReason(t, err, Unsigned)
		if !strings.Contains(err.Error(), hash[:12]) {
			t.Errorf("%v does not name the commit", err)
		}
	})
	t.Run("unknown key", func(t *testing.T) {
		hash, raw := r.commit(mallory, "by mallory", time.Time{})
		_, err := a.Verify(hash, raw, now)
		wantReason(t, err, UnknownKey)
	})
	t.Run("altered after signing", func(t *testing.T) {
		hash, raw := r.commit(alice, "the real content", time.Time{})
		if _, err := a.Verify(hash, raw, now); err != nil {
			t.Fatal(err)
		}
		altered := bytes.Replace(raw, []byte("the real content"), []byte("the evil content"), 1)
		_, err := a.Verify(hash, altered, now)
		wantReason(t, err, BadSignature)
		// So is a changed header (another tree).
		altered = bytes.Replace(raw, []byte("tree "), []byte("tree 0"), 1)
		_, err = a.Verify(hash, altered, now)
		wantReason(t, err, BadSignature)
	})
	t.Run("expired principal", func(t *testing.T) {
		exp := allowed(t, `alice@example.org valid-before="20200101" `+alicePub)
		hash, raw := r.commit(alice, "after expiry", time.Time{})
		_, err := exp.Verify(hash, raw, now)
		wantReason(t, err, Expired)
		// A commit backdated to before the expiry is still refused now.
		hash, raw = r.commit(alice, "backdated", time.Date(2019, 6, 1, 0, 0, 0, 0, time.UTC))
		_, err = exp.Verify(hash, raw, now)
		wantReason(t, err, Expired)
		if !strings.Contains(err.Error(), "now") {
			t.Errorf("%v does not say the key has expired now", err)
		}
	})
	t.Run("not yet valid", func(t *testing.T) {
		future := allowed(t, `alice@example.org valid-after="29990101Z" `+alicePub)
		hash, raw := r.commit(alice, "too early", time.Time{})
		_, err := future.Verify(hash, raw, now)
		wantReason(t, err, NotYetValid)
	})
	t.Run("valid window", func(t *testing.T) {
		win := allowed(t, `alice@example.org valid-after="20200101",valid-before="29990101000000Z" `+alicePub)
		hash, raw := r.commit(alice, "in the window", time.Time{})
		if _, err := win.Verify(hash, raw, now); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("other namespaces only", func(t *testing.T) {
		ns := allowed(t, `alice@example.org namespaces="file,email" `+alicePub)
		hash, raw := r.commit(alice, "namespace", time.Time{})
		_, err := ns.Verify(hash, raw, now)
		wantReason(t, err, UnknownKey)
	})
	t.Run("a second line of the key may admit it", func(t *testing.T) {
		two := allowed(t, `old@example.org valid-before="20200101" `+alicePub, `alice@example.org `+alicePub)
		hash, raw := r.commit(alice, "two lines", time.Time{})
		s, err := two.Verify(hash, raw, now)
		if err != nil || s.Principal != "alice@example.org" || s.Line != 2 {
			t.Fatalf("%+v %v", s, err)
		}
	})
}

// TestSSHKeygenSignatures splices signatures made by ssh-keygen -Y sign
// into a commit: the namespace and hash algorithm are checked.
func TestSSHKeygenSignatures(t *testing.T) {
	r := newRepo(t)
	keys := t.TempDir()
	alice, alicePub := keygen(t, keys, "alice", "ed25519")
	a := allowed(t, "alice@example.org "+alicePub)
	hash, unsigned := r.commit("", "to be signed", time.Time{})
	sign := func(ns string, opts ...string) []byte {
		msg := filepath.Join(keys, "payload")
		if err := os.WriteFile(msg, unsigned, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(msg + ".sig")
		args := append([]string{"-Y", "sign", "-n", ns, "-f", alice}, opts...)
		run(t, keys, nil, "ssh-keygen", append(args, msg)...)
		sig, err := os.ReadFile(msg + ".sig")
		if err != nil {
			t.Fatal(err)
		}
		return splice(unsigned, sig)
	}
	for _, alg := range []string{"sha512", "sha256"} {
		if _, err := a.Verify(hash, sign("git", "-O", "hashalg="+alg), time.Now()); err != nil {
			t.Errorf("hashalg=%s: %v", alg, err)
		}
	}
	_, err := a.Verify(hash, sign("file"), time.Now())
	wantReason(t, err, BadSignature)
	if !strings.Contains(err.Error(), `namespace "file"`) {
		t.Errorf("%v does not name the namespace", err)
	}
}

// splice puts sig into a commit as its gpgsig header, as git does.
func splice(commit, sig []byte) []byte {
	head, msg, _ := bytes.Cut(commit, []byte("\n\n"))
	var b bytes.Buffer
	b.Write(head)
	b.WriteString("\ngpgsig ")
	b.Write(bytes.ReplaceAll(bytes.TrimRight(sig, "\n"), []byte("\n"), []byte("\n ")))
	b.WriteString("\n\n")
	b.Write(msg)
	return b.Bytes()
}

func TestHostileSignatures(t *testing.T) {
	r := newRepo(t)
	keys := t.TempDir()
	alice, alicePub := keygen(t, keys, "alice", "ed25519")
	a := allowed(t, "alice@example.org "+alicePub)
	hash, good := r.commit(alice, "good", time.Time{})
	_, unsigned := r.commit("", "plain", time.Time{})
	_, sig, _ := split(good)
	big := bytes.Repeat([]byte("QUFBQUFBQUFB"), 10<<20/12)
	for name, raw := range map[string][]byte{
		"10 MB signature":   splice(unsigned, append(append([]byte(armorBegin+"\n"), big...), []byte("\n"+armorEnd+"\n")...)),
		"100 KB signature":  splice(unsigned, append(append([]byte(armorBegin+"\n"), big[:100<<10]...), []byte("\n"+armorEnd+"\n")...)),
		"10 MB commit":      append(bytes.Clone(good), bytes.Repeat([]byte("x"), 10<<20)...),
		"NUL in signature":  bytes.Replace(good, []byte("-----END SSH"), []byte("\x00----END SSH"), 1),
		"NUL in message":    append(bytes.Clone(good), 0),
		"not armored":       splice(unsigned, []byte("U1NIU0lHAAAAAQ==\n")),
		"armor, no base64":  splice(unsigned, []byte(armorBegin+"\n!!!!\n"+armorEnd+"\n")),
		"empty armor":       splice(unsigned, []byte(armorBegin+"\n"+armorEnd+"\n")),
		"truncated blob":    splice(unsigned, []byte(armorBegin+"\nU1NIU0lHAAAAAQAAADMAAAAL\n"+armorEnd+"\n")),
		"two signatures":    splice(good, sig),
		"trailing garbage":  splice(unsigned, append(bytes.Clone(sig), []byte("junk\n")...)),
		"text after armor":  splice(unsigned, bytes.Replace(sig, []byte(armorBegin+"\n"), []byte(armorBegin+"\nhello world\n"), 1)),
		"no committer date": bytes.Replace(good, []byte("committer Alice <alice@example.org> "), []byte("committer Alice <alice@example.org> x"), 1),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := a.Verify(hash, raw, time.Now())
			wantReason(t, err, BadSignature)
			t.Log(err)
			if len(err.Error()) > 400 {
				t.Errorf("the error is %d bytes long: %.200s…", len(err.Error()), err)
			}
		})
	}
}

func TestOpenPGPSignatureIsAnUnknownKey(t *testing.T) {
	a := allowed(t, "alice@example.org ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl")
	raw := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@b> 1700000000 +0000\ncommitter A <a@b> 1700000000 +0000\n" +
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQ==\n -----END PGP SIGNATURE-----\n\nmsg\n")
	_, err := a.Verify("abc", raw, time.Now())
	wantReason(t, err, UnknownKey)
}

func TestAllowedSignersFile(t *testing.T) {
	const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
	for name, c := range map[string]struct{ text, want string }{
		"empty":          {"# nobody\n", "lists no key"},
		"no key":         {"alice@example.org\n", "allowed_signers:1: want: principals"},
		"bad key":        {"alice@example.org ssh-ed25519 AAAA\n", "allowed_signers:1: no key"},
		"cert-authority": {"*@example.org cert-authority " + key + "\n", "cert-authority is not supported"},
		"unknown option": {"a@b no-touch-required " + key + "\n", `unknown option "no-touch-required"`},
		"bad time":       {"a@b valid-after=\"2024\" " + key + "\n", "valid-after"},
		"empty window":   {"a@b valid-after=\"20250101\",valid-before=\"20240101\" " + key + "\n", "is not after"},
		"second line":    {"a@b " + key + "\n\nb@c " + key[:20] + "\n", "allowed_signers:3:"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseAllowedSigners("allowed_signers", []byte(c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	a := allowed(t, `"alice smith,ops" valid-after="20240101" `+key)
	if a.Len() != 1 || a.entries[0].principals != "alice smith,ops" {
		t.Fatalf("%+v", a.entries)
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(file, []byte("a@b "+key+"\n"), 0o664); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o664); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadAllowedSigners(file); err == nil || !strings.Contains(err.Error(), "0644 or stricter") {
		t.Fatalf("a group-writable file: %v", err)
	}
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadAllowedSigners(file); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(file, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadAllowedSigners(file); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Fatalf("a file owned by nobody: %v", err)
		}
	}
}
