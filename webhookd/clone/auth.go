package clone

import (
	"fmt"
	"net"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"

	"github.com/syslet/syslet/webhookd/config"
)

// authFor builds the transport credentials of cfg: for SSH a deploy key and
// a host key check against cfg.KnownHosts only (never ~/.ssh, never trust on
// first use); for https an optional token; nothing for local paths.
func authFor(cfg *config.Repo) (transport.AuthMethod, error) {
	ep := cfg.Endpoint()
	switch {
	case cfg.IsSSH():
		signer, err := config.LoadSigner(cfg.SSHKey)
		if err != nil {
			return nil, fmt.Errorf("sshKey: %w", err)
		}
		db, err := knownhosts.NewDB(cfg.KnownHosts)
		if err != nil {
			return nil, fmt.Errorf("knownHosts: %w", err)
		}
		user := ep.User
		if user == "" {
			user = "git"
		}
		return &sshAuth{user: user, signer: signer, db: db, hostPort: config.HostPort(ep), knownHosts: cfg.KnownHosts}, nil
	case ep != nil && ep.Protocol == "https" && !cfg.Token.IsZero():
		user := ep.User
		if user == "" {
			user = "git"
		}
		return &githttp.BasicAuth{Username: user, Password: string(cfg.Token.Bytes())}, nil
	}
	return nil, nil
}

// sshAuth is go-git's SSH AuthMethod with our own host key policy.
type sshAuth struct {
	user       string
	signer     ssh.Signer
	db         *knownhosts.HostKeyDB
	hostPort   string
	knownHosts string
}

func (a *sshAuth) Name() string   { return "ssh-public-key" }
func (a *sshAuth) String() string { return fmt.Sprintf("user: %s, name: %s", a.user, a.Name()) }

func (a *sshAuth) ClientConfig() (*ssh.ClientConfig, error) {
	check := a.db.HostKeyCallback()
	return &ssh.ClientConfig{
		User: a.user,
		Auth: []ssh.AuthMethod{ssh.PublicKeys(a.signer)},
		HostKeyCallback: func(host string, remote net.Addr, key ssh.PublicKey) error {
			err := check(host, remote, key)
			switch {
			case knownhosts.IsHostKeyChanged(err):
				return fmt.Errorf("host key of %s does not match %s (%s %s): refusing to connect", host, a.knownHosts, key.Type(), ssh.FingerprintSHA256(key))
			case knownhosts.IsHostUnknown(err):
				return fmt.Errorf("host %s is not in %s (it offered %s %s): refusing to connect", host, a.knownHosts, key.Type(), ssh.FingerprintSHA256(key))
			}
			return err
		},
		// Offer only the key types known_hosts holds for this host, so the
		// server cannot pick a type we could not check.
		HostKeyAlgorithms: a.db.HostKeyAlgorithms(a.hostPort),
		Timeout:           30 * time.Second,
	}, nil
}
