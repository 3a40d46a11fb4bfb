package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/pkg/load"
)

func TestParsePush(t *testing.T) {
	tests := []struct {
		args    []string
		targets []string
		path    string
		command string
		bad     string // substring of the usage error
	}{
		{args: []string{"web1", "specs/"}, targets: []string{"web1"}, path: "specs/", command: "syslet --stdin"},
		{args: []string{"--diff", "web1", "root@web2:2222", "-"}, targets: []string{"web1", "root@web2:2222"}, path: "-", command: "syslet --diff --stdin"},
		{args: []string{"web1", "specs/", "--diff", "--remote-command", "sudo syslet"}, targets: []string{"web1"}, path: "specs/", command: "sudo syslet --diff --stdin"},
		{args: []string{"--hosts-dir", "hosts", "web1", "web2"}, targets: []string{"web1", "web2"}, command: "syslet --stdin"},
		{args: []string{"--hosts-dir", "hosts"}, command: "syslet --stdin"},
		{args: []string{"-i", "a", "-i", "b", "web1", "x"}, targets: []string{"web1"}, path: "x", command: "syslet --stdin"},
		{args: []string{"--diff", "--out", "plans", "web1", "specs/"}, targets: []string{"web1"}, path: "specs/", command: "syslet --diff --stdin --out -"},
		{args: []string{"--plan", "plans", "--hosts-dir", "hosts"}, command: "syslet --plan - --stdin"},
		{args: []string{"--diff", "--plan", "plans", "web1", "specs/"}, targets: []string{"web1"}, path: "specs/", command: "syslet --diff --plan - --stdin"},
		{args: []string{"specs/"}, bad: "needs TARGET… PATH"},
		{args: []string{}, bad: "needs TARGET… PATH"},
		{args: []string{"web1", "web1", "specs/"}, bad: `target "web1" given twice`},
		{args: []string{"web1:99999", "specs/"}, bad: "port"},
		{args: []string{"--parallel", "0", "web1", "specs/"}, bad: "--parallel"},
		{args: []string{"--remote-command", " ", "web1", "specs/"}, bad: "--remote-command"},
		{args: []string{"--bogus", "web1", "specs/"}, bad: "bogus"},
		{args: []string{"--batch", "1,25%", "--pause", "30s", "web1", "specs/"}, targets: []string{"web1"}, path: "specs/", command: "syslet --stdin"},
		{args: []string{"--diff", "--batch", "10%", "--hosts-dir", "hosts"}, command: "syslet --diff --stdin"},
		{args: []string{"--batch", "0", "web1", "specs/"}, bad: "--batch: invalid size \"0\""},
		{args: []string{"--batch", "1,,2", "web1", "specs/"}, bad: "--batch"},
		{args: []string{"--batch", "150%", "web1", "specs/"}, bad: "more than 100%"},
		{args: []string{"--max-failed", "x", "web1", "specs/"}, bad: "--max-failed"},
		{args: []string{"--pause", "10s", "web1", "specs/"}, bad: "give --batch too"},
		{args: []string{"--diff", "--batch", "1", "--pause", "10s", "web1", "specs/"}, bad: "with --diff nothing is applied"},
		{args: []string{"--output", "yaml", "web1", "specs/"}, bad: "--output must be text or json"},
		{args: []string{"--select", "role", "--hosts-dir", "hosts"}, bad: `--select: "role": want key=value or key!=value`},
		{args: []string{"--select", "role=web,role=db", "--hosts-dir", "hosts"}, bad: "--select: \"role=db\": label role is already required"},
		{args: []string{"--select", "role=web", "web1", "specs/"}, bad: "--select picks host directories by their labels: give --hosts-dir too"},
	}
	for _, tt := range tests {
		o, err := parsePush(tt.args, io.Discard)
		if tt.bad != "" {
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tt.bad) {
				t.Errorf("parsePush(%q) err = %v; want usage error with %q", tt.args, err, tt.bad)
			}
			continue
		}
		if err != nil {
			t.Errorf("parsePush(%q): %v", tt.args, err)
			continue
		}
		if !slices.Equal(o.targets, tt.targets) || o.path != tt.path || o.command() != tt.command {
			t.Errorf("parsePush(%q) = targets %q path %q command %q; want %q %q %q", tt.args, o.targets, o.path, o.command(), tt.targets, tt.path, tt.command)
		}
	}
	if o, _ := parsePush([]string{"-i", "a", "-i", "b", "web1", "x"}, io.Discard); !slices.Equal(o.identities, []string{"a", "b"}) {
		t.Errorf("-i twice: %q", o.identities)
	}

	// The rollout: --max-failed defaults to 0 with --batch and to no
	// limit without; the pause's read-only commands follow --remote-command.
	for _, tt := range []struct {
		args      []string
		batches   string
		maxFailed string // "" no limit
	}{
		{[]string{"web1", "x"}, "[]", ""},
		{[]string{"--batch", "1,25%", "web1", "x"}, "[1 25%]", "0"},
		{[]string{"--batch", "1", "--max-failed", "10%", "web1", "x"}, "[1]", "10%"},
		{[]string{"--max-failed", "2", "web1", "x"}, "[]", "2"},
	} {
		o, err := parsePush(tt.args, io.Discard)
		if err != nil {
			t.Fatalf("parsePush(%q): %v", tt.args, err)
		}
		mf := ""
		if o.strategy.MaxFailed != nil {
			mf = o.strategy.MaxFailed.String()
		}
		if got := fmt.Sprint(o.strategy.Batches); got != tt.batches || mf != tt.maxFailed {
			t.Errorf("parsePush(%q): batches %s, max failed %q; want %s, %q", tt.args, got, mf, tt.batches, tt.maxFailed)
		}
	}
	o, _ := parsePush([]string{"--remote-command", "sudo syslet", "--batch", "1", "--pause", "1m", "web1", "x"}, io.Discard)
	if s := o.strategy; s.Pause != time.Minute || s.StatusCommand != "sudo syslet status --stdin --output json" || s.DiffCommand != "sudo syslet --diff --stdin --detailed-exitcode" {
		t.Errorf("strategy %+v", s)
	}
	for remote, want := range map[string]string{
		"syslet": "syslet status --stdin --output json",
		"sudo -n /usr/local/bin/syslet --soak 30s": "sudo -n /usr/local/bin/syslet status --stdin --output json",
		"syslet --soak 1s":                         "syslet status --stdin --output json",
		"my-syslet-wrapper":                        "my-syslet-wrapper status --stdin --output json",
	} {
		if got := statusCommand(remote); got != want {
			t.Errorf("statusCommand(%q) = %q; want %q", remote, got, want)
		}
	}
}

// listener counts connections to a loopback port, standing in for a host:
// a push refused locally must never connect.
func listener(t *testing.T) (addr string, conns func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	n := make(chan struct{}, 100)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n <- struct{}{}
			c.Close()
		}
	}()
	return ln.Addr().String(), func() int { return len(n) }
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPushRefusesLocally(t *testing.T) {
	dir := t.TempDir()
	vol := func(name string) string {
		return `{"apiVersion":"v1","type":"volume","name":"` + name + `","unit":{}}`
	}
	writeFile(t, filepath.Join(dir, "invalid", "a.json"), `{"apiVersion":"v2","type":"volume","name":"x"}`)
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	writeFile(t, filepath.Join(dir, "blank", "a.json"), "  \n")
	writeFile(t, filepath.Join(dir, "emptyarray", "a.json"), "[]")
	writeFile(t, filepath.Join(dir, "hosts", "common", "v.json"), vol("shared"))
	writeFile(t, filepath.Join(dir, "hosts", "web1", "v.json"), vol("shared"))
	writeFile(t, filepath.Join(dir, "hosts", "web2", "v.json"), vol("own"))
	writeFile(t, filepath.Join(dir, "hosts", "web2", "labels"), "site=ams\n")
	writeFile(t, filepath.Join(dir, "badlabels", "web1", "labels"), "site fra\n")

	addr, conns := listener(t)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"invalid", []string{addr, filepath.Join(dir, "invalid")}, exitInvalid, "apiVersion"},
		{"no files", []string{addr, filepath.Join(dir, "empty")}, exitInvalid, "no specs in"},
		{"blank file", []string{addr, filepath.Join(dir, "blank")}, exitInvalid, ""},
		{"empty array", []string{addr, filepath.Join(dir, "emptyarray")}, exitInvalid, "--allow-empty"},
		{"defined in common and host", []string{"--hosts-dir", filepath.Join(dir, "hosts"), "web1", "web2"}, exitInvalid, `volume "shared" is already defined`},
		{"missing host dir", []string{"--hosts-dir", filepath.Join(dir, "hosts"), "web3"}, exitError, "web3"},
		{"common as a target", []string{"--hosts-dir", filepath.Join(dir, "hosts"), "common"}, exitError, "cannot be a host directory"},
		{"selects nothing", []string{"--hosts-dir", filepath.Join(dir, "hosts"), "--select", "site=fra"}, exitError, "--select site=fra: none of the 2 host(s) of"},
		{"bad labels file", []string{"--hosts-dir", filepath.Join(dir, "badlabels"), "--select", "site=fra"}, exitError, "badlabels/web1/labels:1: \"site fra\": want key=value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"push"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr.String(), tt.code, tt.want)
			}
		})
	}
	if n := conns(); n != 0 {
		t.Errorf("%d connection(s) made; a push refused locally must make none", n)
	}
}

func TestSSHCommand(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		original *string
		code     int
		want     string
	}{
		{"interactive", nil, nil, exitError, "interactive session is not allowed"},
		{"other command", nil, ptr("cat /etc/shadow"), exitError, `"cat /etc/shadow" is not an allowed command`},
		{"chained", nil, ptr("syslet --stdin; id"), exitError, "not an allowed command"},
		{"apply on a diff-only key", []string{"--diff-only"}, ptr("syslet --stdin"), exitError, "may only plan"},
		{"stray argument", []string{"--stdin"}, ptr("syslet --stdin"), exitUsage, ""},
		// Allowed: the apply runs and stops at the invalid stdin, before any host access.
		{"plan", nil, ptr("syslet --diff --stdin"), exitInvalid, "apiVersion"},
		{"apply", nil, ptr("syslet --stdin"), exitInvalid, "apiVersion"},
		{"plan on a diff-only key", []string{"--diff-only"}, ptr("syslet --diff --stdin"), exitInvalid, "apiVersion"},
		// The saved-plan forms: allowed, they stop at stdin, which holds no plan.
		{"save a plan", nil, ptr("syslet --diff --stdin --out -"), exitInvalid, "apiVersion"},
		{"apply a saved plan", nil, ptr("syslet --plan - --stdin"), exitError, "not a valid saved plan"},
		{"check a saved plan on a diff-only key", []string{"--diff-only"}, ptr("syslet --diff --plan - --stdin"), exitError, "not a valid saved plan"},
		{"apply a saved plan on a diff-only key", []string{"--diff-only"}, ptr("syslet --plan - --stdin"), exitError, "may only plan"},
		{"a plan file of the host", nil, ptr("syslet --plan /root/x.plan --stdin"), exitError, "not an allowed command"},
		// The health read of push --pause runs syslet status, which stops at the invalid stdin too.
		{"status", nil, ptr("syslet status --stdin --output json"), exitInvalid, "apiVersion"},
		{"status on a diff-only key", []string{"--diff-only"}, ptr("syslet status --stdin --output json"), exitInvalid, "apiVersion"},
		{"status of the stored specs", nil, ptr("syslet status"), exitError, "not an allowed command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.original != nil {
				t.Setenv("SSH_ORIGINAL_COMMAND", *tt.original)
			} else {
				t.Setenv("SSH_ORIGINAL_COMMAND", "")
				os.Unsetenv("SSH_ORIGINAL_COMMAND")
			}
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"ssh-command"}, tt.args...), strings.NewReader(`{"apiVersion":"v9"}`), &stdout, &stderr)
			if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr.String(), tt.code, tt.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

// What a host says about a spec that came through push names the
// operator's file and the spec's index in it, as a local validate does,
// not "stdin [3]"; and the host's input digest is that of the files, so
// a push and a local apply of the same files are the same input.
func TestPushStreamNamesTheFiles(t *testing.T) {
	t.Chdir(t.TempDir())
	vol := func(name string) string {
		return `{"apiVersion":"v1","type":"volume","name":"` + name + `","unit":{}}`
	}
	writeFile(t, filepath.Join("hosts", "common", "10-shared.json"), "["+vol("a")+","+vol("b")+"]")
	writeFile(t, filepath.Join("hosts", "web1", "20-own.json"), vol("c")+"\n"+vol("d"))

	o, err := parsePush([]string{"--hosts-dir", "hosts", "web1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	streams, code := pushStreams(o, nil, io.Discard)
	if code != exitOK {
		t.Fatalf("pushStreams: exit %d", code)
	}
	// The host reads its stdin as `syslet --stdin` does.
	got, err := load.Path("-", load.Options{Stdin: bytes.NewReader(streams["web1"])})
	if err != nil || got.Report.HasErrors() {
		t.Fatalf("the host reads the stream: %v %v", err, got.Report.Findings)
	}
	var refs []string
	for _, s := range got.Specs {
		refs = append(refs, s.Ref())
	}
	want := []string{
		"volume a (hosts/common/10-shared.json [0])", "volume b (hosts/common/10-shared.json [1])",
		"volume c (hosts/web1/20-own.json [0])", "volume d (hosts/web1/20-own.json [1])",
	}
	if !slices.Equal(refs, want) {
		t.Errorf("the host names the specs\n%s\nwant\n%s", strings.Join(refs, "\n"), strings.Join(want, "\n"))
	}
	local, err := load.Path(filepath.Join("hosts", "web1"), load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	common, err := load.Path(filepath.Join("hosts", "common"), load.Options{})
	if err != nil {
		t.Fatal(err)
	}
	files := load.Sources(append(common.Sources, local.Sources...))
	if got.Digest() != files.Digest() || string(got.Stream()) != string(files.Stream()) {
		t.Errorf("the host's input digest is %.12s; that of the files is %.12s", got.Digest(), files.Digest())
	}
}
