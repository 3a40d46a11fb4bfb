package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v5"
)

func TestCheckConfig(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(dir, "infra.git")
	if _, err := git.PlainInit(repo, true); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("repos:\n  - name: infra\n    url: "+repo+"\n    secretFile: "+secret+"\n"), 0o644)
	config := func(name, url string) string {
		f := filepath.Join(dir, name+".yaml")
		os.WriteFile(f, []byte("repos:\n  - name: infra\n    url: "+url+"\n    secretFile: "+secret+"\n"), 0o644)
		return f
	}
	typo := config("typo", "file://"+dir+"/infra.gti")
	notRepo := config("not-repo", "file://"+dir)
	remote := config("remote", "https://git.example/ops/infra.git")
	os.WriteFile(bad, []byte("listen: nowhere\nrepos:\n  - name: infra\n    url: http://git.example/x.git\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"valid", []string{"--check", "--config", good}, exitOK, good + ": OK (1 repositories, listen 127.0.0.1:9090)"},
		{"invalid names every field", []string{"--check", "--config", bad}, exitConfig, "listen: want host:port"},
		{"missing file", []string{"--check", "--config", filepath.Join(dir, "none.yaml")}, exitConfig, "no such file"},
		// A local repository must be there; a remote one is not contacted, and --check says so.
		{"no such repository", []string{"--check", "--config", typo}, exitConfig,
			typo + ": repos[0].url: file://" + dir + "/infra.gti: no such repository: " + dir + "/infra.gti does not exist"},
		{"not a repository", []string{"--check", "--config", notRepo}, exitConfig, notRepo + ": repos[0].url: file://" + dir + ": not a git repository: " + dir},
		{"remote not contacted", []string{"--check", "--config", remote}, exitOK,
			remote + ": repos[0].url: https://git.example/ops/infra.git not contacted: --check does not test that a remote is reachable"},
		{"stray argument", []string{"serve"}, exitConfig, `unexpected argument "serve"`},
		{"bad log level", []string{"--log-level", "loud", "--config", good}, exitConfig, "--log-level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stdout.String()+stderr.String(), tc.out) {
				t.Fatalf("exit %d, out %q %q; want %d and %q", code, stdout.String(), stderr.String(), tc.code, tc.out)
			}
		})
	}
	var stdout, stderr bytes.Buffer
	run([]string{"--check", "--config", bad}, &stdout, &stderr)
	for _, want := range []string{"repos[0].url: http:// is not integrity-protected", "repos[0].secretFile: required unless poll"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestNotifyTest: --notify-test sends one test event to each target and
// says what came of it; a refusing target makes the exit code 1.
func TestNotifyTest(t *testing.T) {
	var got atomic.Int32
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Syslet-Event") == "test" {
			got.Add(1)
		}
	}))
	defer ok.Close()
	no := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(404) }))
	defer no.Close()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("0123456789abcdef0123456789abcdef\n"), 0o600)
	cfg := func(targets string) string {
		p := filepath.Join(dir, "c.yaml")
		os.WriteFile(p, []byte("notify:\n"+targets+"repos:\n  - name: infra\n    url: /srv/git/infra.git\n    secretFile: "+secret+"\n"), 0o644)
		return p
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--notify-test", "--config", cfg("  - {name: ops, type: webhook, url: " + ok.URL + "}\n")}, &stdout, &stderr); code != exitOK ||
		!strings.Contains(stdout.String(), "ops (webhook, http://127.0.0.1:") || !strings.Contains(stdout.String(), ": sent after 1 attempt(s)") || got.Load() != 1 {
		t.Fatalf("exit %d, %q %q, %d received", code, stdout.String(), stderr.String(), got.Load())
	}
	stdout.Reset()
	if code := run([]string{"--notify-test", "--config", cfg("  - {name: ops, type: webhook, url: " + ok.URL + "}\n  - {name: no, type: webhook, url: " + no.URL + "}\n")}, &stdout, &stderr); code != exitError ||
		!strings.Contains(stdout.String(), "no (webhook, http://127.0.0.1:") || !strings.Contains(stdout.String(), "HTTP 404") {
		t.Fatalf("exit %d, %q", code, stdout.String())
	}
}
