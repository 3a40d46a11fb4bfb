package webhookd

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/syslet/syslet/webhookd/config"
)

func sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func TestVerify(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secret")
	must(t, os.WriteFile(file, []byte("s3cret-s3cret-s3cret\n"), 0o600))
	secret, err := config.ReadSecret(file)
	must(t, err)
	body := []byte(`{"ref":"refs/heads/main"}`)
	good := sign(secret.Bytes(), body)
	bad := sign([]byte("other-secret-other"), body)
	for _, tc := range []struct {
		name    string
		headers map[string]string
		forge   Forge
		err     error
	}{
		{"github", map[string]string{"X-Hub-Signature-256": "sha256=" + good}, GitHub, nil},
		{"github wrong", map[string]string{"X-Hub-Signature-256": "sha256=" + bad}, GitHub, ErrBadSignature},
		{"github without prefix", map[string]string{"X-Hub-Signature-256": good}, GitHub, ErrBadSignature},
		{"github not hex", map[string]string{"X-Hub-Signature-256": "sha256=zz"}, GitHub, ErrBadSignature},
		{"github truncated", map[string]string{"X-Hub-Signature-256": "sha256=" + good[:32]}, GitHub, ErrBadSignature},
		{"gitea", map[string]string{"X-Gitea-Signature": good}, Gitea, nil},
		{"gitea wrong", map[string]string{"X-Gitea-Signature": bad}, Gitea, ErrBadSignature},
		{"forgejo", map[string]string{"X-Forgejo-Signature": good, "X-Gitea-Signature": good, "X-Hub-Signature-256": "sha256=" + good}, Forgejo, nil},
		// The most specific header is the one that counts: a good GitHub
		// header does not excuse a forged Forgejo one.
		{"forgejo wrong, github right", map[string]string{"X-Forgejo-Signature": bad, "X-Hub-Signature-256": "sha256=" + good}, Forgejo, ErrBadSignature},
		{"gitlab", map[string]string{"X-Gitlab-Token": "s3cret-s3cret-s3cret"}, GitLab, nil},
		{"gitlab wrong", map[string]string{"X-Gitlab-Token": "s3cret-s3cret-s3cre"}, GitLab, ErrBadSignature},
		{"unsigned", map[string]string{"X-GitHub-Event": "push"}, "", ErrUnsigned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			forge, err := verify(h, body, secret)
			if forge != tc.forge || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("verify = %q, %v; want %q, %v", forge, err, tc.forge, tc.err)
			}
		})
	}
	if _, err := verify(http.Header{"X-Gitlab-Token": {"x"}}, body, config.Secret{}); !errors.Is(err, ErrUnsigned) {
		t.Errorf("a repository without a secret verified a delivery: %v", err)
	}
}

func TestParseEvent(t *testing.T) {
	commit := "0123456789abcdef0123456789abcdef01234567"
	push := fmt.Sprintf(`{"ref":"refs/heads/main","before":"%s","after":"%s"}`, commit, commit)
	for _, tc := range []struct {
		name    string
		forge   Forge
		headers map[string]string
		body    string
		want    event
		err     bool
	}{
		{"github push", GitHub, map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "d1"}, push,
			event{Kind: "push", Delivery: "d1", Ref: "refs/heads/main", After: commit}, false},
		{"github ping", GitHub, map[string]string{"X-GitHub-Event": "ping", "X-GitHub-Delivery": "d2"}, `{"zen":"x"}`,
			event{Kind: "ping", Delivery: "d2"}, false},
		{"github issue", GitHub, map[string]string{"X-GitHub-Event": "issues", "X-GitHub-Delivery": "d3"}, `{}`,
			event{Kind: "issues", Delivery: "d3"}, false},
		{"gitea push", Gitea, map[string]string{"X-Gitea-Event": "push", "X-Gitea-Delivery": "g1"}, push,
			event{Kind: "push", Delivery: "g1", Ref: "refs/heads/main", After: commit}, false},
		{"forgejo push", Forgejo, map[string]string{"X-Forgejo-Event": "push", "X-Forgejo-Delivery": "f1", "X-Gitea-Delivery": "g9"}, push,
			event{Kind: "push", Delivery: "f1", Ref: "refs/heads/main", After: commit}, false},
		{"gitlab push", GitLab, map[string]string{"X-Gitlab-Event": "Push Hook", "X-Gitlab-Event-UUID": "l1"},
			fmt.Sprintf(`{"object_kind":"push","ref":"refs/heads/main","after":"%s","checkout_sha":"%s"}`, commit, commit),
			event{Kind: "push", Delivery: "l1", Ref: "refs/heads/main", After: commit}, false},
		{"gitlab tag push", GitLab, map[string]string{"X-Gitlab-Event": "Tag Push Hook", "X-Gitlab-Event-UUID": "l2"}, `{}`,
			event{Kind: "tag push hook", Delivery: "l2"}, false},
		{"branch deleted", GitHub, map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "d4"},
			`{"ref":"refs/heads/main","after":"0000000000000000000000000000000000000000"}`,
			event{Kind: "push", Delivery: "d4", Ref: "refs/heads/main", After: "0000000000000000000000000000000000000000"}, false},
		{"no delivery id: body digest", GitHub, map[string]string{"X-GitHub-Event": "ping"}, `{}`,
			event{Kind: "ping", Delivery: "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"}, false},
		{"not json", GitHub, map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "d5"}, `{"ref":`, event{}, true},
		{"after not a commit", GitHub, map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "d6"}, `{"ref":"refs/heads/main","after":"HEAD~1"}`, event{}, true},
		{"after missing", GitHub, map[string]string{"X-GitHub-Event": "push", "X-GitHub-Delivery": "d7"}, `{"ref":"refs/heads/main"}`, event{}, true},
		{"no event header", GitHub, map[string]string{"X-GitHub-Delivery": "d8"}, push, event{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			ev, err := parseEvent(tc.forge, h, []byte(tc.body))
			if tc.err {
				if !errors.Is(err, ErrBadPayload) {
					t.Fatalf("err = %v, want ErrBadPayload", err)
				}
				return
			}
			if err != nil || ev != tc.want {
				t.Fatalf("parseEvent = %+v, %v; want %+v", ev, err, tc.want)
			}
		})
	}
}

func TestSeenSetIsBounded(t *testing.T) {
	s := newSeenSet(3)
	for _, id := range []string{"a", "b", "c"} {
		if !s.addAll(id) {
			t.Fatalf("%s reported as seen", id)
		}
	}
	if s.addAll("a") {
		t.Fatal("replay of a accepted")
	}
	s.addAll("d") // forgets a, the oldest
	if len(s.ids) != 3 {
		t.Fatalf("len = %d, want 3", len(s.ids))
	}
	if !s.addAll("a") {
		t.Fatal("a still remembered after eviction")
	}
	if s.addAll("d") {
		t.Fatal("replay of d accepted")
	}
}
