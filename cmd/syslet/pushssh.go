package main

// How syslet push connects: ssh_config, the agent, key files (their
// passphrases asked once, on the terminal), and the known_hosts files, as
// ssh reads them.

import (
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"

	"golang.org/x/crypto/ssh"
	"golang.org/x/term"

	"github.com/syslet/syslet/pkg/app/view"
	"github.com/syslet/syslet/pkg/push"
)

// connection is where and how push connects, read once for every host.
type connection struct {
	home string
	cfg  *push.SSHConfig
	// ag is the SSH agent; nil without one.
	ag *push.Agent
}

// connect reads the ssh settings (-F, or ~/.ssh/config and
// /etc/ssh/ssh_config) and dials the agent of SSH_AUTH_SOCK, if any.
func connect(o pushOptions, stderr io.Writer) (*connection, error) {
	c := &connection{}
	c.home, _ = os.UserHomeDir()
	var err error
	if o.sshConfig != "" {
		if _, err := os.Stat(o.sshConfig); err != nil {
			return nil, fmt.Errorf("-F: %w", err)
		}
		c.cfg, err = push.LoadSSHConfig(c.home, o.sshConfig)
	} else {
		c.cfg, err = push.LoadDefaultSSHConfig(c.home, func(path string, err error) {
			view.Printf(stderr, "syslet push: warning: ignoring %s: %v (pass -F FILE with your hosts' settings)\n", path, err)
		}, filepath.Join(c.home, ".ssh", "config"), "/etc/ssh/ssh_config")
	}
	if err != nil {
		return nil, err
	}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" {
		if c.ag, err = push.DialAgent(sock); err != nil {
			view.Printf(stderr, "syslet push: warning: %v; using key files only\n", err)
		}
	}
	return c, nil
}

func (c *connection) close() { c.ag.Close() }

// jobs resolves every target and loads its keys (asking passphrases
// now, once each): one job per target, with its stream and saved plan.
// It says why when a target cannot be resolved or has no key.
func (c *connection) jobs(o pushOptions, streams, plans map[string][]byte, stderr io.Writer) ([]push.Job, bool) {
	keys := &push.Keys{
		Passphrase: askPassphrase,
		Skipped: func(path string, err error) {
			view.Printf(stderr, "syslet push: warning: skipping key %s: %v\n", path, err)
		},
	}
	localUser := currentUser()
	var jobs []push.Job
	for _, arg := range o.targets {
		t, err := c.cfg.Resolve(arg, localUser)
		if err != nil {
			view.Error(stderr, "syslet push", err)
			return nil, false
		}
		signers, err := targetSigners(keys, o.identities, t, c.home)
		if err != nil {
			view.Error(stderr, "syslet push", err)
			return nil, false
		}
		if len(signers) == 0 && c.ag == nil {
			view.Printf(stderr, "syslet push: %s: no SSH key: pass -i KEYFILE, name an IdentityFile in ssh_config, or run an agent (SSH_AUTH_SOCK)\n", arg)
			return nil, false
		}
		jobs = append(jobs, push.Job{Target: t, Stream: streams[arg], Plan: plans[arg], Auth: push.Auth(signers, c.ag)})
	}
	return jobs, true
}

// hostKeys is the host key policy. As ssh: the user's known_hosts (where
// --accept-new pins) and the system-wide one; --known-hosts replaces
// both.
func (c *connection) hostKeys(o pushOptions, stderr io.Writer) *push.HostKeys {
	files := []string{o.knownHosts}
	if o.knownHosts == "" {
		files = []string{filepath.Join(c.home, ".ssh", "known_hosts"), "/etc/ssh/ssh_known_hosts"}
	}
	return &push.HostKeys{Files: files, AcceptNew: o.acceptNew, Pinned: func(addr, typ, fp, file string) {
		view.Printf(stderr, "syslet push: %s: new host key %s %s pinned in %s (--accept-new)\n", addr, typ, fp, file)
	}}
}

// targetSigners loads the key files for a target: every -i file (which
// must exist), then its ssh_config IdentityFiles, or ssh's default key
// names when neither names any.
func targetSigners(keys *push.Keys, identities []string, t push.Target, home string) ([]ssh.Signer, error) {
	var signers []ssh.Signer
	add := func(path string, required bool) error {
		s, err := keys.Load(path, required)
		if err != nil {
			return err
		}
		if s != nil {
			signers = append(signers, s)
		}
		return nil
	}
	for _, p := range identities {
		if err := add(p, true); err != nil {
			return nil, err
		}
	}
	optional := t.IdentityFiles
	if len(identities) == 0 && len(optional) == 0 {
		for _, n := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
			optional = append(optional, filepath.Join(home, ".ssh", n))
		}
	}
	for _, p := range optional {
		if err := add(p, false); err != nil {
			return nil, err
		}
	}
	return signers, nil
}

// askPassphrase reads a key's passphrase from the terminal (not stdin,
// which may carry the specs).
func askPassphrase(path string) ([]byte, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, push.ErrNoPassphrase
	}
	defer tty.Close()
	if !term.IsTerminal(int(tty.Fd())) {
		return nil, push.ErrNoPassphrase
	}
	fmt.Fprintf(tty, "Enter passphrase for key %s: ", path)
	pass, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(tty)
	if err != nil {
		return nil, fmt.Errorf("reading passphrase: %w", err)
	}
	return pass, nil
}

func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}
