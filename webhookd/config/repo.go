package config

import (
	"net"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/skeema/knownhosts"
)

// IsSSH reports whether the repository is fetched over SSH.
func (r *Repo) IsSSH() bool { return r.endpoint != nil && r.endpoint.Protocol == "ssh" }

// Endpoint is the parsed remote URL.
func (r *Repo) Endpoint() *transport.Endpoint { return r.endpoint }

// RedactedURL is the remote URL without any password, for logs and /status.
func (r *Repo) RedactedURL() string {
	if r.endpoint == nil || r.endpoint.Password == "" {
		return r.URL
	}
	e := *r.endpoint
	e.Password = "xxxxx"
	return e.String()
}

// validate checks where the repository is fetched from, its spec
// directory, its poll timer and its credentials.
func (r *Repo) validate(hostname string, f func(string) string, add func(field, format string, args ...any)) {
	r.validateRemote(f, add)
	r.validatePath(hostname, f, add)
	r.validatePoll(f, add)
	r.validateCredentials(f, add)
}

// validateRemote checks the remote URL and the branch.
func (r *Repo) validateRemote(f func(string) string, add func(field, format string, args ...any)) {
	if r.URL == "" {
		add(f("url"), "required")
	} else if ep, err := transport.NewEndpoint(r.URL); err != nil {
		add(f("url"), "%q is not a git URL: %v", r.URL, err)
	} else {
		switch ep.Protocol {
		case "ssh", "https":
			r.endpoint = ep
		case "file":
			if !path.IsAbs(ep.Path) || !strings.Contains(r.URL, "://") && !path.IsAbs(r.URL) {
				add(f("url"), "a local path must be absolute, got %q", r.URL)
			} else {
				r.endpoint = ep
			}
		case "http", "git":
			add(f("url"), "%s:// is not integrity-protected: use https://, ssh:// or a local path", ep.Protocol)
		default:
			add(f("url"), "unsupported scheme %q (want ssh://, https://, file:// or a local path)", ep.Protocol)
		}
		if ep.Password != "" {
			add(f("url"), "must not contain a password: put it in tokenFile")
		}
	}

	if r.Branch == "" {
		r.Branch = DefaultBranch
	}
	if err := plumbing.NewBranchReferenceName(r.Branch).Validate(); err != nil || strings.HasPrefix(r.Branch, "refs/") {
		add(f("branch"), "%q is not a valid branch name (give the short name, e.g. main)", r.Branch)
	}
}

// validatePath sets the spec directory, {hostname} substituted.
func (r *Repo) validatePath(hostname string, f func(string) string, add func(field, format string, args ...any)) {
	p := strings.ReplaceAll(r.Path, "{hostname}", hostname)
	if p == "" {
		p = "."
	}
	switch {
	case strings.ContainsAny(p, "{}"):
		add(f("path"), "%q: the only placeholder is {hostname}", r.Path)
	case path.IsAbs(p):
		add(f("path"), "%q must be relative to the repository's root", r.Path)
	case path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../"):
		add(f("path"), "%q must be a clean path inside the repository (no .., no trailing /)", r.Path)
	default:
		r.SpecPath = p
	}
}

// validatePoll sets the poll interval and the spread of the first poll.
func (r *Repo) validatePoll(f func(string) string, add func(field, format string, args ...any)) {
	if r.Poll != "" {
		d, err := time.ParseDuration(r.Poll)
		switch {
		case err != nil:
			add(f("poll"), "%q is not a duration like 30s or 5m", r.Poll)
		case d < MinPoll:
			add(f("poll"), "%s is shorter than the minimum %s", d, MinPoll)
		default:
			r.PollInterval = d
		}
	}
	r.PollDelay = r.PollInterval
	if r.PollSpread != "" {
		d, err := time.ParseDuration(r.PollSpread)
		switch {
		case r.Poll == "":
			add(f("pollSpread"), "only applies with poll")
		case err != nil:
			add(f("pollSpread"), "%q is not a duration like 0s, 30s or 5m", r.PollSpread)
		case d < 0:
			add(f("pollSpread"), "must not be negative, got %s", d)
		case r.PollInterval > 0 && d > r.PollInterval:
			add(f("pollSpread"), "%s is longer than the poll interval %s: a spread of the interval already makes the fleet's polls even", d, r.PollInterval)
		default:
			r.PollDelay = d
		}
	}
}

// validateCredentials reads the webhook secret, and what fetching over
// SSH or https needs.
func (r *Repo) validateCredentials(f func(string) string, add func(field, format string, args ...any)) {
	if r.SecretFile == "" {
		if r.Poll == "" {
			add(f("secretFile"), "required unless poll is set (a repository needs signed webhooks, polling, or both)")
		}
	} else if s, err := ReadSecret(r.SecretFile); err != nil {
		add(f("secretFile"), "%v", err)
	} else if len(s.Bytes()) < minSecretLen {
		add(f("secretFile"), "%s holds %d bytes; use at least %d (e.g. openssl rand -hex 32)", r.SecretFile, len(s.Bytes()), minSecretLen)
	} else {
		r.Secret = s
	}

	ssh := r.endpoint != nil && r.endpoint.Protocol == "ssh"
	if ssh {
		if r.SSHKey == "" {
			add(f("sshKey"), "required for ssh remotes")
		} else if _, err := LoadSigner(r.SSHKey); err != nil {
			add(f("sshKey"), "%v", err)
		}
		if r.KnownHosts == "" {
			add(f("knownHosts"), "required for ssh remotes: the remote's host key is never trusted on first use (ssh-keyscan HOST > FILE, then check it)")
		} else if db, err := knownhosts.NewDB(r.KnownHosts); err != nil {
			add(f("knownHosts"), "reading %s: %v", r.KnownHosts, err)
		} else if hp := HostPort(r.endpoint); len(db.HostKeyAlgorithms(hp)) == 0 {
			add(f("knownHosts"), "%s has no key for %s", r.KnownHosts, knownhosts.Normalize(hp))
		}
	} else {
		if r.SSHKey != "" {
			add(f("sshKey"), "only applies to ssh remotes")
		}
		if r.KnownHosts != "" {
			add(f("knownHosts"), "only applies to ssh remotes")
		}
	}
	if r.TokenFile != "" {
		if r.endpoint != nil && r.endpoint.Protocol != "https" {
			add(f("tokenFile"), "only applies to https remotes")
		} else if s, err := ReadSecret(r.TokenFile); err != nil {
			add(f("tokenFile"), "%v", err)
		} else {
			r.Token = s
		}
	}
}

// HostPort is the SSH endpoint's host and port (22 unless it names one).
func HostPort(ep *transport.Endpoint) string {
	port := ep.Port
	if port == 0 {
		port = 22
	}
	return net.JoinHostPort(ep.Host, strconv.Itoa(port))
}
