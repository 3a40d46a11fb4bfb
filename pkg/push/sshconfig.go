package push

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kevinburke/ssh_config"
)

// SSHConfig answers ssh_config lookups from one or more files, first file
// first; within a file the first matching value wins, as in ssh(1).
type SSHConfig struct {
	files []*ssh_config.Config
	names []string
	home  string
}

// LoadSSHConfig reads ssh_config files. Missing files are skipped (a
// laptop without ~/.ssh/config is normal); unreadable or unparsable ones
// are errors. home expands `~` in IdentityFile.
func LoadSSHConfig(home string, paths ...string) (*SSHConfig, error) {
	return loadSSHConfig(home, nil, paths)
}

// LoadDefaultSSHConfig is LoadSSHConfig for files the user did not name:
// one the parser cannot read (it does not support Match blocks) is
// reported to skipped and left out rather than failing every push.
func LoadDefaultSSHConfig(home string, skipped func(path string, err error), paths ...string) (*SSHConfig, error) {
	return loadSSHConfig(home, skipped, paths)
}

func loadSSHConfig(home string, skipped func(string, error), paths []string) (*SSHConfig, error) {
	c := &SSHConfig{home: home}
	for _, p := range paths {
		f, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading ssh config: %w", err)
		}
		cfg, err := ssh_config.Decode(f)
		f.Close()
		if err != nil && skipped != nil {
			skipped(p, err)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("parsing ssh config %s: %w", p, err)
		}
		c.files = append(c.files, cfg)
		c.names = append(c.names, p)
	}
	return c, nil
}

func (c *SSHConfig) get(alias, key string) (string, error) {
	for i, f := range c.files {
		v, err := f.Get(alias, key)
		if err != nil {
			return "", fmt.Errorf("ssh config %s: %s for %s: %w", c.names[i], key, alias, err)
		}
		if v != "" {
			return v, nil
		}
	}
	return "", nil
}

func (c *SSHConfig) getAll(alias, key string) ([]string, error) {
	var out []string
	for i, f := range c.files {
		v, err := f.GetAll(alias, key)
		if err != nil {
			return nil, fmt.Errorf("ssh config %s: %s for %s: %w", c.names[i], key, alias, err)
		}
		out = append(out, v...)
	}
	return out, nil
}

// Resolve turns a target argument into a Target: the argument's user and
// port win over ssh_config's User and Port; HostName replaces the alias
// (with %h expanded); defaultUser and 22 fill what is left.
func (c *SSHConfig) Resolve(arg, defaultUser string) (Target, error) {
	user, alias, port, err := ParseTarget(arg)
	if err != nil {
		return Target{}, err
	}
	t := Target{Arg: arg, Alias: alias, User: user, HostName: alias, Port: port}
	if c != nil {
		if hn, err := c.get(alias, "HostName"); err != nil {
			return Target{}, err
		} else if hn != "" {
			t.HostName = strings.ReplaceAll(hn, "%h", alias)
		}
		if t.User == "" {
			if t.User, err = c.get(alias, "User"); err != nil {
				return Target{}, err
			}
		}
		if t.Port == 0 {
			ps, err := c.get(alias, "Port")
			if err != nil {
				return Target{}, err
			}
			if ps != "" {
				p, err := strconv.Atoi(ps)
				if err != nil || p < 1 || p > 65535 {
					return Target{}, fmt.Errorf("ssh config: Port %q for %s is not a port number", ps, alias)
				}
				t.Port = p
			}
		}
		ids, err := c.getAll(alias, "IdentityFile")
		if err != nil {
			return Target{}, err
		}
		for _, id := range ids {
			t.IdentityFiles = append(t.IdentityFiles, c.expand(id, t))
		}
	}
	if t.User == "" {
		t.User = defaultUser
	}
	if t.Port == 0 {
		t.Port = 22
	}
	return t, nil
}

// expand handles the tokens IdentityFile commonly uses: a leading ~, %d
// (home), %h (host name), %r (remote user) and %%.
func (c *SSHConfig) expand(p string, t Target) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		p = filepath.Join(c.home, p[1:])
	}
	r := strings.NewReplacer("%%", "%", "%d", c.home, "%r", t.User, "%h", t.HostName)
	return r.Replace(p)
}
