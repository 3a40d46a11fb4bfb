package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
