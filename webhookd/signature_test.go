package webhookd

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syslet/syslet/webhookd/config"
	"github.com/syslet/syslet/webhookd/queue"
)

// signingKey makes an ed25519 key with ssh-keygen and returns the private
// key's path and its allowed-signers line for principal.
func signingKey(t *testing.T, principal string) (priv, line string) {
	t.Helper()
	priv = filepath.Join(t.TempDir(), "key")
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", principal, "-f", priv).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(priv + ".pub")
	must(t, err)
	return priv, principal + ` namespaces="git" ` + strings.TrimSpace(string(pub))
}

// signedCommit commits hosts/web1/app.json = content with the real git,
// signed with key (gpg.format=ssh) unless key is "".
func (r *remote) signedCommit(key, content string) string {
	if key == "" {
		return r.commitWith(nil, content)
	}
	return r.commitWith(nil, content, "-c", "gpg.format=ssh", "-c", "user.signingkey="+key, "-c", "commit.gpgsign=true")
}

// gpgCommit commits content signed by the real gpg with the key fpr of
// the GnuPG home that env selects (gpg.format=openpgp).
func (r *remote) gpgCommit(env []string, fpr, content string) string {
	return r.commitWith(env, content, "-c", "gpg.format=openpgp", "-c", "user.signingkey="+fpr, "-c", "commit.gpgsign=true")
}

func (r *remote) commitWith(env []string, content string, sign ...string) string {
	r.t.Helper()
	p := filepath.Join(r.dir, "hosts", "web1", "app.json")
	must(r.t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(r.t, os.WriteFile(p, []byte(content), 0o644))
	r.n++
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example"}, args...)...)
		cmd.Dir = r.dir
		cmd.Env = append(append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			r.t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("add", "hosts/web1/app.json")
	git(append(sign, "commit", "-q", "-m", fmt.Sprintf("change %d", r.n))...)
	return git("rev-parse", "HEAD")
}

// gpgKey makes a GnuPG home with one unprotected ed25519 signing key for
// uid with the real gpg, exports its public key to a 0644 file and
// returns the environment selecting the home, the fingerprint and the
// keyring file.
func gpgKey(t *testing.T, uid string) (env []string, fpr, keyring string) {
	t.Helper()
	home, err := os.MkdirTemp("", "gpg") // short: gpg-agent's socket lives in it
	must(t, err)
	env = []string{"GNUPGHOME=" + home}
	gpg := func(args ...string) string {
		cmd := exec.Command("gpg", append([]string{"--batch", "--quiet"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("gpg %v: %v", args, err)
		}
		return string(out)
	}
	t.Cleanup(func() {
		cmd := exec.Command("gpgconf", "--kill", "gpg-agent")
		cmd.Env = append(os.Environ(), env...)
		_ = cmd.Run()
		os.RemoveAll(home)
	})
	gpg("--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key", uid, "ed25519", "sign", "never")
	for _, l := range strings.Split(gpg("--with-colons", "--list-keys", uid), "\n") {
		if f := strings.Split(l, ":"); len(f) > 9 && f[0] == "fpr" && fpr == "" {
			fpr = f[9]
		}
	}
	keyring = filepath.Join(t.TempDir(), "keyring.asc")
	must(t, os.WriteFile(keyring, []byte(gpg("--export", "--armor", fpr)), 0o644))
	return env, fpr, keyring
}

func allowedSignersFile(t *testing.T, lines ...string) string {
	p := filepath.Join(t.TempDir(), "allowed_signers")
	must(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return p
}

// headOf is the commit the repository's private checkout has checked out.
func headOf(t *testing.T, dir string) string {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// TestOnlySignedCommitsDeploy: a commit signed by an allowed key deploys
// and /status names its signer; an unsigned one, one by an unknown key and
// one by an expired key are refused before checkout, each with its
// reason on /status, the forge's status, the notification and metrics.
func TestOnlySignedCommitsDeploy(t *testing.T) {
	alice, aliceLine := signingKey(t, "alice@example.org")
	mallory, _ := signingKey(t, "mallory@example.org")
	old, oldLine := signingKey(t, "old@example.org")
	signers := allowedSignersFile(t, aliceLine, strings.Replace(oldLine, `namespaces="git"`, `namespaces="git",valid-before="20200101Z"`, 1))
	forge, hook := newReceiver(t), newReceiver(t)
	dep := &fakeDeployer{}
	f := newFixture(t, dep, fmt.Sprintf("    verify: {allowedSigners: %s}\n    status: {forge: github, api: %s, repo: ops/infra, tokenFile: %s}\nnotify: [{type: webhook, url: %s}]\n",
		signers, forge.srv.URL, tokenFile(t), hook.srv.URL))
	f.start()
	checkout := filepath.Join(f.state, "infra")

	good := f.remote.signedCommit(alice, `{"v":"good"}`)
	f.push(GitHub, "refs/heads/main", good)
	st := f.wait("good applied", func(s queue.RepoStatus) bool { return s.LastApplied == good })
	if s := st.Last.Signer; s == nil || s.Principal != "alice@example.org" || !strings.HasPrefix(s.Fingerprint, "SHA256:") {
		t.Fatalf("signer %+v", st.Last.Signer)
	}
	// The deploy records who signed it (the run journal, the generation).
	if got, _ := dep.deploys(); got[0].Signer == nil || *got[0].Signer != *st.Last.Signer {
		t.Fatalf("the deploy's signer %+v", got[0].Signer)
	}

	deployed := 1
	for _, c := range []struct{ key, reason string }{{"", "unsigned"}, {mallory, "unknown-key"}, {old, "key-expired"}} {
		commit := f.remote.signedCommit(c.key, fmt.Sprintf(`{"v":%q}`, c.reason))
		f.push(GitHub, "refs/heads/main", commit)
		st := f.wait(c.reason, func(s queue.RepoStatus) bool { return s.Last != nil && s.Last.Commit == commit && s.State == "idle" })
		if st.Last.Result() != queue.ResultFailed || st.Last.Stage() != queue.StageSignature || st.Last.Refusal != c.reason || !strings.HasPrefix(st.Last.Error, c.reason+": commit ") || st.LastApplied != good {
			t.Fatalf("%s: %+v", c.reason, st.Last)
		}
		if got, _ := dep.deploys(); len(got) != deployed {
			t.Fatalf("%s: the deployer ran: %+v", c.reason, got)
		}
		if h := headOf(t, checkout); h != good {
			t.Fatalf("%s: the checkout moved to %s", c.reason, h)
		}
		// /status as JSON carries the reason.
		b, _ := json.Marshal(st)
		if !strings.Contains(string(b), `"refusal":"`+c.reason+`"`) {
			t.Fatalf("/status %s", b)
		}
	}

	// The forge was told: pending then success for good; pending then a
	// failure naming the reason for each refused commit.
	var states []string
	for _, q := range forge.waitN(t, 8) {
		var b map[string]string
		json.Unmarshal(q.body, &b)
		states = append(states, b["state"]+": "+b["description"])
	}
	for i, reason := range []string{"unsigned", "unknown-key", "key-expired"} {
		if got := states[3+2*i]; !strings.HasPrefix(got, "failure: refused on web1: "+reason+": commit ") {
			t.Errorf("status %d: %q", 3+2*i, got)
		}
	}
	kinds, evs := events(t, hook.waitN(t, 5))
	if strings.Join(kinds, " ") != "started succeeded failed failed failed" {
		t.Fatalf("events %v", kinds)
	}
	if ev := evs[1]; !strings.HasPrefix(ev.Source.Signer, "alice@example.org (ssh-ed25519 SHA256:") {
		t.Errorf("succeeded event's signer %q", ev.Source.Signer)
	}
	if ev := evs[2]; ev.Stage != queue.StageSignature || !strings.HasPrefix(ev.Error, "unsigned: ") {
		t.Errorf("refusal event %+v", ev)
	}
	m := f.metrics()
	for _, want := range []string{
		`webhookd_signature_refusals_total{reason="unsigned",repo="infra"} 1`,
		`webhookd_signature_refusals_total{reason="unknown-key",repo="infra"} 1`,
		`webhookd_signature_refusals_total{reason="key-expired",repo="infra"} 1`,
		`webhookd_signature_refusals_total{reason="bad-signature",repo="infra"} 0`,
		`webhookd_deploys_total{repo="infra",result="failed"} 3`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestPollingRefusesAnUnsignedTip: the same check holds when no webhook
// arrives and the branch is polled (here: force-pushed to an unsigned
// commit).
func TestPollingRefusesAnUnsignedTip(t *testing.T) {
	_, aliceLine := signingKey(t, "alice@example.org")
	dep := &fakeDeployer{}
	f := newFixture(t, dep, fmt.Sprintf("    poll: 1h\n    pollSpread: 0s\n    verify: {allowedSigners: %s}\n", allowedSignersFile(t, aliceLine)))
	tip := f.remote.signedCommit("", `{"v":"unsigned"}`)
	f.start()
	st := f.wait("refused", func(s queue.RepoStatus) bool { return s.Last != nil && s.Last.Commit == tip })
	if st.Last.Trigger != "poll" || st.Last.Refusal != "unsigned" || st.LastApplied != "" {
		t.Fatalf("%+v", st.Last)
	}
	if got, _ := dep.deploys(); len(got) != 0 {
		t.Fatalf("deployed %+v", got)
	}
	if h := headOf(t, filepath.Join(f.state, "infra")); h != "" {
		t.Fatalf("checked out %s", h)
	}
}

func TestVerifyConfig(t *testing.T) {
	_, line := signingKey(t, "alice@example.org")
	writable := allowedSignersFile(t, line)
	must(t, os.Chmod(writable, 0o666))
	for name, c := range map[string]struct{ verify, want string }{
		"no file":          {"{}", "repos[0].verify.allowedSigners: required"},
		"relative":         {"{allowedSigners: signers}", "must be an absolute path"},
		"missing":          {"{allowedSigners: /nonexistent/allowed_signers}", "does not exist"},
		"world-writable":   {"{allowedSigners: " + writable + "}", "0644 or stricter"},
		"bad line":         {"{allowedSigners: " + allowedSignersFile(t, "alice@example.org ssh-ed25519") + "}", "allowed_signers:1:"},
		"keyring relative": {"{keyring: keys.asc}", "repos[0].verify.keyring: must be an absolute path"},
		"keyring missing":  {"{keyring: /nonexistent/keys.asc}", "repos[0].verify.keyring: "},
		"keyring writable": {"{keyring: " + writable + "}", "0644 or stricter"},
		"keyring of ssh":   {"{keyring: " + allowedSignersFile(t, line) + "}", "not a readable OpenPGP keyring"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := config.Parse("test.yaml", []byte("repos:\n  - {name: infra, url: /srv/infra, poll: 1m, verify: "+c.verify+"}\n"), "web1")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestGPGSignedCommitsDeploy: with verify.keyring, a commit signed by
// the real gpg with a key of the keyring deploys and names the key's user
// ID and fingerprint; one by a key not in it is refused as an unknown key.
func TestGPGSignedCommitsDeploy(t *testing.T) {
	aliceEnv, aliceFpr, keyring := gpgKey(t, "Alice <alice@example.org>")
	malloryEnv, malloryFpr, _ := gpgKey(t, "Mallory <mallory@example.org>")
	dep := &fakeDeployer{}
	f := newFixture(t, dep, fmt.Sprintf("    verify: {keyring: %s}\n", keyring))
	f.start()
	good := f.remote.gpgCommit(aliceEnv, aliceFpr, `{"v":"good"}`)
	f.push(GitHub, "refs/heads/main", good)
	st := f.wait("good applied", func(s queue.RepoStatus) bool { return s.LastApplied == good })
	if s := st.Last.Signer; s == nil || s.Principal != "Alice <alice@example.org>" || s.Fingerprint != aliceFpr || s.KeyType != "openpgp" {
		t.Fatalf("signer %+v", st.Last.Signer)
	}
	bad := f.remote.gpgCommit(malloryEnv, malloryFpr, `{"v":"mallory"}`)
	f.push(GitHub, "refs/heads/main", bad)
	st = f.wait("refused", func(s queue.RepoStatus) bool { return s.Last != nil && s.Last.Commit == bad && s.State == "idle" })
	if st.Last.Refusal != "unknown-key" || !strings.Contains(st.Last.Error, malloryFpr) || st.LastApplied != good {
		t.Fatalf("%+v", st.Last)
	}
	if got, _ := dep.deploys(); len(got) != 1 {
		t.Fatalf("deploys %+v", got)
	}
}

// TestHostileTipIsScreened: a commit whose signature header is 10 MB is
// refused before go-git decodes it (which would take hours), whether or
// not the repository checks signatures.
func TestHostileTipIsScreened(t *testing.T) {
	dep := &fakeDeployer{}
	f := newFixture(t, dep, "")
	f.remote.commit(`{"v":"a"}`)
	out, err := exec.Command("bash", "-c", "cd "+f.remote.dir+" && c=$({ git cat-file commit HEAD | sed '/^committer /q'; printf 'gpgsig -----BEGIN SSH SIGNATURE-----\\n'; head -c 7800000 /dev/zero | base64 -w 70 | sed 's/^/ /'; printf ' -----END SSH SIGNATURE-----\\n\\nhostile\\n'; } | git hash-object --literally -t commit -w --stdin) && git update-ref refs/heads/main $c && echo $c").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	hostile := strings.TrimSpace(string(out))
	f.start()
	f.push(GitHub, "refs/heads/main", hostile)
	st := f.wait("refused", func(s queue.RepoStatus) bool { return s.Last != nil && s.Last.Commit == hostile })
	if st.Last.Refusal != "bad-signature" || st.Last.Stage() != queue.StageSignature || !strings.Contains(st.Last.Error, "over the cap") {
		t.Fatalf("%+v", st.Last)
	}
	if got, _ := dep.deploys(); len(got) != 0 {
		t.Fatalf("deployed %+v", got)
	}

	// The next commit, on top of the hostile one, is fetched (go-git walks
	// the clone's refs for what it has) and deploys.
	next := f.remote.signedCommit("", `{"v":"next"}`) // the git CLI: go-git's own commit would decode the hostile parent
	f.push(GitHub, "refs/heads/main", next)
	st = f.wait("next applied", func(s queue.RepoStatus) bool { return s.Last != nil && s.Last.Commit == next && s.State == "idle" })
	t.Logf("next: %+v", st.Last)
	if st.LastApplied != next {
		t.Fatalf("%+v", st.Last)
	}
}
