package config

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/syslet/syslet/pkg/notify"
)

// ErrConfig marks every configuration error; the message names the field.
var ErrConfig = errors.New("invalid webhookd configuration")

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// Load reads and validates the configuration file at path, substitutes
// hostname into each repository's path and reads every secret file. All
// problems are reported at once, each naming its field.
func Load(file, hostname string) (*Config, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return Parse(file, raw, hostname)
}

// Parse is Load for bytes already read; file names the source in errors.
func Parse(file string, raw []byte, hostname string) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, file, decodeError(err))
	}
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s: %s", file, field, fmt.Sprintf(format, args...)))
	}
	c.validate(hostname, add)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w:\n%w", ErrConfig, errors.Join(errs...))
	}
	return &c, nil
}

func (c *Config) validate(hostname string, add func(field, format string, args ...any)) {
	c.Hostname = hostname
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if host, port, err := net.SplitHostPort(c.Listen); err != nil {
		add("listen", "want host:port, got %q: %v", c.Listen, err)
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		add("listen", "port %q is not a number in 1..65535", port)
	} else if host != "" && net.ParseIP(host) == nil && host != "localhost" {
		add("listen", "host %q must be an IP address, localhost or empty (all interfaces)", host)
	}
	if c.TLS != nil {
		if c.TLS.Cert == "" {
			add("tls.cert", "required when tls is set")
		} else if err := readable(c.TLS.Cert); err != nil {
			add("tls.cert", "%v", err)
		}
		if c.TLS.Key == "" {
			add("tls.key", "required when tls is set")
		} else if err := privateFile(c.TLS.Key); err != nil {
			add("tls.key", "%v", err)
		}
	}
	if c.PageTokenFile != "" {
		if tok, err := ReadSecret(c.PageTokenFile); err != nil {
			add("pageTokenFile", "%v", err)
		} else if len(tok.Bytes()) < minSecretLen {
			add("pageTokenFile", "the token is shorter than %d bytes: easy to guess", minSecretLen)
		} else {
			c.PageToken = tok
		}
	}
	if c.StateDir == "" {
		c.StateDir = DefaultStateDir
	}
	switch c.Rollback {
	case "":
		c.Rollback = "auto"
	case "auto", "never":
	default:
		add("rollback", "must be auto or never, got %q", c.Rollback)
	}
	switch {
	case c.Soak == 0:
		c.Soak = DefaultSoak
	case c.Soak < 0:
		add("soak", "must not be negative, got %s", c.Soak)
	}
	if !path.IsAbs(c.StateDir) {
		add("stateDir", "must be an absolute path, got %q", c.StateDir)
	}
	if len(c.Repos) == 0 {
		add("repos", "at least one repository is required")
	}
	if c.Registry != nil {
		c.Registry.validate(add)
	}
	if ts, err := notify.Load(c.Notify, "notify"); err != nil {
		for _, e := range unjoin(err) {
			// notify.Load names the field itself: "notify[0].url: ...".
			errs := e.Error()
			field, msg, _ := strings.Cut(errs, ": ")
			add(field, "%s", msg)
		}
	} else {
		c.NotifyTargets = ts
	}
	seen := map[string]int{}
	for i := range c.Repos {
		r := &c.Repos[i]
		f := func(name string) string { return fmt.Sprintf("repos[%d].%s", i, name) }
		switch {
		case r.Name == "":
			add(f("name"), "required")
		case !nameRE.MatchString(r.Name):
			add(f("name"), "%q must be 1-63 characters of a-z, 0-9, '.', '_', '-', starting with a letter or digit", r.Name)
		default:
			if j, dup := seen[r.Name]; dup {
				add(f("name"), "%q is already the name of repos[%d]", r.Name, j)
			}
			seen[r.Name] = i
		}
		r.validate(hostname, f, add)
		r.validateStatus(hostname, f, add)
		r.validateDrift(f, add)
		r.validateVerify(f, add)
		r.validateWindows(f, add)
	}
}

// unjoin splits an errors.Join into its errors.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
