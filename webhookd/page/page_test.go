package page

import (
	"testing"

	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/syslet/syslet/pkg/forge"
)

// TestLoopbackListen: without a token, only a daemon listening on these
// serves the page.
func TestLoopbackListen(t *testing.T) {
	for _, listen := range []string{"127.0.0.1:1", "[::1]:1", "localhost:1"} {
		if !loopbackListen(listen) {
			t.Errorf("%s is loopback", listen)
		}
	}
	for _, listen := range []string{":1", "0.0.0.0:1", "10.0.0.1:1", "[::]:1"} {
		if loopbackListen(listen) {
			t.Errorf("%s is not loopback", listen)
		}
	}
}

func TestCommitLink(t *testing.T) {
	const c = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct{ url, extra, want string }{
		{"https://github.com/ops/infra.git", "", "https://github.com/ops/infra/commit/" + c},
		{"git@git.example:ops/infra.git", "", "https://git.example/ops/infra/commit/" + c},
		{"ssh://git@git.example:2222/ops/infra.git", "", "https://git.example/ops/infra/commit/" + c},
		{"https://git.example:3000/ops/infra", "", "https://git.example:3000/ops/infra/commit/" + c},
		{"https://gitlab.example/ops/infra.git", "gitlab", "https://gitlab.example/ops/infra/-/commit/" + c},
		{"/srv/git/infra", "", ""},
	} {
		ep, err := transport.NewEndpoint(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		kind := forge.Kind(tc.extra)
		if got := commitLink(ep, kind, c); got != tc.want {
			t.Errorf("%s: link %q, want %q", tc.url, got, tc.want)
		}
		if got := commitLink(ep, kind, `"><script>`); got != "" {
			t.Errorf("%s: a commit that is not hex got a link %q", tc.url, got)
		}
	}
}
