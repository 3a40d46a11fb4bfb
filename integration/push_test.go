//go:build integration

package integration

// Issue 12's acceptance: `syslet push` runs on this machine, as a user
// would run it from a laptop or CI, and reaches test hosts over their
// loopback SSH ports with golang.org/x/crypto/ssh. Every claim is checked
// on the guest (units, files, sshd's own journal), not only in push's
// output.

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"golang.org/x/crypto/ssh"

	"github.com/syslet/syslet/integration/testhost"
)

// pushEnv is the client side: a HOME of its own (so the user's ~/.ssh is
// never read or written), an ssh_config mapping host names to test hosts,
// a known_hosts file and the harness's key (the guests' root key).
type pushEnv struct {
	t          *testing.T
	dir        string
	home       string
	sshConfig  string
	knownHosts string
	key        string
}

func newPushEnv(t *testing.T) *pushEnv {
	t.Helper()
	dir := t.TempDir()
	e := &pushEnv{t: t, dir: dir, home: filepath.Join(dir, "home"), sshConfig: filepath.Join(dir, "ssh_config"),
		knownHosts: filepath.Join(dir, "known_hosts"), key: harnessKey(t)}
	if err := os.MkdirAll(e.home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.sshConfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

// harnessKey is the private key the test host image authorises for root.
func harnessKey(t *testing.T) string {
	t.Helper()
	script, err := testhost.Script()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", script, "paths").Output()
	if err != nil {
		t.Fatalf("testhost.sh paths: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "sshkey="); ok {
			return v
		}
	}
	t.Fatalf("testhost.sh paths printed no sshkey: %s", out)
	return ""
}

// addHost maps a host name to a loopback port in the ssh_config file.
func (e *pushEnv) addHost(name string, port int) {
	e.t.Helper()
	f, err := os.OpenFile(e.sshConfig, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "Host %s\n  HostName 127.0.0.1\n  Port %d\n  User root\n\n", name, port)
}

// hostKey is the guest's ed25519 host key, read over the harness's own
// connection.
func hostKey(t *testing.T, h *testhost.Host) ssh.PublicKey {
	t.Helper()
	data, err := h.ReadFile("/etc/ssh/ssh_host_ed25519_key.pub")
	if err != nil {
		t.Fatal(err)
	}
	k, _, _, _, err := ssh.ParseAuthorizedKey(data)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// trust writes a known_hosts line for the host's port with key.
func (e *pushEnv) trust(h *testhost.Host, key ssh.PublicKey) {
	e.t.Helper()
	f, err := os.OpenFile(e.knownHosts, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "[127.0.0.1]:%d %s", h.Port(), ssh.MarshalAuthorizedKey(key))
}

type pushResult struct {
	args           []string
	stdout, stderr string
	code           int
	took           time.Duration
}

func (r pushResult) String() string {
	return fmt.Sprintf("$ syslet push %s\nexit %d after %s\n--- stdout\n%s--- stderr\n%s", strings.Join(r.args, " "), r.code, r.took.Round(time.Millisecond), r.stdout, r.stderr)
}

// push runs the syslet binary on this machine: `syslet push -F … --known-hosts …`
// with the harness key unless args bring their own -i.
func (e *pushEnv) push(args ...string) pushResult {
	e.t.Helper()
	full := []string{"push", "-F", e.sshConfig, "--known-hosts", e.knownHosts, "--connect-timeout", "20s"}
	if !slicesContains(args, "-i") {
		full = append(full, "-i", e.key)
	}
	full = append(full, args...)
	cmd := exec.Command(sysletBin, full...)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), "HOME="+e.home, "SSH_AUTH_SOCK=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	r := pushResult{args: args, stdout: stdout.String(), stderr: stderr.String(), took: time.Since(t0)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		e.t.Fatalf("running syslet push: %v", err)
	}
	e.t.Logf("%s", r)
	return r
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// writeSpecs writes files (name → content) under e.dir/rel.
func (e *pushEnv) writeSpecs(rel string, files map[string]string) string {
	e.t.Helper()
	dir := filepath.Join(e.dir, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
	return dir
}

// sleeper is a container spec that runs busybox from the guest's registry.
func sleeper(name string) string {
	return `{"apiVersion":"v1","type":"container","name":"` + name + `","unit":{"Container":{"Image":"localhost:5000/busybox:latest","RunInit":"true","Exec":"sleep 100000","Network":"shared.network"}}}` + "\n"
}

const sharedNetwork = `{"apiVersion":"v1","type":"network","name":"shared","unit":{"Network":{"Label":"from=common"}}}` + "\n"

// pushHost boots a host with syslet installed and podman's API socket on.
func pushHost(t *testing.T) *testhost.Host {
	t.Helper()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket")
	return h
}

// verboseSSHD makes the guest's sshd log every TCP connection ("Connection
// from …") as well as every login ("Accepted publickey …"), and returns a
// journal cursor taken once the new setting is in force and the probe
// connection that proved it has been logged to its end.
//
// PerSourcePenalties is turned off because every client of a test host
// comes through its forwarder as 127.0.0.1: the refused handshakes of one
// test must not get the next connection penalised.
func verboseSSHD(t *testing.T, h *testhost.Host) string {
	t.Helper()
	cur, err := sshdVerbose(h)
	if err != nil {
		t.Fatal(err)
	}
	return cur
}

// sshdVerbose is verboseSSHD for any goroutine: it returns what went wrong.
func sshdVerbose(h *testhost.Host) (string, error) {
	if err := h.WriteFile("/etc/ssh/sshd_config.d/00-push-test.conf", []byte("LogLevel VERBOSE\nPerSourcePenalties no\n"), 0o644); err != nil {
		return "", err
	}
	cur, err := h.JournalCursor()
	if err != nil {
		return "", err
	}
	if r := h.Run("systemctl reload ssh.service"); !r.OK() {
		return "", fmt.Errorf("reloading sshd: %s", r)
	}
	// A probe connection from inside the guest that reads the banner and
	// hangs up: once sshd has logged its start and its end at VERBOSE,
	// the reloaded sshd is listening and has nothing more to say about it.
	probe := "exec 3<>/dev/tcp/127.0.0.1/22 && read -t 5 banner <&3 && exec 3>&- && sleep 0.3 && journalctl --sync && " +
		"journalctl -q -o cat -u ssh.service --after-cursor=" + testhost.Quote(cur) + " > /tmp/probe.log && " +
		"grep -q 'Connection from' /tmp/probe.log && grep -Eq 'Connection (closed|reset)|kex_exchange_identification' /tmp/probe.log"
	if r := h.Eventually(probe, 30*time.Second); !r.OK() {
		return "", fmt.Errorf("sshd did not log connections at VERBOSE after a reload:\n%s\n%s", r, h.Run("cat /tmp/probe.log"))
	}
	time.Sleep(500 * time.Millisecond) // a last line of the probe (e.g. a penalty note) lands before the cursor
	return h.JournalCursor()
}

// sshdLog is what the guest's sshd logged after cursor.
func sshdLog(t *testing.T, h *testhost.Host, cursor string) string {
	t.Helper()
	out, err := h.JournalSince(cursor, "-u", "ssh.service", "-o", "cat")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s lacks %q:\n%s", what, sub, s)
		}
	}
}

// tableRow returns the result table's row for host (fields split on blanks).
func tableRow(t *testing.T, stdout, host string) string {
	t.Helper()
	_, table, ok := strings.Cut(stdout, "\nHOST ")
	if !ok {
		t.Fatalf("no result table in:\n%s", stdout)
	}
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == host {
			return strings.Join(f, " ")
		}
	}
	t.Fatalf("no row for %s in the table:\n%s", host, table)
	return ""
}

// TestPushPlanApplyConverge: `push --diff` prints the remote plan and
// changes nothing; `push` applies it; a second push reports no changes.
func TestPushPlanApplyConverge(t *testing.T) {
	t.Parallel()
	h := pushHost(t)
	e := newPushEnv(t)
	e.addHost("web1", h.Port())
	e.trust(h, hostKey(t, h))
	specs := e.writeSpecs("specs", map[string]string{"10-net.json": sharedNetwork, "20-hello.json": sleeper("hello")})

	r := e.push("--diff", "web1", specs)
	if r.code != 0 {
		t.Fatalf("push --diff failed:\n%s", r)
	}
	mustContain(t, "push --diff output", r.stdout, "web1 | syslet plan: 2 spec(s) from 2 source(s) against host", "web1 | Plan: ", "hello.container")
	mustContain(t, "push --diff table", tableRow(t, r.stdout, "web1"), "web1 planned 2 to create; 6 actions")
	mustContain(t, "push --diff progress", r.stderr, "syslet --diff --stdin on 1 host(s)")
	if got := h.Run("test -e /etc/containers/systemd/hello.container || test -e /etc/syslet/config.json"); got.OK() {
		t.Fatal("push --diff changed the host")
	}

	r = e.push("web1", specs)
	if r.code != 0 {
		t.Fatalf("push failed:\n%s", r)
	}
	mustContain(t, "push output", r.stdout, "web1 | Applying", "web1 | Summary: 6 applied, 0 failed, 0 not reached")
	mustContain(t, "push table", tableRow(t, r.stdout, "web1"), "web1 applied 2 to create; 6 actions", "applied, 0 failed, 0 not reached")
	if got := strings.TrimSpace(h.MustRun(t, "systemctl is-active hello.service shared-network.service")); got != "active\nactive" {
		t.Errorf("after push: hello.service, shared-network.service = %q; want active, active", got)
	}
	// The validated stream was stored by the remote `syslet --stdin`, as an SSH pipe would.
	stored := h.MustRun(t, "stat -c %a /etc/syslet/config.json && cat /etc/syslet/config.json")
	mustContain(t, "stored stream", stored, "600\n", `"name":"hello"`, `"name":"shared"`)

	r = e.push("web1", specs)
	if r.code != 0 {
		t.Fatalf("second push failed:\n%s", r)
	}
	mustContain(t, "second push output", r.stdout, "web1 | No changes detected. The host matches the specs.")
	mustContain(t, "second push table", tableRow(t, r.stdout, "web1"), "web1 unchanged no changes")
	if strings.Contains(r.stdout, "Applying") {
		t.Errorf("second push applied something:\n%s", r)
	}

	// A secret the host's key cannot open is named by the file it is in
	// and its place there, as the operator wrote it, not as "stdin [2]".
	other, err := age.GenerateX25519Identity()
	must(t, err)
	locked := e.writeSpecs("locked", map[string]string{"10-net.json": sharedNetwork, "20-hello.json": sleeper("hello"),
		"30-secret.json": string(secretSpec(t, "locked", sopsEncryptFor(t, "token: x\n", other.Recipient().String())))})
	r = e.push("--diff", "web1", locked)
	mustContain(t, "push --diff of a secret the host cannot open", r.stderr,
		"web1 | syslet: secrets cannot be opened on this host", `secret "locked" (`+filepath.Join(locked, "30-secret.json")+" [0])")
	if r.code != 1 || strings.Contains(r.stderr, "stdin [") {
		t.Errorf("the host names a pushed spec by its place in stdin:\n%s", r)
	}
}

// TestPushHostKeys: a wrong host key is refused before authentication and
// nothing runs on the host; an unknown one is refused with its
// fingerprint; --accept-new pins it.
func TestPushHostKeys(t *testing.T) {
	t.Parallel()
	h := pushHost(t)
	e := newPushEnv(t)
	e.addHost("web1", h.Port())
	specs := e.writeSpecs("specs", map[string]string{"hello.json": sleeper("hello"), "net.json": sharedNetwork})
	real := hostKey(t, h)
	realFP := ssh.FingerprintSHA256(real)

	cursor := verboseSSHD(t, h)

	// Changed key: known_hosts holds another key for this host.
	_, impostor, _ := ed25519.GenerateKey(rand.Reader)
	impostorPub, _ := ssh.NewPublicKey(impostor.Public())
	e.trust(h, impostorPub)
	for _, extra := range [][]string{nil, {"--accept-new"}} {
		r := e.push(append(extra, "web1", specs)...)
		if r.code != 1 {
			t.Fatalf("push with a wrong host key: exit %d; want 1:\n%s", r.code, r)
		}
		mustContain(t, "wrong-key table", tableRow(t, r.stdout, "web1"), "web1 refused")
		mustContain(t, "wrong-key output", r.stdout, "CHANGED", "presented ssh-ed25519 "+realFP, ssh.FingerprintSHA256(impostorPub), "refused before authenticating")
	}
	log := sshdLog(t, h, cursor)
	mustContain(t, "sshd log (wrong key)", log, "Connection from 127.0.0.1")
	for _, bad := range []string{"Accepted", "session opened", "Postponed"} {
		if strings.Contains(log, bad) {
			t.Errorf("sshd logged %q although the host key was wrong:\n%s", bad, log)
		}
	}
	if h.Run("test -e /etc/syslet/config.json || test -e /etc/containers/systemd/hello.container").OK() {
		t.Error("something ran on the host despite the wrong host key")
	}

	// Unknown host: an empty known_hosts file.
	if err := os.WriteFile(e.knownHosts, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cursor, _ = h.JournalCursor()
	r := e.push("--diff", "web1", specs)
	if r.code != 1 {
		t.Fatalf("push to an unknown host: exit %d; want 1:\n%s", r.code, r)
	}
	mustContain(t, "unknown-host output", r.stdout, "is unknown: ssh-ed25519 "+realFP, "--accept-new")
	mustContain(t, "unknown-host table", tableRow(t, r.stdout, "web1"), "web1 refused")
	if data, _ := os.ReadFile(e.knownHosts); len(data) != 0 {
		t.Errorf("known_hosts written without --accept-new:\n%s", data)
	}
	if log := sshdLog(t, h, cursor); strings.Contains(log, "Accepted") {
		t.Errorf("sshd accepted a login for an unknown host key:\n%s", log)
	}

	// --accept-new pins the key; later pushes need no flag.
	r = e.push("--diff", "--accept-new", "web1", specs)
	if r.code != 0 {
		t.Fatalf("push --accept-new failed:\n%s", r)
	}
	mustContain(t, "accept-new notice", r.stderr, "new host key ssh-ed25519 "+realFP+" pinned in "+e.knownHosts)
	data, _ := os.ReadFile(e.knownHosts)
	want := fmt.Sprintf("[127.0.0.1]:%d %s", h.Port(), ssh.MarshalAuthorizedKey(real))
	if string(data) != want {
		t.Errorf("known_hosts after --accept-new:\n%q\nwant\n%q", data, want)
	}
	if r := e.push("--diff", "web1", specs); r.code != 0 {
		t.Fatalf("push after pinning failed:\n%s", r)
	}
}

// TestPushFleet: two hosts and an unreachable target (a closed loopback
// port) from one hosts/ directory: each host gets hosts/common/ plus its
// own directory, the table shows the failure, and the exit is non-zero.
func TestPushFleet(t *testing.T) {
	t.Parallel()
	web1, web2 := pushHost(t), pushHost(t)
	e := newPushEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	e.addHost("web1", web1.Port())
	e.addHost("web2", web2.Port())
	e.addHost("gone", closed)
	e.trust(web1, hostKey(t, web1))
	e.trust(web2, hostKey(t, web2))
	e.writeSpecs("hosts/common", map[string]string{"net.json": sharedNetwork})
	e.writeSpecs("hosts/web1", map[string]string{"app.json": sleeper("app1")})
	e.writeSpecs("hosts/web2", map[string]string{"app.json": sleeper("app2")})
	e.writeSpecs("hosts/gone", map[string]string{"app.json": sleeper("app3")})

	r := e.push("--hosts-dir", "hosts", "--parallel", "3", "web1", "web2", "gone")
	if r.code != 1 {
		t.Fatalf("fleet push with an unreachable host: exit %d; want 1:\n%s", r.code, r)
	}
	mustContain(t, "web1 row", tableRow(t, r.stdout, "web1"), "web1 applied 2 to create; 6 actions", "applied, 0 failed")
	mustContain(t, "web2 row", tableRow(t, r.stdout, "web2"), "web2 applied 2 to create; 6 actions; 6 applied, 0 failed, 0 not reached")
	mustContain(t, "gone row", tableRow(t, r.stdout, "gone"), "gone unreachable -")
	mustContain(t, "fleet output", r.stdout, fmt.Sprintf("gone: unreachable: connecting to 127.0.0.1:%d", closed), "3 host(s): 2 applied, 1 unreachable",
		"web1 | ", "web2 | ")
	for _, c := range []struct {
		h        *testhost.Host
		own, not string
	}{{web1, "app1", "app2"}, {web2, "app2", "app1"}} {
		if got := strings.TrimSpace(c.h.MustRun(t, "systemctl is-active "+c.own+".service shared-network.service")); got != "active\nactive" {
			t.Errorf("%s: %s, shared-network = %q; want active, active", c.h.Name(), c.own, got)
		}
		if c.h.Run("test -e /etc/containers/systemd/" + c.not + ".container || test -e /etc/containers/systemd/app3.container").OK() {
			t.Errorf("%s got another host's spec", c.h.Name())
		}
	}

	// Converged: the same push plans nothing on the reachable hosts.
	r = e.push("--hosts-dir", "hosts", "--diff", "web1", "web2")
	if r.code != 0 {
		t.Fatalf("second fleet push --diff failed:\n%s", r)
	}
	mustContain(t, "web1 row", tableRow(t, r.stdout, "web1"), "web1 unchanged no changes")
	mustContain(t, "web2 row", tableRow(t, r.stdout, "web2"), "web2 unchanged no changes")
}

// TestPushRefusedLocally: invalid or empty specs are refused on this
// machine; the host's sshd sees no connection at all.
func TestPushRefusedLocally(t *testing.T) {
	t.Parallel()
	h := testhost.Start(t)
	e := newPushEnv(t)
	e.addHost("web1", h.Port())
	e.trust(h, hostKey(t, h))
	invalid := e.writeSpecs("invalid", map[string]string{"a.json": `{"apiVersion":"v1","type":"container","name":"web","unit":{"Container":{"Image":"localhost:5000/busybox:latest","Volume":"missing.volume:/data"}}}`})
	empty := e.writeSpecs("empty", nil)
	emptyArray := e.writeSpecs("emptyarray", map[string]string{"none.json": "[]\n"})
	e.writeSpecs("hosts/common", map[string]string{"net.json": sharedNetwork})
	e.writeSpecs("hosts/web1", map[string]string{"net.json": sharedNetwork})

	cursor := verboseSSHD(t, h)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"web1", invalid}, []string{"a.json: [0].unit.Container.Volume: Volume= references undefined volume \"missing\"", "1 error(s)"}},
		{[]string{"--diff", "web1", empty}, []string{"no specs in " + empty + " (0 file(s)); nothing was sent", "--allow-empty"}},
		{[]string{"web1", emptyArray}, []string{"no specs in " + emptyArray + " (1 file(s))"}},
		{[]string{"--hosts-dir", "hosts", "web1"}, []string{`network "shared" is already defined in hosts/common/net.json`}},
	} {
		r := e.push(c.args...)
		if r.code != 2 {
			t.Errorf("exit %d; want 2 (invalid specs, nothing sent):\n%s", r.code, r)
		}
		mustContain(t, "refusal", r.stderr, c.want...)
		if strings.Contains(r.stdout, "HOST") {
			t.Errorf("a refused push printed a result table:\n%s", r)
		}
	}
	if log := sshdLog(t, h, cursor); strings.TrimSpace(log) != "" {
		t.Errorf("sshd logged activity although every push was refused locally:\n%s", log)
	}

	// Control: a valid push is seen by the same log check.
	valid := e.writeSpecs("valid", map[string]string{"net.json": sharedNetwork})
	e.push("--diff", "web1", valid) // syslet is not installed here: the remote command fails, the login is logged
	mustContain(t, "sshd log after a valid push", sshdLog(t, h, cursor), "Connection from 127.0.0.1", "Accepted publickey for root")
}

// TestPushForcedCommand: a CI key whose authorized_keys entry forces
// `syslet ssh-command` can plan and apply through syslet push and do
// nothing else; a --diff-only key can only plan.
func TestPushForcedCommand(t *testing.T) {
	t.Parallel()
	h := pushHost(t)
	e := newPushEnv(t)
	e.addHost("web1", h.Port())
	e.trust(h, hostKey(t, h))
	specs := e.writeSpecs("specs", map[string]string{"hello.json": sleeper("hello"), "net.json": sharedNetwork})

	ciKey, ciSigner := e.newKey("ci")
	planKey, planSigner := e.newKey("plan")
	entries := fmt.Sprintf("command=\"/usr/local/bin/syslet ssh-command\",restrict %scommand=\"/usr/local/bin/syslet ssh-command --diff-only\",restrict %s",
		ssh.MarshalAuthorizedKey(ciSigner.PublicKey()), ssh.MarshalAuthorizedKey(planSigner.PublicKey()))
	h.MustRun(t, "cat >> /root/.ssh/authorized_keys <<'EOF'\n"+entries+"EOF")

	// The allowed invocations, through push.
	r := e.push("-i", ciKey, "--diff", "web1", specs)
	if r.code != 0 {
		t.Fatalf("push --diff with the CI key failed:\n%s", r)
	}
	mustContain(t, "CI plan", r.stdout, "web1 | Plan: ")
	r = e.push("-i", ciKey, "web1", specs)
	if r.code != 0 {
		t.Fatalf("push with the CI key failed:\n%s", r)
	}
	if got := strings.TrimSpace(h.MustRun(t, "systemctl is-active hello.service")); got != "active" {
		t.Errorf("hello.service %q after the CI key's apply", got)
	}

	// Everything else is refused, and nothing of it runs.
	r = e.push("-i", ciKey, "--remote-command", "syslet --root /tmp", "--diff", "web1", specs)
	if r.code != 1 {
		t.Errorf("push with another remote command: exit %d; want 1:\n%s", r.code, r)
	}
	mustContain(t, "refused remote command", r.stderr, `web1 | syslet ssh-command: refused: "syslet --root /tmp --diff --stdin --output text+json" is not an allowed command`)
	mustContain(t, "refused remote command row", tableRow(t, r.stdout, "web1"), "web1 failed")

	for _, c := range []struct{ cmd, want string }{
		{"touch /tmp/pwned", `refused: "touch /tmp/pwned" is not an allowed command`},
		{"syslet --stdin; touch /tmp/pwned", "is not an allowed command"},
		{"syslet --diff /etc", "is not an allowed command"},
		{"", "an interactive session is not allowed"},
	} {
		res := sshRun(t, h, ciSigner, c.cmd)
		if res.code == 0 || !strings.Contains(res.stderr, c.want) {
			t.Errorf("CI key, command %q: exit %d, stderr %q; want refused with %q", c.cmd, res.code, res.stderr, c.want)
		}
	}
	if h.Run("test -e /tmp/pwned").OK() {
		t.Error("a refused command ran")
	}

	// The diff-only key plans but cannot apply.
	if r := e.push("-i", planKey, "--diff", "web1", specs); r.code != 0 {
		t.Errorf("push --diff with the plan-only key failed:\n%s", r)
	}
	h.MustRun(t, "rm /etc/syslet/config.json")
	r = e.push("-i", planKey, "web1", specs)
	if r.code != 1 {
		t.Errorf("apply with the plan-only key: exit %d; want 1:\n%s", r.code, r)
	}
	mustContain(t, "plan-only refusal", r.stderr, "this key may only plan")
	if h.Run("test -e /etc/syslet/config.json").OK() {
		t.Error("the plan-only key applied")
	}
}

// newKey writes a fresh ed25519 key in OpenSSH format and returns its path
// and signer.
func (e *pushEnv) newKey(name string) (string, ssh.Signer) {
	e.t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		e.t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, name)
	if err != nil {
		e.t.Fatal(err)
	}
	path := filepath.Join(e.dir, name+"_key")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		e.t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		e.t.Fatal(err)
	}
	return path, s
}

type sshResult struct {
	stdout, stderr string
	code           int
}

// sshRun runs cmd (or, when empty, asks for a shell) with signer, as an
// arbitrary SSH client would.
func sshRun(t *testing.T, h *testhost.Host, signer ssh.Signer, cmd string) sshResult {
	t.Helper()
	c, err := ssh.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", h.Port()), &ssh.ClientConfig{
		User: "root", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(hostKey(t, h)), HostKeyAlgorithms: []string{ssh.KeyAlgoED25519},
		Timeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var stdout, stderr bytes.Buffer
	s.Stdout, s.Stderr = &stdout, &stderr
	if cmd == "" {
		if err = s.Shell(); err == nil {
			err = s.Wait()
		}
	} else {
		err = s.Run(cmd)
	}
	res := sshResult{stdout: stdout.String(), stderr: stderr.String()}
	var exit *ssh.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		res.code = exit.ExitStatus()
	default:
		t.Fatalf("ssh %q: %v", cmd, err)
	}
	return res
}

// TestPushInterrupt: Ctrl-C during a push starts no more hosts and lets
// the running one finish its deploy; the push exits 130.
func TestPushInterrupt(t *testing.T) {
	t.Parallel()
	h := pushHost(t)
	e := newPushEnv(t)
	e.addHost("web1", h.Port())
	e.addHost("later", h.Port()) // the same host under another name: it must never be contacted
	e.trust(h, hostKey(t, h))
	// A start that takes a few seconds, so the interrupt lands while web1 is being deployed.
	slow := `{"apiVersion":"v1","type":"container","name":"slow","unit":{"Container":{"Image":"localhost:5000/busybox:latest","RunInit":"true","Exec":"sleep 100000"},"Service":{"ExecStartPre":"/bin/sleep 4"}}}`
	specs := e.writeSpecs("specs", map[string]string{"slow.json": slow})
	cursor := verboseSSHD(t, h)

	cmd := exec.Command(sysletBin, "push", "-F", e.sshConfig, "--known-hosts", e.knownHosts, "-i", e.key, "--parallel", "1", "web1", "later", specs)
	cmd.Env = append(os.Environ(), "HOME="+e.home, "SSH_AUTH_SOCK=")
	var stdout, stderr bytes.Buffer
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	// Interrupt once web1's remote syslet has printed its plan.
	buf := make([]byte, 4096)
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stdout.String(), "web1  | Plan: ") { // names are padded to the longest, "later"
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("web1's plan never appeared:\n%s\n%s", stdout.String(), stderr.String())
		}
		n, err := pr.Read(buf)
		stdout.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(pr)
	stdout.Write(rest)
	err = cmd.Wait()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	}
	t.Logf("$ syslet push --parallel 1 web1 later %s (interrupted)\nexit %d\n--- stdout\n%s--- stderr\n%s", specs, code, stdout.String(), stderr.String())
	if code != 130 {
		t.Errorf("exit %d; want 130 (interrupted)", code)
	}
	mustContain(t, "interrupt notice", stderr.String(), "interrupted: starting no more hosts; running ones finish")
	mustContain(t, "web1 row", tableRow(t, stdout.String(), "web1"), "web1 applied 1 to create; ", "applied, 0 failed, 0 not reached")
	mustContain(t, "later row", tableRow(t, stdout.String(), "later"), "later not reached -")
	mustContain(t, "interrupted push", stdout.String(), "not reached (never connected to, left as they were): later\n", "2 host(s): 1 applied, 1 not reached\n")
	if got := strings.TrimSpace(h.MustRun(t, "systemctl is-active slow.service")); got != "active" {
		t.Errorf("slow.service %q: the running deploy did not finish", got)
	}
	// web1's one login, and no second one for "later".
	if n := strings.Count(sshdLog(t, h, cursor), "Accepted publickey"); n != 1 {
		t.Errorf("%d logins after the interrupt test's start; want 1 (web1 only)", n)
	}
}
