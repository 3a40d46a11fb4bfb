package config

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/syslet/syslet/pkg/forge"
)

// files writes the credential files a configuration refers to.
type files struct {
	dir, secret, key, knownHosts, looseSecret, shortSecret string
}

func writeFiles(t *testing.T) files {
	t.Helper()
	d := t.TempDir()
	f := files{
		dir:         d,
		secret:      filepath.Join(d, "secret"),
		key:         filepath.Join(d, "deploy_ed25519"),
		knownHosts:  filepath.Join(d, "known_hosts"),
		looseSecret: filepath.Join(d, "loose"),
		shortSecret: filepath.Join(d, "short"),
	}
	must(t, os.WriteFile(f.secret, []byte("0123456789abcdef0123456789abcdef\n"), 0o600))
	must(t, os.WriteFile(f.looseSecret, []byte("0123456789abcdef0123456789abcdef\n"), 0o644))
	must(t, os.WriteFile(f.shortSecret, []byte("short\n"), 0o600))
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	blk, err := ssh.MarshalPrivateKey(priv, "")
	must(t, err)
	must(t, os.WriteFile(f.key, pem.EncodeToMemory(blk), 0o600))
	hostPub, _, err := ed25519.GenerateKey(rand.Reader)
	must(t, err)
	pk, err := ssh.NewPublicKey(hostPub)
	must(t, err)
	must(t, os.WriteFile(f.knownHosts, []byte("git.example "+string(ssh.MarshalAuthorizedKey(pk))), 0o644))
	return f
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestParseConfig(t *testing.T) {
	f := writeFiles(t)
	good := fmt.Sprintf(`
listen: 127.0.0.1:9090
repos:
  - name: infra
    url: ssh://git@git.example/infra.git
    branch: main
    path: hosts/{hostname}
    secretFile: %s
    sshKey: %s
    knownHosts: %s
    poll: 5m
  - name: local
    url: /srv/git/local.git
    secretFile: %s
`, f.secret, f.key, f.knownHosts, f.secret)
	c, err := Parse("test.yaml", []byte(good), "web1")
	if err != nil {
		t.Fatal(err)
	}
	r := c.Repos[0]
	if r.SpecPath != "hosts/web1" || r.PollInterval != 5*time.Minute || r.PollDelay != 5*time.Minute || !r.IsSSH() || string(r.Secret.Bytes()) != "0123456789abcdef0123456789abcdef" {
		t.Errorf("repo 0 = %+v", r)
	}
	if got := fmt.Sprintf("%v %+v %#v %s", r.Secret, r.Secret, r.Secret, r.Secret); strings.Contains(got, "0123") {
		t.Errorf("secret printed: %s", got)
	}
	l := c.Repos[1]
	if l.Branch != "main" || l.SpecPath != "." || l.IsSSH() || c.StateDir != DefaultStateDir {
		t.Errorf("defaults not applied: %+v %q", l, c.StateDir)
	}

	repo := func(fields string) string {
		return "repos:\n  - name: infra\n" + fields
	}
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown field", "listen: :9090\nrepoz: []\n", `unknown key "repoz": did you mean repos?`},
		{"no repos", "listen: 127.0.0.1:9090\n", "repos: at least one"},
		{"bad listen", "listen: nowhere\n" + repo("    url: /srv/x\n    secretFile: "+f.secret+"\n"), "listen: want host:port"},
		{"bad port", "listen: 127.0.0.1:http\n" + repo("    url: /srv/x\n    secretFile: "+f.secret+"\n"), "listen: port"},
		{"tls without key", "tls: {cert: " + f.secret + "}\n" + repo("    url: /srv/x\n    secretFile: "+f.secret+"\n"), "tls.key: required"},
		{"bad name", "repos:\n  - name: Infra/x\n    url: /srv/x\n    secretFile: " + f.secret + "\n", "repos[0].name"},
		{"duplicate name", repo("    url: /srv/x\n    secretFile: "+f.secret+"\n") + "  - name: infra\n    url: /srv/y\n    secretFile: " + f.secret + "\n", "repos[1].name: \"infra\" is already"},
		{"no url", repo("    secretFile: " + f.secret + "\n"), "repos[0].url: required"},
		{"http url", repo("    url: http://git.example/x.git\n    secretFile: " + f.secret + "\n"), "repos[0].url: http:// is not integrity-protected"},
		{"relative path url", repo("    url: srv/x\n    secretFile: " + f.secret + "\n"), "repos[0].url"},
		{"password in url", repo("    url: https://u:pw@git.example/x.git\n    secretFile: " + f.secret + "\n"), "repos[0].url: must not contain a password"},
		{"bad branch", repo("    url: /srv/x\n    branch: refs/heads/main\n    secretFile: " + f.secret + "\n"), "repos[0].branch"},
		{"absolute path", repo("    url: /srv/x\n    path: /etc\n    secretFile: " + f.secret + "\n"), "repos[0].path: \"/etc\" must be relative"},
		{"escaping path", repo("    url: /srv/x\n    path: ../x\n    secretFile: " + f.secret + "\n"), "repos[0].path: \"../x\" must be a clean path"},
		{"other placeholder", repo("    url: /srv/x\n    path: hosts/{host}\n    secretFile: " + f.secret + "\n"), "repos[0].path: \"hosts/{host}\": the only placeholder"},
		{"no secret, no poll", repo("    url: /srv/x\n"), "repos[0].secretFile: required unless poll"},
		{"missing secret", repo("    url: /srv/x\n    secretFile: /nonexistent/secret\n"), "repos[0].secretFile: stat /nonexistent/secret"},
		{"loose secret", repo("    url: /srv/x\n    secretFile: " + f.looseSecret + "\n"), "repos[0].secretFile: " + f.looseSecret + " is readable by group or others (mode 0644)"},
		{"short secret", repo("    url: /srv/x\n    secretFile: " + f.shortSecret + "\n"), "repos[0].secretFile: " + f.shortSecret + " holds 5 bytes"},
		{"poll too short", repo("    url: /srv/x\n    poll: 1s\n"), "repos[0].poll: 1s is shorter than the minimum 5s"},
		{"poll not a duration", repo("    url: /srv/x\n    poll: often\n"), "repos[0].poll: \"often\" is not a duration"},
		{"spread without poll", repo("    url: /srv/x\n    secretFile: " + f.secret + "\n    pollSpread: 1m\n"), "repos[0].pollSpread: only applies with poll"},
		{"spread past the interval", repo("    url: /srv/x\n    poll: 1m\n    pollSpread: 2m\n"), "repos[0].pollSpread: 2m0s is longer than the poll interval 1m0s"},
		{"spread negative", repo("    url: /srv/x\n    poll: 1m\n    pollSpread: -1s\n"), "repos[0].pollSpread: must not be negative"},
		{"spread not a duration", repo("    url: /srv/x\n    poll: 1m\n    pollSpread: half\n"), "repos[0].pollSpread: \"half\" is not a duration"},
		{"ssh without knownHosts", repo("    url: ssh://git@git.example/x.git\n    sshKey: " + f.key + "\n    secretFile: " + f.secret + "\n"), "repos[0].knownHosts: required for ssh remotes"},
		{"ssh without key", repo("    url: git@git.example:x.git\n    knownHosts: " + f.knownHosts + "\n    secretFile: " + f.secret + "\n"), "repos[0].sshKey: required for ssh remotes"},
		{"host not in knownHosts", repo("    url: ssh://git@other.example/x.git\n    sshKey: " + f.key + "\n    knownHosts: " + f.knownHosts + "\n    secretFile: " + f.secret + "\n"), "repos[0].knownHosts: " + f.knownHosts + " has no key for other.example"},
		{"key for local path", repo("    url: /srv/x\n    sshKey: " + f.key + "\n    secretFile: " + f.secret + "\n"), "repos[0].sshKey: only applies to ssh remotes"},
		{"key is not a key", repo("    url: ssh://git@git.example/x.git\n    sshKey: " + f.secret + "\n    knownHosts: " + f.knownHosts + "\n    secretFile: " + f.secret + "\n"), "repos[0].sshKey: parsing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("test.yaml", []byte(tc.yaml), "web1")
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error:\n%v\nwant it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "0123456789abcdef") {
				t.Fatalf("error leaks the secret: %v", err)
			}
		})
	}
}

func TestParseConfigReportsEveryError(t *testing.T) {
	_, err := Parse("x.yaml", []byte("listen: bad\nrepos:\n  - name: a\n  - name: a\n    url: http://x/y\n"), "h")
	for _, want := range []string{"listen:", "repos[0].url: required", "repos[1].name", "repos[1].url: http://"} {
		if err == nil || !strings.Contains(err.Error(), "x.yaml: "+want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}

// A misspelt key and a duration without its unit are told in the
// file's terms, with the key meant, never a Go type.
func TestParseSaysWhatAKeyOrDurationShouldBe(t *testing.T) {
	_, err := Parse("x.yaml", []byte("soak: 5\nrepos:\n  - name: a\n    url: /srv/a.git\n    secretfile: /etc/s\n"), "h")
	if err == nil {
		t.Fatal("parsed")
	}
	msg := err.Error()
	for _, want := range []string{`line 5: unknown key "secretfile": did you mean secretFile?`, `x.yaml: line 1: "5" is not a duration: give it with its unit, e.g. 5s or 5m`} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "config.Repo") || strings.Contains(msg, "time.Duration") {
		t.Errorf("names a Go type:\n%s", msg)
	}
}

// TestParseNotifyStatusDrift: the notification targets, the commit
// status and the drift check are validated like every other field, each
// error naming its field, no token shown.
func TestParseNotifyStatusDrift(t *testing.T) {
	f := writeFiles(t)
	good := fmt.Sprintf(`
notify:
  - {type: webhook, url: https://hooks.example/syslet, secretFile: %s, events: [failed, rolled-back, drift]}
  - {type: ntfy, url: https://ntfy.example/ops}
repos:
  - name: infra
    url: ssh://git@github.com/ops/infra.git
    sshKey: %s
    knownHosts: %s
    secretFile: %s
    status: {forge: github, tokenFile: %s}
    drift: {interval: 10m, reconcile: true}
  - name: gl
    url: https://gitlab.example/ops/infra.git
    secretFile: %s
    status: {forge: gitlab, tokenFile: %s, context: "deploy/{hostname}", targetURL: "https://grafana.example/d/x?host={hostname}&commit={commit}"}
    drift: {interval: "off"}
`, f.secret, f.key, f.knownHosts, f.secret, f.secret, f.secret, f.secret)
	must(t, os.WriteFile(f.knownHosts, append(mustRead(t, f.knownHosts), []byte("github.com "+strings.SplitN(string(mustRead(t, f.knownHosts)), " ", 2)[1])...), 0o644))
	c, err := Parse("test.yaml", []byte(good), "web1")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.NotifyTargets) != 2 || c.NotifyTargets[1].Name() != "ntfy-2" {
		t.Errorf("targets %v", c.NotifyTargets)
	}
	gh, gl := c.Repos[0], c.Repos[1]
	if s := gh.forgeStatus; s == nil || s.repo != (forge.Repo{Kind: forge.GitHub, API: "https://api.github.com", Path: "ops/infra"}) || s.context != "syslet/web1" {
		t.Errorf("github status %+v", gh.forgeStatus)
	}
	if gh.DriftInterval != 10*time.Minute || !gh.Reconcile || gl.DriftInterval != 0 || c.Repos[1].Reconcile {
		t.Errorf("drift %v %v %v", gh.DriftInterval, gh.Reconcile, gl.DriftInterval)
	}
	if s := gl.forgeStatus; s == nil || s.repo != (forge.Repo{Kind: forge.GitLab, API: "https://gitlab.example/api/v4", Path: "ops/infra"}) || s.context != "deploy/web1" ||
		s.targetURL != "https://grafana.example/d/x?host=web1&commit={commit}" {
		t.Errorf("gitlab status %+v", gl.forgeStatus)
	}
	u, h, body := gl.forgeStatus.request("abc", forge.Failure, "failed")
	if u != "https://gitlab.example/api/v4/projects/ops%2Finfra/statuses/abc" || h.Get("PRIVATE-TOKEN") == "" ||
		string(body) != `{"description":"failed","name":"deploy/web1","state":"failed","target_url":"https://grafana.example/d/x?host=web1\u0026commit=abc"}` {
		t.Errorf("gitlab request %s %v %s", u, h, body)
	}
	if strings.Contains(fmt.Sprintf("%+v %#v %+v", *gh.forgeStatus, *gh.forgeStatus, c), "0123456789abcdef") {
		t.Errorf("a token prints")
	}

	repo := func(fields string) string {
		return "repos:\n  - name: infra\n    url: /srv/x\n    secretFile: " + f.secret + "\n" + fields
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"notify type", "notify: [{type: pager, url: https://x.example}]\n" + repo(""), `notify[0].type: "pager" is not a target type`},
		{"notify unknown field", "notify: [{type: webhook, uri: x}]\n" + repo(""), `unknown key "uri"`},
		{"notify loose secret", "notify: [{type: webhook, url: https://x.example, secretFile: " + f.looseSecret + "}]\n" + repo(""), "notify[0].secretFile: " + f.looseSecret + " is readable by group or others"},
		{"status forge", repo("    status: {forge: bitbucket, api: https://x.example, repo: a/b, tokenFile: " + f.secret + "}\n"), `repos[0].status.forge: "bitbucket" is not a forge`},
		{"status api needed for a local repo", repo("    status: {forge: gitea, repo: a/b, tokenFile: " + f.secret + "}\n"), "repos[0].status.api: required"},
		{"status repo needed for a local repo", repo("    status: {forge: gitea, api: https://git.example/api/v1, tokenFile: " + f.secret + "}\n"), "repos[0].status.repo: required"},
		{"status repo shape", repo("    status: {forge: github, api: https://x.example, repo: justone, tokenFile: " + f.secret + "}\n"), `repos[0].status.repo: "justone": want owner/name`},
		{"status token in clear", repo("    status: {forge: gitea, api: http://git.example/api/v1, repo: a/b, tokenFile: " + f.secret + "}\n"), "repos[0].status.api: \"http://git.example/api/v1\" would send the token in clear"},
		{"status no token", repo("    status: {forge: gitea, api: https://git.example/api/v1, repo: a/b}\n"), "repos[0].status.tokenFile: required"},
		{"status loose token", repo("    status: {forge: gitea, api: https://git.example/api/v1, repo: a/b, tokenFile: " + f.looseSecret + "}\n"), "repos[0].status.tokenFile: " + f.looseSecret + " is readable"},
		{"status target url", repo("    status: {forge: gitea, api: https://git.example/api/v1, repo: a/b, tokenFile: " + f.secret + ", targetURL: ftp://x}\n"), "repos[0].status.targetURL"},
		{"drift interval", repo("    drift: {interval: sometimes}\n"), `repos[0].drift.interval: "sometimes" is not a duration`},
		{"drift too often", repo("    drift: {interval: 1s}\n"), "repos[0].drift.interval: 1s is shorter than the minimum 5s"},
		{"reconcile without checks", repo("    drift: {interval: \"off\", reconcile: true}\n"), "repos[0].drift.reconcile: needs a drift check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("test.yaml", []byte(tc.yaml), "web1")
			if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error:\n%v\nwant it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "0123456789abcdef") {
				t.Fatalf("error leaks a secret: %v", err)
			}
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	must(t, err)
	return b
}
