package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		arg        string
		user, host string
		port       int
		bad        bool
	}{
		{arg: "web1", host: "web1"},
		{arg: "root@web1", user: "root", host: "web1"},
		{arg: "root@web1:2222", user: "root", host: "web1", port: 2222},
		{arg: "10.0.0.5:22", host: "10.0.0.5", port: 22},
		{arg: "[::1]:2222", host: "::1", port: 2222},
		{arg: "deploy@[fe80::1]", user: "deploy", host: "fe80::1"},
		{arg: "::1", host: "::1"},
		{arg: "a@b@web1", user: "a@b", host: "web1"},
		{arg: "", bad: true},
		{arg: "@web1", bad: true},
		{arg: "web1:", bad: true},
		{arg: "web1:0", bad: true},
		{arg: "web1:70000", bad: true},
		{arg: "web1:ssh", bad: true},
		{arg: "[::1", bad: true},
		{arg: "[::1]x", bad: true},
		{arg: "hosts/web1", bad: true},
	}
	for _, tt := range tests {
		user, host, port, err := ParseTarget(tt.arg)
		if tt.bad {
			if !errors.Is(err, ErrTarget) {
				t.Errorf("ParseTarget(%q) = %q %q %d, %v; want ErrTarget", tt.arg, user, host, port, err)
			}
			continue
		}
		if err != nil || user != tt.user || host != tt.host || port != tt.port {
			t.Errorf("ParseTarget(%q) = %q %q %d, %v; want %q %q %d", tt.arg, user, host, port, err, tt.user, tt.host, tt.port)
		}
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "config")
	os.WriteFile(cfgFile, []byte(`
Host web1
  HostName 10.0.0.1
  Port 2201
  User deploy
  IdentityFile ~/.ssh/web_key
Host *.lan
  HostName %h.example.net
  IdentityFile %d/lan_key
Host *
  User fallback
`), 0o600)
	c, err := LoadSSHConfig("/home/me", cfgFile, filepath.Join(dir, "missing"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		arg  string
		want Target
	}{
		{"web1", Target{Arg: "web1", Alias: "web1", User: "deploy", HostName: "10.0.0.1", Port: 2201, IdentityFiles: []string{"/home/me/.ssh/web_key"}}},
		{"root@web1:22", Target{Arg: "root@web1:22", Alias: "web1", User: "root", HostName: "10.0.0.1", Port: 22, IdentityFiles: []string{"/home/me/.ssh/web_key"}}},
		{"db.lan", Target{Arg: "db.lan", Alias: "db.lan", User: "fallback", HostName: "db.lan.example.net", Port: 22, IdentityFiles: []string{"/home/me/lan_key"}}},
		{"other", Target{Arg: "other", Alias: "other", User: "fallback", HostName: "other", Port: 22}},
	}
	for _, tt := range tests {
		got, err := c.Resolve(tt.arg, "me")
		if err != nil {
			t.Fatalf("Resolve(%q): %v", tt.arg, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("Resolve(%q) =\n %+v\nwant\n %+v", tt.arg, got, tt.want)
		}
	}
	matchFile := filepath.Join(dir, "with-match")
	os.WriteFile(matchFile, []byte("Match host *.corp\n  User corp\n"), 0o600)
	if _, err := LoadSSHConfig("/home/me", matchFile); err == nil {
		t.Error("a config the parser cannot read was accepted")
	}
	var skipped []string
	lenient, err := LoadDefaultSSHConfig("/home/me", func(p string, err error) { skipped = append(skipped, p) }, matchFile, cfgFile)
	if err != nil || len(skipped) != 1 || skipped[0] != matchFile {
		t.Fatalf("LoadDefaultSSHConfig: %v, skipped %q", err, skipped)
	}
	if got, _ := lenient.Resolve("web1", "me"); got.HostName != "10.0.0.1" {
		t.Errorf("the readable default file was not used: %+v", got)
	}
	none, _ := LoadSSHConfig("/home/me")
	if got, _ := none.Resolve("web1", "me"); got.User != "me" || got.Port != 22 || got.HostName != "web1" {
		t.Errorf("without config: %+v", got)
	}
}

// Run is a rollout of one batch, no budget: every host at once,
// o.Parallel at a time (push without --batch).
func Run(ctx context.Context, jobs []Job, o Options) []Result {
	return Rollout(ctx, jobs, o, Strategy{}).Results
}

// fixture is a client key, a known_hosts file and helpers to run jobs.
type fixture struct {
	t          testing.TB
	client     ssh.Signer
	knownHosts string
}

func newFixture(t testing.TB) *fixture {
	return &fixture{t: t, client: newSigner(t), knownHosts: filepath.Join(t.TempDir(), "known_hosts")}
}

func (f *fixture) know(addr string, key ssh.PublicKey) {
	f.t.Helper()
	fh, err := os.OpenFile(f.knownHosts, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		f.t.Fatal(err)
	}
	fmt.Fprintln(fh, knownhosts.Line([]string{addr}, key))
	fh.Close()
}

func (f *fixture) job(addr, name string) Job {
	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	return Job{
		Target: Target{Arg: name, Alias: name, User: "root", HostName: host, Port: port},
		Stream: []byte(`{"apiVersion":"v1"}` + "\n"),
		Auth:   Auth([]ssh.Signer{f.client}, nil),
	}
}

func (f *fixture) options(hk *HostKeys, stdout, stderr *bytes.Buffer) Options {
	if hk == nil {
		hk = &HostKeys{Files: []string{f.knownHosts}}
	}
	o := Options{Command: "syslet --diff --stdin", Parallel: 4, ConnectTimeout: 5 * time.Second, HostKeys: hk, Stdout: io.Discard, Stderr: io.Discard}
	if stdout != nil {
		o.Stdout = stdout
	}
	if stderr != nil {
		o.Stderr = stderr
	}
	return o
}

// planHandler answers like `syslet --diff --stdin --output text+json`:
// its text, a last line of it without its line feed, then its document.
func planHandler(s *execSession) int {
	if s.Cmd != "syslet --diff --stdin --output text+json" {
		fmt.Fprintf(s.Stderr, "unexpected command %q\n", s.Cmd)
		return 1
	}
	fmt.Fprintf(s.Stdout, "syslet plan: got %d bytes\n\n", len(s.Stdin))
	fmt.Fprintf(s.Stdout, "Plan: 1 to create, 0 to change, 0 to reload, 0 metadata-only, 0 to remove, 1 to start, 0 to stop, 2 unchanged; 5 actions (digest 5e7b792e4a17).\n")
	fmt.Fprint(s.Stderr, "a warning without newline")
	report(s.Stderr, `{"verdict":"planned","exit":0,"planCounts":{"create":1,"start":1,"unchanged":2,"actions":5}}`)
	return 0
}

func TestHostKeyUnknownRefusedBeforeAuth(t *testing.T) {
	f := newFixture(t)
	srv := startServer(t, f.client.PublicKey(), planHandler)
	res := Run(context.Background(), []Job{f.job(srv.addr, "web1")}, f.options(nil, nil, nil))
	r := res[0]
	if r.Ending.String() != "refused" {
		t.Fatalf("status %v, err %v; want refused", r.Ending, r.Err)
	}
	var hk *HostKeyError
	if !errors.As(r.Err, &hk) || hk.Problem != KeyUnknown {
		t.Fatalf("err = %v; want an unknown-key HostKeyError", r.Err)
	}
	fp := ssh.FingerprintSHA256(srv.hostKey.PublicKey())
	if !strings.Contains(r.Err.Error(), fp) || !strings.Contains(r.Err.Error(), "--accept-new") {
		t.Errorf("error %q does not show the fingerprint %s and the way out", r.Err, fp)
	}
	if n := srv.authCalls.Load(); n != 0 {
		t.Errorf("%d authentication attempt(s) reached the server; want none", n)
	}
	if srv.execs.Load() != 0 {
		t.Error("a command ran")
	}
	if _, err := os.Stat(f.knownHosts); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("known_hosts was written without --accept-new: %v", err)
	}
}

func TestHostKeyChangedRefusedBeforeAuth(t *testing.T) {
	f := newFixture(t)
	srv := startServer(t, f.client.PublicKey(), planHandler)
	f.know(srv.addr, newSigner(t).PublicKey()) // someone else's key
	for _, acceptNew := range []bool{false, true} {
		hk := &HostKeys{Files: []string{f.knownHosts}, AcceptNew: acceptNew}
		r := Run(context.Background(), []Job{f.job(srv.addr, "web1")}, f.options(hk, nil, nil))[0]
		var herr *HostKeyError
		if r.Ending.String() != "refused" || !errors.As(r.Err, &herr) || herr.Problem != KeyChanged {
			t.Fatalf("accept-new=%v: status %v, err %v; want refused, changed", acceptNew, r.Ending, r.Err)
		}
		if !strings.Contains(r.Err.Error(), ssh.FingerprintSHA256(srv.hostKey.PublicKey())) {
			t.Errorf("error %q lacks the presented fingerprint", r.Err)
		}
	}
	if n := srv.authCalls.Load(); n != 0 {
		t.Errorf("%d authentication attempt(s) reached the server; want none", n)
	}
}

func TestHostKeyRevoked(t *testing.T) {
	f := newFixture(t)
	srv := startServer(t, f.client.PublicKey(), planHandler)
	os.WriteFile(f.knownHosts, []byte("@revoked * "+string(ssh.MarshalAuthorizedKey(srv.hostKey.PublicKey()))), 0o600)
	r := Run(context.Background(), []Job{f.job(srv.addr, "web1")}, f.options(&HostKeys{Files: []string{f.knownHosts}, AcceptNew: true}, nil, nil))[0]
	var herr *HostKeyError
	if r.Ending.String() != "refused" || !errors.As(r.Err, &herr) || herr.Problem != KeyRevoked || srv.authCalls.Load() != 0 {
		t.Fatalf("status %v, err %v, auth calls %d; want refused as revoked before auth", r.Ending, r.Err, srv.authCalls.Load())
	}
}

func TestAcceptNewPins(t *testing.T) {
	f := newFixture(t)
	srv := startServer(t, f.client.PublicKey(), planHandler)
	os.WriteFile(f.knownHosts, []byte("# no newline at the end"), 0o600)
	var pinned []string
	hk := &HostKeys{Files: []string{f.knownHosts}, AcceptNew: true, Pinned: func(addr, typ, fp, file string) {
		pinned = append(pinned, addr+" "+fp)
	}}
	var stdout bytes.Buffer
	r := Run(context.Background(), []Job{f.job(srv.addr, "web1")}, f.options(hk, &stdout, nil))[0]
	if r.Ending.String() != "planned" {
		t.Fatalf("status %v, err %v", r.Ending, r.Err)
	}
	fp := ssh.FingerprintSHA256(srv.hostKey.PublicKey())
	if len(pinned) != 1 || pinned[0] != srv.addr+" "+fp {
		t.Errorf("pinned = %q", pinned)
	}
	data, _ := os.ReadFile(f.knownHosts)
	if want := knownhosts.Line([]string{srv.addr}, srv.hostKey.PublicKey()); !strings.Contains(string(data), "\n"+want+"\n") {
		t.Errorf("known_hosts =\n%s\nwant a line %q", data, want)
	}
	// The pinned key is now simply known.
	r = Run(context.Background(), []Job{f.job(srv.addr, "web1")}, f.options(nil, &stdout, nil))[0]
	if r.Ending.String() != "planned" {
		t.Fatalf("second push: status %v, err %v", r.Ending, r.Err)
	}
	if fi, _ := os.Stat(f.knownHosts); fi.Mode().Perm() != 0o600 {
		t.Errorf("known_hosts mode %v", fi.Mode().Perm())
	}
}

func TestAlgorithmsFollowKnownKeys(t *testing.T) {
	f := newFixture(t)
	rsaLine := "[127.0.0.1]:2222 ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQDB0KrtV0j+6hDXr5k3cMA4Rm6Et0fNlcMmBXwNjNYo7+jxgdcDJaO1ZtXmfUlxb5CNvw2JRN2SgNKhjyWy5EtZwxBvC2Ap6ec38f6gR8M7U2QXkF0YNQ9wcR8SaGVfsM4tmOkJ25hLvqfMjNeg5D/0yz1eXo5dDuHdKpfUFC9Zrw==\n"
	os.WriteFile(f.knownHosts, []byte(rsaLine), 0o600)
	f.know("127.0.0.1:2222", newSigner(t).PublicKey())
	hk := &HostKeys{Files: []string{f.knownHosts}}
	got := strings.Join(hk.Algorithms("127.0.0.1:2222"), " ")
	for _, want := range []string{ssh.KeyAlgoED25519, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256} {
		if !strings.Contains(got, want) {
			t.Errorf("Algorithms = %q; want %s in it", got, want)
		}
	}
	if a := hk.Algorithms("127.0.0.1:2223"); len(a) == 0 || a[0] != ssh.KeyAlgoED25519 {
		t.Errorf("unknown host: Algorithms = %q; want ed25519 first", a)
	}
}

func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestRunFleet(t *testing.T) {
	f := newFixture(t)
	web1 := startServer(t, f.client.PublicKey(), planHandler)
	web2 := startServer(t, f.client.PublicKey(), func(s *execSession) int {
		fmt.Fprintln(s.Stdout, "No changes detected. The host matches the specs.")
		fmt.Fprintln(s.Stderr, "syslet: something broke")
		report(s.Stderr, `{"verdict":"failed","exit":1,"planCounts":{"unchanged":3,"actions":0}}`)
		return 1
	})
	f.know(web1.addr, web1.hostKey.PublicKey())
	f.know(web2.addr, web2.hostKey.PublicKey())
	var stdout, stderr bytes.Buffer
	jobs := []Job{f.job(web1.addr, "web1"), f.job(web2.addr, "web2"), f.job(closedPort(t), "gone")}
	res := Run(context.Background(), jobs, f.options(nil, &stdout, &stderr))

	want := []struct {
		ending string
		code   int
		plan   string
	}{
		{"planned", 0, "1 to create, 1 to start, 2 unchanged; 5 actions"},
		{"failed", 1, "no changes"},
		{"unreachable", -1, ""},
	}
	for i, w := range want {
		r := res[i]
		if r.Ending.String() != w.ending || r.ExitCode != w.code || r.Plan() != w.plan {
			t.Errorf("%s: %v exit %d plan %q (err %v); want %s %d %q", r.Target.Arg, r.Ending, r.ExitCode, r.Plan(), r.Err, w.ending, w.code, w.plan)
		}
	}
	if !strings.Contains(stdout.String(), "web1 | syslet plan: got 20 bytes\n") {
		t.Errorf("stdout lacks web1's prefixed plan line (the stream is 20 bytes):\n%s", stdout.String())
	}
	for _, l := range []string{"web1 | a warning without newline\n", "web2 | syslet: something broke\n"} {
		if !strings.Contains(stderr.String(), l) {
			t.Errorf("stderr lacks %q:\n%s", l, stderr.String())
		}
	}
	if !AnyFailed(res) {
		t.Error("AnyFailed = false")
	}

	var table bytes.Buffer
	for i := range res {
		res[i].Duration = 1500 * time.Millisecond
	}
	WriteTable(&table, Report{Results: res, Batches: 1})
	wantTable := `HOST  RESULT       PLAN                                             DURATION
web1  planned      1 to create, 1 to start, 2 unchanged; 5 actions  1.5s
web2  failed       no changes                                       1.5s
gone  unreachable  -                                                1.5s
web2: failed: "syslet --diff --stdin" exited 1
gone: unreachable: connecting to ` + jobs[2].Target.Addr() + `: dial tcp ` + jobs[2].Target.Addr() + `: connect: connection refused
3 host(s): 1 planned, 1 failed, 1 unreachable
`
	if table.String() != wantTable {
		t.Errorf("table:\n%s\nwant:\n%s", table.String(), wantTable)
	}
}

func TestRunParallelBound(t *testing.T) {
	f := newFixture(t)
	var running, peak atomic.Int32
	handler := func(s *execSession) int {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
		running.Add(-1)
		return 0
	}
	var jobs []Job
	for i := range 5 {
		srv := startServer(t, f.client.PublicKey(), handler)
		f.know(srv.addr, srv.hostKey.PublicKey())
		jobs = append(jobs, f.job(srv.addr, fmt.Sprintf("h%d", i)))
	}
	o := f.options(nil, nil, nil)
	o.Parallel = 2
	res := Run(context.Background(), jobs, o)
	if AnyFailed(res) {
		t.Fatalf("results: %+v", res)
	}
	if p := peak.Load(); p > 2 {
		t.Errorf("%d hosts ran at once; --parallel 2", p)
	}
}

func TestInterruptStopsStartingHosts(t *testing.T) {
	f := newFixture(t)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	first := startServer(t, f.client.PublicKey(), func(s *execSession) int {
		started <- struct{}{}
		<-release
		return 0
	})
	second := startServer(t, f.client.PublicKey(), planHandler)
	f.know(first.addr, first.hostKey.PublicKey())
	f.know(second.addr, second.hostKey.PublicKey())
	ctx, cancel := context.WithCancel(context.Background())
	o := f.options(nil, nil, nil)
	o.Parallel = 1
	done := make(chan []Result)
	go func() { done <- Run(ctx, []Job{f.job(first.addr, "first"), f.job(second.addr, "second")}, o) }()
	<-started
	cancel() // Ctrl-C while the first host runs
	close(release)
	res := <-done
	if res[0].Ending.String() != "ok" {
		t.Errorf("running host: %v %v; want it to finish", res[0].Ending, res[0].Err)
	}
	if res[1].Ending.String() != "not reached" || second.execs.Load() != 0 || second.authCalls.Load() != 0 {
		t.Errorf("second host: %v; execs %d; want not reached, never contacted", res[1].Ending, second.execs.Load())
	}
	var table bytes.Buffer
	WriteTable(&table, Report{Results: res, Batches: 1})
	if !strings.HasSuffix(table.String(), "second  not reached  -     -\nnot reached (never connected to, left as they were): second\n2 host(s): 1 ok, 1 not reached\n") {
		t.Errorf("table:\n%s", table.String())
	}
}

func TestAbortForwardsSIGINT(t *testing.T) {
	f := newFixture(t)
	started := make(chan struct{}, 1)
	srv := startServer(t, f.client.PublicKey(), func(s *execSession) int {
		started <- struct{}{}
		sig := <-s.Signal
		fmt.Fprintf(s.Stdout, "got %s, stopping after the current action\n", sig)
		return 1
	})
	f.know(srv.addr, srv.hostKey.PublicKey())
	abort := make(chan struct{})
	o := f.options(nil, nil, nil)
	o.Abort = abort
	done := make(chan []Result)
	go func() { done <- Run(context.Background(), []Job{f.job(srv.addr, "web1")}, o) }()
	<-started
	close(abort)
	r := (<-done)[0]
	if got := srv.receivedSignals(); len(got) != 1 || got[0] != "INT" {
		t.Errorf("signals = %q; want [INT]", got)
	}
	if r.Ending.String() != "failed" || r.ExitCode != 1 {
		t.Errorf("status %v exit %d", r.Ending, r.ExitCode)
	}
}

func TestCommandTimeout(t *testing.T) {
	f := newFixture(t)
	srv := startServer(t, f.client.PublicKey(), func(s *execSession) int {
		<-s.Signal // stops on SIGTERM
		return 143
	})
	f.know(srv.addr, srv.hostKey.PublicKey())
	o := f.options(nil, nil, nil)
	o.CommandTimeout = 200 * time.Millisecond
	r := Run(context.Background(), []Job{f.job(srv.addr, "web1")}, o)[0]
	if r.Ending.String() != "failed" || r.Err == nil || !strings.Contains(r.Err.Error(), "timed out after 200ms") {
		t.Errorf("status %v err %v; want failed, timed out", r.Ending, r.Err)
	}
	if got := srv.receivedSignals(); len(got) != 1 || got[0] != "TERM" {
		t.Errorf("signals = %q; want [TERM]", got)
	}
}

func TestAuthFailureIsUnreachable(t *testing.T) {
	f := newFixture(t)
	srv := startServer(t, newSigner(t).PublicKey(), planHandler) // accepts another key only
	f.know(srv.addr, srv.hostKey.PublicKey())
	r := Run(context.Background(), []Job{f.job(srv.addr, "web1")}, f.options(nil, nil, nil))[0]
	if r.Ending.String() != "unreachable" || !strings.Contains(r.Err.Error(), "authenticating to") || srv.execs.Load() != 0 {
		t.Errorf("status %v err %v", r.Ending, r.Err)
	}
}

func TestKeysPassphrase(t *testing.T) {
	dir := t.TempDir()
	_, priv, _ := ed25519GenerateKey()
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "id_ed25519")
	os.WriteFile(path, pemEncode(block), 0o600)

	asked := 0
	k := &Keys{Passphrase: func(p string) ([]byte, error) { asked++; return []byte("s3cret"), nil }}
	for range 2 {
		s, err := k.Load(path, true)
		if err != nil || s == nil {
			t.Fatalf("Load: %v, %v", s, err)
		}
	}
	if asked != 1 {
		t.Errorf("asked %d times for one file; want once", asked)
	}

	var skipped []string
	k = &Keys{Passphrase: func(string) ([]byte, error) { return nil, ErrNoPassphrase }, Skipped: func(p string, err error) { skipped = append(skipped, p) }}
	if s, err := k.Load(path, false); s != nil || err != nil || len(skipped) != 1 {
		t.Errorf("optional encrypted key without a terminal: %v, %v, skipped %q; want skipped", s, err, skipped)
	}
	if _, err := k.Load(path, true); !errors.Is(err, ErrNoPassphrase) {
		t.Errorf("-i encrypted key without a terminal: %v; want ErrNoPassphrase", err)
	}
	k = &Keys{Passphrase: func(string) ([]byte, error) { return []byte("wrong"), nil }}
	if _, err := k.Load(path, true); err == nil {
		t.Error("wrong passphrase accepted")
	}
	if s, err := k.Load(filepath.Join(dir, "missing"), false); s != nil || err != nil {
		t.Errorf("missing optional key: %v %v", s, err)
	}
	if _, err := k.Load(filepath.Join(dir, "missing"), true); err == nil {
		t.Error("missing -i key: no error")
	}
}

func TestExitHints(t *testing.T) {
	f := newFixture(t)
	// A command that reported no verdict: its exit code's own meaning,
	// or that of the verdicts syslet exits so with.
	for code, want := range map[int]string{127: "is syslet installed on the host", 64: "is it older than this one?", 2: "found the specs invalid", 1: `exited 1`} {
		srv := startServer(t, f.client.PublicKey(), func(*execSession) int { return code })
		f.know(srv.addr, srv.hostKey.PublicKey())
		r := Run(context.Background(), []Job{f.job(srv.addr, "web1")}, f.options(nil, nil, nil))[0]
		if r.Ending.String() != "failed" || r.ExitCode != code || !strings.Contains(r.Err.Error(), want) {
			t.Errorf("exit %d: %v %d %v; want failed with %q", code, r.Ending, r.ExitCode, r.Err, want)
		}
	}
}
