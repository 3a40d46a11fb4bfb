package page

import (
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/syslet/syslet/pkg/forge"
)

// commitLink is the forge's web page of commit in the repository whose
// remote is ep, for the status page: https://HOST/OWNER/NAME/commit/SHA
// (GitHub, Gitea, Forgejo) or …/-/commit/SHA (kind GitLab). A remote that names
// no web host (a local path, file://) has none: "" then. The link is
// built from the configuration and a hex commit id only, never from what
// a request carried.
func commitLink(ep *transport.Endpoint, kind forge.Kind, commit string) string {
	if ep == nil || ep.Host == "" || ep.Protocol == "file" || !isHex(commit) {
		return ""
	}
	p := strings.TrimSuffix(strings.Trim(ep.Path, "/"), ".git")
	if p == "" {
		return ""
	}
	// An ssh remote's port is ssh's; a web remote's port is the page's.
	host := ep.Host
	if web := ep.Protocol == "https" || ep.Protocol == "http"; web && ep.Port != 0 && ep.Port != 443 && ep.Port != 80 {
		host = net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port))
	}
	mid := "/commit/"
	if kind == forge.GitLab {
		mid = "/-/commit/"
	}
	u := url.URL{Scheme: "https", Host: host, Path: "/" + p + mid + commit}
	if ep.Protocol == "http" {
		u.Scheme = "http"
	}
	return u.String()
}

func isHex(s string) bool {
	if len(s) < 7 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
