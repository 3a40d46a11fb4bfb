package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/syslet/syslet/webhookd/queue"
)

// TestOpenWindow: --open-window writes the override the daemon reads, with
// who, when, until when and why; --for 0s removes it; a repository without
// windows, a missing reason and a stray --for are refused, nothing written.
func TestOpenWindow(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	must(t, os.WriteFile(secret, []byte("0123456789abcdef0123456789abcdef\n"), 0o600))
	cfg := filepath.Join(dir, "webhookd.yaml")
	must(t, os.WriteFile(cfg, []byte("stateDir: "+dir+"/state\nrepos:\n  - name: infra\n    url: /srv/git/infra.git\n    secretFile: "+secret+
		"\n    windows: [{calendar: \"Sat 02:00 UTC\", duration: 2h}]\n  - name: apps\n    url: /srv/git/apps.git\n    secretFile: "+secret+"\n"), 0o644))
	file := queue.OverrideFile(dir+"/state", "infra")
	t.Setenv("SUDO_USER", "alice")
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"no reason", []string{"--open-window", "infra"}, exitConfig, "give --reason"},
		{"no windows", []string{"--open-window", "apps", "--reason", "x"}, exitConfig, `repository "apps" has no windows`},
		{"unknown repository", []string{"--open-window", "nope", "--reason", "x"}, exitConfig, `no repository "nope"`},
		{"for alone", []string{"--for", "1h"}, exitConfig, "--for only applies with --open-window"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"--config", cfg}, tc.args...), &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.out) {
			t.Errorf("%s: exit %d, %q; want %d and %q", tc.name, code, stderr.String(), tc.code, tc.out)
		}
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("an override was written: %v", err)
	}

	var stdout, stderr bytes.Buffer
	before := time.Now().Add(-time.Second)
	if code := run([]string{"--config", cfg, "--open-window", "infra", "--for", "30m", "--reason", "CVE-2026-0001"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	raw, err := os.ReadFile(file)
	must(t, err)
	var o queue.Override
	must(t, json.Unmarshal(raw, &o))
	if o.By != "alice" || o.Reason != "CVE-2026-0001" || o.At.Before(before) || o.Until.Sub(o.At) != 30*time.Minute {
		t.Fatalf("override %+v", o)
	}
	if !strings.Contains(stdout.String(), "infra: windows open until ") {
		t.Errorf("stdout %q", stdout.String())
	}
	stdout.Reset()
	if code := run([]string{"--config", cfg, "--open-window", "infra", "--for", "0s"}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "override removed; the windows rule again") {
		t.Fatalf("exit %d: %s %s", code, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("the override stays: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
