package push

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// PassphraseFunc asks for the passphrase of an encrypted key file. It is
// called once per file, before any connection is made.
type PassphraseFunc func(path string) ([]byte, error)

// ErrNoPassphrase is returned by a PassphraseFunc that cannot ask (no
// terminal); the key is then skipped with a notice.
var ErrNoPassphrase = errors.New("no terminal to ask for the passphrase")

// Keys loads private key files once each and remembers them, so a fleet of
// hosts naming the same IdentityFile asks for its passphrase once.
type Keys struct {
	Passphrase PassphraseFunc
	// Skipped is told about key files that were skipped (missing optional
	// files are silent; encrypted ones without a passphrase are not).
	Skipped func(path string, err error)

	loaded map[string]ssh.Signer
}

// Load returns the signer of the key file at path. required says the user
// named the file (-i): then a missing file is an error; a file named only
// by ssh_config or a default name is skipped when missing, as ssh does.
func (k *Keys) Load(path string, required bool) (ssh.Signer, error) {
	if s, ok := k.loaded[path]; ok {
		return s, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if !required && errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading key file: %w", err)
	}
	signer, err := ssh.ParsePrivateKey(data)
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) {
		if k.Passphrase == nil {
			err = ErrNoPassphrase
		} else {
			var pass []byte
			if pass, err = k.Passphrase(path); err == nil {
				signer, err = ssh.ParsePrivateKeyWithPassphrase(data, pass)
				clear(pass)
			}
		}
		if errors.Is(err, ErrNoPassphrase) && !required {
			if k.Skipped != nil {
				k.Skipped(path, err)
			}
			return nil, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	if k.loaded == nil {
		k.loaded = map[string]ssh.Signer{}
	}
	k.loaded[path] = signer
	return signer, nil
}

// Agent is a connection to an SSH agent.
type Agent struct {
	conn   net.Conn
	client agent.ExtendedAgent
}

// DialAgent connects to the agent at socket (SSH_AUTH_SOCK).
func DialAgent(socket string) (*Agent, error) {
	c, err := net.Dial("unix", socket)
	if err != nil {
		return nil, fmt.Errorf("connecting to the SSH agent: %w", err)
	}
	return &Agent{conn: c, client: agent.NewClient(c)}, nil
}

// Signers lists the agent's keys. The agent serialises requests on its
// one connection, so concurrent hosts can share it.
func (a *Agent) Signers() ([]ssh.Signer, error) {
	if a == nil {
		return nil, nil
	}
	return a.client.Signers()
}

// Close closes the connection to the agent.
func (a *Agent) Close() error {
	if a == nil {
		return nil
	}
	return a.conn.Close()
}

// Auth is one "publickey" method offering the key files first, then the
// agent's keys. (One method, not two: the client tries each method name
// once, so a second publickey method would never be asked.)
func Auth(files []ssh.Signer, ag *Agent) ssh.AuthMethod {
	return ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
		signers := append([]ssh.Signer(nil), files...)
		as, err := ag.Signers()
		if err != nil && len(signers) == 0 {
			return nil, err
		}
		return append(signers, as...), nil
	})
}
