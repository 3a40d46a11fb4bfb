//go:build integration

package integration

// Issue 40's acceptance on a real test host: webhookd with
// repos[].verify.allowedSigners deploys a commit signed with an allowed SSH
// key (real `git commit -S`, gpg.format=ssh) and refuses, before checkout,
// an unsigned commit, one signed by an unknown key, one altered after
// signing and one signed by a key whose validity has ended — through a
// webhook and through polling. Each refusal is checked where an operator
// would look: the checkout's HEAD, the container's InvocationID, the
// forge's commit status (loopback receiver), the notification, /status
// and /metrics.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	sigKeys    = "/root/signing"
	sigAllowed = "/etc/syslet/allowed_signers"
)

// sigStatus is the part of /status these tests read.
type sigStatus struct {
	State       string
	LastApplied string
	Last        *struct {
		Commit, Result, Stage, Error, Refusal, Trigger string
		Signer                                         *struct{ Principal, Fingerprint string }
	}
}

func (w *whHost) sigStatus() sigStatus {
	w.t.Helper()
	var doc struct{ Repos []sigStatus }
	out := w.MustRun(w.t, "curl -sSf "+whURL+"/status")
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Repos) != 1 {
		w.t.Fatalf("/status: %v\n%s", err, out)
	}
	return doc.Repos[0]
}

func (w *whHost) waitSig(what string, ok func(sigStatus) bool) sigStatus {
	w.t.Helper()
	deadline := time.Now().Add(whWait)
	for {
		st := w.sigStatus()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			log, _ := w.JournalSince("", "-u", "webhookd.service", "-n", "40", "-o", "cat")
			w.t.Fatalf("timed out waiting for %s; status %+v last %+v\nwebhookd log:\n%s", what, st, st.Last, log)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// signedCommit commits the work clone signed with the key named (unsigned
// when ""), pushes it to the bare repository and returns it.
func (w *whHost) signedCommit(key, msg string) string {
	w.t.Helper()
	sign := "-c commit.gpgsign=false"
	if key != "" {
		sign = "-c gpg.format=ssh -c user.signingkey=" + sigKeys + "/" + key + " -c commit.gpgsign=true"
	}
	out := w.MustRun(w.t, "cd "+whWork+" && git add -A && git "+sign+" commit -q -m '"+msg+"' && git push -q -f origin HEAD:main && git rev-parse HEAD")
	return strings.TrimSpace(out)
}

func TestSignedCommitsOnly(t *testing.T) {
	w := startWebhookd(t)
	startReceiver(t, w.Host)
	host := strings.TrimSpace(w.MustRun(t, "hostname"))

	// Three keys, made by ssh-keygen in the guest: alice is allowed, old
	// was (its validity ended in 2020), mallory never was.
	w.MustRun(t, "install -d -m 0700 "+sigKeys+" && cd "+sigKeys+
		" && for k in alice old mallory; do ssh-keygen -q -t ed25519 -N '' -C $k -f $k; done"+
		` && { echo "alice@example.org namespaces=\"git\" $(cat alice.pub)"; echo "old@example.org namespaces=\"git\",valid-before=\"20200101Z\" $(cat old.pub)"; } > `+sigAllowed+
		" && chmod 0644 "+sigAllowed)
	alicePub := strings.TrimSpace(w.MustRun(t, "ssh-keygen -lf "+sigKeys+"/alice.pub | cut -d' ' -f2"))

	// A group-writable file is refused by --check.
	w.MustRun(t, "chmod 0664 "+sigAllowed)
	w.writeConfigLines("ssh://root@127.0.0.1/srv/git/infra.git", "    secretFile: "+whSecret, "    verify: {allowedSigners: "+sigAllowed+"}")
	if r := w.Run("webhookd --check --config " + whConfig); r.OK() || !strings.Contains(r.Stderr+r.Stdout, "0644 or stricter") {
		t.Fatalf("--check of a group-writable allowed-signers file: %s", r)
	}
	w.MustRun(t, "chmod 0644 "+sigAllowed)
	w.writeNotifyConfig("github", rcvURL+"/github", "auto", "    verify: {allowedSigners: "+sigAllowed+"}")

	// A commit signed by alice deploys, and /status names her.
	w.writeSpec("localhost:5000/web:v2", "signed", "")
	good := w.signedCommit("alice", "signed by alice")
	if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: good}); code != 202 {
		t.Fatalf("push: %d %s", code, reply)
	}
	st := w.waitSig("the signed commit applied", func(s sigStatus) bool { return s.LastApplied == good })
	if s := st.Last.Signer; s == nil || s.Principal != "alice@example.org" || s.Fingerprint != alicePub {
		t.Fatalf("signer %+v, want alice@example.org %s", st.Last.Signer, alicePub)
	}
	if _, _, rev := w.running(); rev != "signed" {
		t.Fatalf("running REV %q", rev)
	}
	inv := prop(t, w.Host, "web.service", "InvocationID")
	// The run journal names the signer: syslet history's row, the run's
	// page with the key.
	hist := w.MustRun(t, "syslet history")
	if !strings.Contains(hist, "git infra@"+good+" (signed by alice@example.org)") {
		t.Fatalf("syslet history does not name the signer:\n%s", hist)
	}
	t.Logf("$ syslet history\n%s", hist)

	altered := func() string {
		// Sign, then change the message and store the object under its
		// new hash: the signature is alice's, the content is not.
		w.signedCommit("alice", "the real content")
		return strings.TrimSpace(w.MustRun(t, "cd "+whWork+" && c=$(git cat-file commit HEAD | sed 's/the real content/the evil content/' | git hash-object -t commit -w --stdin) && git update-ref refs/heads/main $c && git push -q -f origin $c:main && echo $c"))
	}
	for _, tc := range []struct {
		reason string
		commit func() string
	}{
		{"unsigned", func() string { return w.signedCommit("", "unsigned") }},
		{"unknown-key", func() string { return w.signedCommit("mallory", "signed by mallory") }},
		{"bad-signature", altered},
		{"key-expired", func() string { return w.signedCommit("old", "signed by an expired key") }},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			w.t = t
			w.writeSpec("localhost:5000/web:v3", tc.reason, "")
			commit := tc.commit()
			if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: commit}); code != 202 {
				t.Fatalf("push: %d %s", code, reply)
			}
			st := w.waitSig("the refusal", func(s sigStatus) bool { return s.Last != nil && s.Last.Commit == commit && s.State == "idle" })
			t.Logf("%s: /status last %+v", tc.reason, *st.Last)
			if st.Last.Result != "failed" || st.Last.Stage != "signature" || st.Last.Refusal != tc.reason || !strings.HasPrefix(st.Last.Error, tc.reason+": commit ") || st.LastApplied != good {
				t.Fatalf("%s: %+v", tc.reason, *st.Last)
			}
			// Nothing was checked out, nothing restarted.
			if h := w.head(); h != good {
				t.Errorf("the checkout is at %s, want %s", h, good)
			}
			if got := prop(t, w.Host, "web.service", "InvocationID"); got != inv {
				t.Errorf("web.service restarted: InvocationID %s, was %s", got, inv)
			}
			if _, _, rev := w.running(); rev != "signed" {
				t.Errorf("running REV %q", rev)
			}
			// The forge: pending, then failure with the reason.
			rs := waitReceived(t, w.Host, "/github/", "the refusal's status", func(rs []rcvRecord) bool {
				s, _ := statusStates(t, rs, commit)
				return len(s) >= 2
			})
			states, bodies := statusStates(t, rs, commit)
			desc := bodies[len(bodies)-1]["description"]
			t.Logf("%s: forge states %v, description %q", tc.reason, states, desc)
			if strings.Join(states, " ") != "pending failure" || !strings.HasPrefix(desc, "refused on "+host+": "+tc.reason+": commit ") {
				t.Errorf("forge states %v, description %q", states, desc)
			}
			// The notification.
			hooks := waitReceived(t, w.Host, "/hook", "the refusal's event", func(rs []rcvRecord) bool {
				return len(hookEventsUnsigned(t, rs, commit)) >= 1
			})
			evs := hookEventsUnsigned(t, hooks, commit)
			if len(evs) != 1 || evs[0].Event != "failed" || evs[0].Stage != "signature" || !strings.HasPrefix(evs[0].Error, tc.reason+": ") {
				t.Errorf("events %+v", evs)
			}
			if got := w.metric(`webhookd_signature_refusals_total{reason="` + tc.reason + `",repo="infra"}`); got != 1 {
				t.Errorf("refusals metric for %s: %v", tc.reason, got)
			}
		})
	}
	w.t = t

	// Hostile signature blocks, crafted as objects and pushed: each is a
	// bad signature, refused without a checkout. The 10 MB one stays in
	// webhookd's clone: every later fetch lists the clone's commits, which
	// go-git would decode in quadratic time (hours) were they not screened
	// — the polled commits below are those later fetches.
	hostile := func(name, sig string) string {
		// The header of a real commit, then the crafted gpgsig header.
		return strings.TrimSpace(w.MustRun(t, "cd "+whWork+" && c=$({ git cat-file commit HEAD | sed '/^committer /q'; "+sig+"; printf '\\n"+name+"\\n'; } | git hash-object --literally -t commit -w --stdin) && git update-ref refs/heads/main $c && git push -q -f origin $c:main && echo $c"))
	}
	for _, c := range []struct{ name, sig, want string }{
		{"a NUL", `printf 'gpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lH\000AAAB\n -----END SSH SIGNATURE-----\n'`, "NUL"},
		{"not armored", `printf 'gpgsig U1NIU0lHAAAAAQ==\n'`, "not armored"},
		{"10 MB", `{ printf 'gpgsig -----BEGIN SSH SIGNATURE-----\n'; head -c 7800000 /dev/zero | base64 -w 70 | sed 's/^/ /'; printf ' -----END SSH SIGNATURE-----\n'; }`, "over the cap"},
	} {
		commit := hostile(strings.ReplaceAll(c.name, " ", "-"), c.sig)
		if code, reply := w.push(whDelivery{forge: "github", ref: "refs/heads/main", after: commit}); code != 202 {
			t.Fatalf("%s: push: %d %s", c.name, code, reply)
		}
		st := w.waitSig(c.name, func(s sigStatus) bool { return s.Last != nil && s.Last.Commit == commit && s.State == "idle" })
		t.Logf("%s: /status last error %q", c.name, st.Last.Error)
		if st.Last.Refusal != "bad-signature" || st.Last.Stage != "signature" || !strings.Contains(st.Last.Error, c.want) || w.head() != good {
			t.Errorf("%s: %+v", c.name, *st.Last)
		}
	}
	if got := w.metric(`webhookd_signature_refusals_total{reason="bad-signature",repo="infra"}`); got != 4 {
		t.Errorf("bad-signature refusals: %v", got)
	}
	// Bounded memory: the 10 MB object was read at most once whole.
	t.Logf("webhookd RSS after the hostile commits: %d KiB", w.rss())
	if got := prop(t, w.Host, "web.service", "InvocationID"); got != inv {
		t.Errorf("web.service restarted: InvocationID %s, was %s", got, inv)
	}
	w.MustRun(t, "cd "+whWork+" && git reset -q --hard "+good)

	// Polling (no webhook at all): the branch force-pushed to an unsigned
	// commit is refused the same way.
	w.writeNotifyConfig("github", rcvURL+"/github", "auto", "    verify: {allowedSigners: "+sigAllowed+"}", "    poll: 5s")
	w.writeSpec("localhost:5000/web:v4", "polled-unsigned", "")
	w.MustRun(t, "cd "+whWork+" && git reset -q --soft "+good)
	polled := w.signedCommit("", "unsigned, found by polling")
	st = w.waitSig("the polled refusal", func(s sigStatus) bool { return s.Last != nil && s.Last.Commit == polled && s.State == "idle" })
	if st.Last.Trigger != "poll" || st.Last.Refusal != "unsigned" || st.LastApplied != good || w.head() != good {
		t.Fatalf("polled: %+v", *st.Last)
	}
	if got := prop(t, w.Host, "web.service", "InvocationID"); got != inv {
		t.Errorf("web.service restarted: InvocationID %s, was %s", got, inv)
	}

	// And a signed commit on top deploys through polling.
	w.writeSpec("localhost:5000/web:v4", "polled-signed", "")
	signed := w.signedCommit("alice", "signed, found by polling")
	st = w.waitSig("the polled signed commit applied", func(s sigStatus) bool { return s.LastApplied == signed })
	if st.Last.Signer == nil || st.Last.Signer.Principal != "alice@example.org" {
		t.Fatalf("polled signer %+v", st.Last)
	}
	if _, _, rev := w.running(); rev != "polled-signed" {
		t.Fatalf("running REV %q", rev)
	}
	// The refused commits left no run in the journal: the last run is the
	// polled signed commit's.
	hist = w.MustRun(t, "syslet history --output json")
	var runs []struct {
		Source string
		Signer *struct{ Principal, Fingerprint string }
	}
	must(t, json.Unmarshal([]byte(hist), &runs))
	if len(runs) != 2 || runs[0].Source != "git infra@"+good || runs[1].Source != "git infra@"+signed {
		t.Fatalf("syslet history --output json:\n%s", hist)
	}
	for _, r := range runs {
		if r.Signer == nil || r.Signer.Principal != "alice@example.org" || r.Signer.Fingerprint != alicePub {
			t.Errorf("run of %s: signer %+v", r.Source, r.Signer)
		}
	}
}

// TestPushVerifyRefusesBeforeConnecting: syslet push --verify on this
// machine, from a real git checkout with real ssh-keygen keys: an unsigned
// HEAD, a HEAD by an unknown key and a dirty tree send nothing (the host
// gets no connection and no run); a HEAD alice signed is applied.
func TestPushVerifyRefusesBeforeConnecting(t *testing.T) {
	h := pushHost(t)
	e := newPushEnv(t)
	e.addHost("web1", h.Port())
	e.trust(h, hostKey(t, h))
	sh := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = e.dir
		cmd.Env = append(os.Environ(), "HOME="+e.home, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	for _, k := range []string{"alice", "mallory"} {
		sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", k, "-f", filepath.Join(e.dir, k))
	}
	pub, err := os.ReadFile(filepath.Join(e.dir, "alice.pub"))
	must(t, err)
	allowed := filepath.Join(e.dir, "allowed_signers")
	must(t, os.WriteFile(allowed, []byte(`alice@example.org namespaces="git" `+string(pub)), 0o644))
	git := func(args ...string) string {
		return sh(append([]string{"git", "-C", filepath.Join(e.dir, "repo"), "-c", "user.name=ops", "-c", "user.email=ops@example.org", "-c", "gpg.format=ssh"}, args...)...)
	}
	specs := e.writeSpecs("repo/web1", map[string]string{"sleeper.json": sleeper("sleeper"), "shared.json": sharedNetwork})
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "unsigned")

	runs := func() string { return strings.TrimSpace(h.MustRun(t, "syslet history --output json")) }
	before := runs()
	for _, c := range []struct {
		prepare func()
		want    string
	}{
		{func() {}, "unsigned: commit "},
		{func() {
			git("-c", "user.signingkey="+filepath.Join(e.dir, "mallory"), "commit", "-q", "-S", "--allow-empty", "-m", "mallory")
		}, "unknown-key: commit "},
		{func() {
			git("-c", "user.signingkey="+filepath.Join(e.dir, "alice"), "commit", "-q", "-S", "--allow-empty", "-m", "alice")
			must(t, os.WriteFile(filepath.Join(specs, "extra.json"), []byte(sleeper("extra")), 0o644))
		}, "file(s) changed or not committed"},
	} {
		c.prepare()
		r := e.push("--verify", allowed, "web1", specs)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "nothing was sent") {
			t.Fatalf("want exit 1 and %q:\n%s", c.want, r)
		}
	}
	if after := runs(); after != before {
		t.Fatalf("the host ran something:\n%s", after)
	}
	must(t, os.Remove(filepath.Join(specs, "extra.json")))
	r := e.push("--verify", allowed, "web1", specs)
	if r.code != 0 || !strings.Contains(r.stderr, "signed by alice@example.org (ssh-ed25519 SHA256:") {
		t.Fatalf("the signed push:\n%s", r)
	}
	if got := prop(t, h, "sleeper.service", "ActiveState"); got != "active" {
		t.Fatalf("sleeper.service is %s", got)
	}

	// --verify with an OpenPGP keyring (told apart by its content): the
	// SSH-signed HEAD is an unknown key to it; a HEAD signed by the real
	// gpg with the keyring's key is pushed.
	g := newGPGSigner(t, "Alice <alice@example.org>")
	keyring := filepath.Join(e.dir, "keyring.gpg")
	must(t, os.WriteFile(keyring, []byte(g.gpg(t, "--export", g.fpr)), 0o644))
	before = runs()
	if r := e.push("--verify", keyring, "web1", specs); r.code != 1 || !strings.Contains(r.stderr, "unknown-key: commit ") || !strings.Contains(r.stderr, "nothing was sent") {
		t.Fatalf("an SSH-signed HEAD against a keyring:\n%s", r)
	}
	if after := runs(); after != before {
		t.Fatalf("the host ran something:\n%s", after)
	}
	g.git(t, filepath.Join(e.dir, "repo"), "commit", "-q", "-S", "--allow-empty", "-m", "signed with gpg")
	r = e.push("--verify", keyring, "web1", specs)
	if r.code != 0 || !strings.Contains(r.stderr, "signed by Alice <alice@example.org> (openpgp "+g.fpr+")") {
		t.Fatalf("the gpg-signed push:\n%s", r)
	}
}

// hookEventsUnsigned are the webhook target's events for commit (their
// HMAC is TestNotificationsAndCommitStatus's business).
func hookEventsUnsigned(t *testing.T, rs []rcvRecord, commit string) []event {
	t.Helper()
	var out []event
	for _, r := range rs {
		var ev event
		if err := json.Unmarshal([]byte(r.Body), &ev); err != nil {
			t.Fatalf("webhook body: %v: %s", err, r.Body)
		}
		if ev.Source.Commit == commit {
			out = append(out, ev)
		}
	}
	return out
}
