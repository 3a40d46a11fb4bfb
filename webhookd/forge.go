package webhookd

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/syslet/syslet/pkg/forge"
	"github.com/syslet/syslet/webhookd/config"
)

// Forge names the webhook dialect a delivery was verified with: the
// forges of pkg/forge.
type Forge = forge.Kind

const (
	GitHub  = forge.GitHub
	Gitea   = forge.Gitea
	Forgejo = forge.Forgejo
	GitLab  = forge.GitLab
)

// Verification failures; both answer 401.
var (
	ErrUnsigned     = errors.New("request carries no X-Hub-Signature-256, X-Gitea-Signature, X-Forgejo-Signature or X-Gitlab-Token header")
	ErrBadSignature = errors.New("signature does not match the body")
)

// verify finds the forge's signature header and checks it against the raw
// body with secret, in constant time. Forgejo also sends Gitea's and
// GitHub's headers; the most specific one present is the one checked.
func verify(h http.Header, body []byte, secret config.Secret) (Forge, error) {
	if secret.IsZero() {
		// A poll-only repository has no secret: nothing can be signed for it.
		return "", ErrUnsigned
	}
	mac := hmac.New(sha256.New, secret.Bytes())
	mac.Write(body)
	sum := mac.Sum(nil)
	hexEqual := func(got string) bool {
		b, err := hex.DecodeString(strings.TrimSpace(got))
		return err == nil && hmac.Equal(b, sum)
	}
	switch {
	case h.Get("X-Forgejo-Signature") != "":
		return Forgejo, boolErr(hexEqual(h.Get("X-Forgejo-Signature")))
	case h.Get("X-Gitea-Signature") != "":
		return Gitea, boolErr(hexEqual(h.Get("X-Gitea-Signature")))
	case h.Get("X-Hub-Signature-256") != "":
		sig, ok := strings.CutPrefix(h.Get("X-Hub-Signature-256"), "sha256=")
		return GitHub, boolErr(ok && hexEqual(sig))
	case h.Get("X-Gitlab-Token") != "":
		// Compare digests so neither the length nor a prefix of the token leaks.
		a := sha256.Sum256([]byte(h.Get("X-Gitlab-Token")))
		b := sha256.Sum256(secret.Bytes())
		return GitLab, boolErr(subtle.ConstantTimeCompare(a[:], b[:]) == 1)
	}
	return "", ErrUnsigned
}

func boolErr(ok bool) error {
	if ok {
		return nil
	}
	return ErrBadSignature
}

// event is what a verified delivery asks for.
type event struct {
	Kind     string // "push", "ping" or the forge's own name for anything else
	Delivery string // forge's delivery id; a digest of the body when the forge sends none
	Ref      string // push: full ref name
	After    string // push: the commit the ref now points at
}

// deliveryHeader names each forge's unique-per-delivery header.
var deliveryHeader = map[Forge][]string{
	GitHub:  {"X-GitHub-Delivery"},
	Gitea:   {"X-Gitea-Delivery", "X-GitHub-Delivery"},
	Forgejo: {"X-Forgejo-Delivery", "X-Gitea-Delivery", "X-GitHub-Delivery"},
	GitLab:  {"X-Gitlab-Event-UUID", "Idempotency-Key", "X-Gitlab-Webhook-UUID"},
}

var eventHeader = map[Forge][]string{
	GitHub:  {"X-GitHub-Event"},
	Gitea:   {"X-Gitea-Event", "X-GitHub-Event"},
	Forgejo: {"X-Forgejo-Event", "X-Gitea-Event", "X-GitHub-Event"},
	GitLab:  {"X-Gitlab-Event"},
}

func firstHeader(h http.Header, names []string) string {
	for _, n := range names {
		if v := strings.TrimSpace(h.Get(n)); v != "" {
			return v
		}
	}
	return ""
}

var commitRE = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)

// zeroCommit is the "after" of a push that deleted the ref.
func zeroCommit(s string) bool { return strings.Trim(s, "0") == "" }

// ErrBadPayload answers 400: a verified delivery whose payload cannot be read.
var ErrBadPayload = errors.New("malformed payload")

// parseEvent reads the event kind, delivery id and, for a push, ref and
// after commit from a verified delivery.
func parseEvent(forge Forge, h http.Header, body []byte) (event, error) {
	ev := event{Delivery: firstHeader(h, deliveryHeader[forge])}
	if ev.Delivery == "" {
		sum := sha256.Sum256(body)
		ev.Delivery = "sha256:" + hex.EncodeToString(sum[:])
	}
	if len(ev.Delivery) > 200 {
		return ev, fmt.Errorf("%w: delivery id longer than 200 bytes", ErrBadPayload)
	}
	kind := strings.ToLower(firstHeader(h, eventHeader[forge]))
	if forge == GitLab {
		switch kind {
		case "push hook":
			kind = "push"
		case "":
			kind = "unknown"
		}
	}
	ev.Kind = kind
	if kind == "" {
		return ev, fmt.Errorf("%w: no event header", ErrBadPayload)
	}
	if kind != "push" {
		return ev, nil
	}
	var p struct {
		Ref        string `json:"ref"`
		After      string `json:"after"`
		ObjectKind string `json:"object_kind"` // GitLab
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return ev, fmt.Errorf("%w: %v", ErrBadPayload, err)
	}
	if forge == GitLab && p.ObjectKind != "" && p.ObjectKind != "push" {
		ev.Kind = p.ObjectKind
		return ev, nil
	}
	if !strings.HasPrefix(p.Ref, "refs/") {
		return ev, fmt.Errorf("%w: push without a ref", ErrBadPayload)
	}
	p.After = strings.ToLower(p.After)
	if p.After == "" || !zeroCommit(p.After) && !commitRE.MatchString(p.After) {
		return ev, fmt.Errorf("%w: after %q is not a commit id", ErrBadPayload, p.After)
	}
	ev.Ref, ev.After = p.Ref, p.After
	return ev, nil
}
