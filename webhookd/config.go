package webhookd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/skeema/knownhosts"
	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/settings"
	"golang.org/x/crypto/ssh"
	"gopkg.in/yaml.v3"
)

// Defaults for fields the configuration may leave out.
const (
	DefaultConfigPath = layout.WebhookdConfig
	DefaultListen     = "127.0.0.1:9090"
	DefaultStateDir   = layout.WebhookdState
	DefaultBranch     = "main"

	// DefaultSoak is how long the containers a deploy started must stay
	// up before it counts as done (syslet's own default).
	DefaultSoak = 5 * time.Second
	// MinPoll keeps a poll timer from hammering a forge.
	MinPoll = 5 * time.Second
	// DefaultDriftInterval is how often a repository's host is checked for
	// drift; MinDriftInterval bounds what a configuration may ask.
	DefaultDriftInterval = 15 * time.Minute
	MinDriftInterval     = 5 * time.Second
	// minSecretLen refuses secrets short enough to guess.
	minSecretLen = 16
)

// ErrConfig marks every configuration error; the message names the field.
var ErrConfig = errors.New("invalid webhookd configuration")

// Config is the daemon's configuration file.
// Its fields' comments are the configuration reference (webhookd(8) is
// generated from them).
type Config struct {
	Listen string     `yaml:"listen"` // host:port to serve on; default DefaultListen
	TLS    *TLSConfig `yaml:"tls"`    // serve HTTPS with this certificate and key (else put a TLS proxy in front)
	// a file (mode 0600) holding the token the status page at / asks for, as ?token= or
	// "Authorization: Bearer"; without it the page is served only on a loopback listen
	// address (a reverse proxy in front then does the auth)
	PageTokenFile string        `yaml:"pageTokenFile"`
	StateDir      string        `yaml:"stateDir"` // private checkouts and status; default DefaultStateDir
	Rollback      string        `yaml:"rollback"` // when a started container fails the health gate: "auto" (the default) restores the last good generation, "never" leaves the host as the deploy left it
	Soak          time.Duration `yaml:"soak"`     // how long the containers a deploy started must stay up; default DefaultSoak
	Repos         []Repo        `yaml:"repos"`    // the repositories whose pushes deploy this host (at least one)
	// let a container registry's push notifications update the containers that run the pushed tag (POST /registry)
	Registry *RegistryConfig `yaml:"registry"`
	// where every repository's deploy events go, written as syslet.json's "notify" targets
	Notify []settings.NotifyTarget `yaml:"notify"`

	// Filled in by LoadConfig.
	NotifyTargets []*notify.Target `yaml:"-"`
	Hostname      string           `yaml:"-"` // this host's name, as {hostname} is substituted
	PageToken     Secret           `yaml:"-"`
}

// TLSConfig makes the listener serve HTTPS.
type TLSConfig struct {
	Cert string `yaml:"cert"` // the certificate chain file (PEM)
	Key  string `yaml:"key"`  // its private key file (PEM, mode 0600)
}

// Repo is one configuration repository whose pushes deploy this host.
type Repo struct {
	Name       string `yaml:"name"`       // URL path segment: POST /hooks/{name}
	URL        string `yaml:"url"`        // ssh://, scp-like user@host:path, https://, file:// or an absolute path
	Branch     string `yaml:"branch"`     // default DefaultBranch
	Path       string `yaml:"path"`       // spec directory in the repository; {hostname} is substituted
	SecretFile string `yaml:"secretFile"` // HMAC secret (GitHub, Gitea, Forgejo) or GitLab token
	SSHKey     string `yaml:"sshKey"`     // private key for ssh remotes
	KnownHosts string `yaml:"knownHosts"` // known_hosts file for ssh remotes (required for them)
	TokenFile  string `yaml:"tokenFile"`  // optional password/token for https remotes
	Poll       string `yaml:"poll"`       // optional: also fetch on this interval, e.g. 5m
	// PollSpread spreads a fleet's polls over the interval: after each
	// start the first poll waits a random delay up to this long, and the
	// next ones follow every poll interval from there; default the poll
	// interval itself (so hosts started together fetch at evenly spread
	// moments, not in the same second), 0s to poll at once on start.
	PollSpread string `yaml:"pollSpread"`
	// Status sets the deployed commit's status on the forge: pending when
	// its deploy starts, then success or failure.
	Status *StatusConfig `yaml:"status"`
	// Drift checks, on an interval, that the host still is what the
	// applied commit says (a read-only plan: no lock, no change).
	Drift *DriftConfig `yaml:"drift"`
	// Verify deploys only commits signed by a key this host trusts; any
	// other commit is refused before it is checked out.
	Verify *VerifyConfig `yaml:"verify"`

	// Filled in by LoadConfig.
	SpecPath     string        `yaml:"-"` // Path with {hostname} substituted, slash-separated and clean
	PollInterval time.Duration `yaml:"-"`
	// PollDelay bounds the random delay of the first poll after a start.
	PollDelay time.Duration `yaml:"-"`
	Secret    Secret        `yaml:"-"`
	Token     Secret        `yaml:"-"`
	endpoint  *transport.Endpoint
	// DriftInterval is how often the host is checked for drift (0: never).
	DriftInterval time.Duration `yaml:"-"`
	Reconcile     bool          `yaml:"-"`
	forgeStatus   *statusTarget
	// trust is the keys a commit must be signed by (zero: no check).
	trust commitsig.Trust
}

// RegistryConfig lets a registry's push notifications update this host.
type RegistryConfig struct {
	// the bearer token the registry sends (its notifications.endpoints[].headers: Authorization: [Bearer TOKEN]); mode 0600, at least 16 bytes
	TokenFile string `yaml:"tokenFile"`

	// Filled in by LoadConfig.
	Token Secret `yaml:"-"`
}

// VerifyConfig is the repository's commit signature check.
type VerifyConfig struct {
	// AllowedSigners is an allowed-signers file in git's format
	// (gpg.ssh.allowedSignersFile; ssh-keygen(1) ALLOWED SIGNERS):
	// principals [namespaces="git",valid-after=…,valid-before=…] key.
	// Owned by root, mode 0644 or stricter. The commit to deploy must carry a good SSH
	// signature by one of its keys, valid for the namespace "git" at the
	// commit's date and now.
	AllowedSigners string `yaml:"allowedSigners"`
	// Keyring is an OpenPGP public keyring (gpg --export, armored or
	// binary), owned by root, mode 0644 or stricter: a commit with an
	// OpenPGP signature must be signed by one of its keys, neither revoked
	// nor expired. With both set, either kind of signature deploys.
	Keyring string `yaml:"keyring"`
}

// StatusConfig is where and how the commit status is set.
type StatusConfig struct {
	Forge string `yaml:"forge"` // github, gitea, forgejo or gitlab
	// API is the forge's API base URL: https://api.github.com (GitHub;
	// https://HOST/api/v3 for GitHub Enterprise), https://HOST/api/v1
	// (Gitea, Forgejo), https://HOST/api/v4 (GitLab). Default: from the
	// repository's URL host.
	API       string `yaml:"api"`
	Repo      string `yaml:"repo"`      // owner/name (GitLab: the project's path); default from the repository's URL
	TokenFile string `yaml:"tokenFile"` // an API token allowed to set commit statuses (mode 0600; never printed)
	Context   string `yaml:"context"`   // the status's name on the forge; default syslet/{hostname}
	// TargetURL is the status's link ({commit}, {repo} and {hostname} are
	// substituted); default none.
	TargetURL string            `yaml:"targetURL"`
	Timeout   settings.Duration `yaml:"timeout"`  // bound on one attempt; default 10s
	Attempts  int               `yaml:"attempts"` // tries per status, with backoff between them; default 3
}

// DriftConfig is the repository's drift check.
type DriftConfig struct {
	Interval string `yaml:"interval"` // how often, e.g. 10m (default DefaultDriftInterval; "off": never)
	// Reconcile deploys the applied commit again, replacing hand edits
	// (--force), when a check finds any unit differing. Off by default: a
	// check never changes the host on its own.
	Reconcile bool `yaml:"reconcile"`
}

// Secret holds a credential read from a file. It never prints itself, so a
// stray log line or status document cannot leak it.
type Secret struct{ b []byte }

func (s Secret) String() string                { return "(secret)" }
func (s Secret) Format(f fmt.State, verb rune) { io.WriteString(f, "(secret)") }
func (s Secret) MarshalJSON() ([]byte, error)  { return []byte(`"(secret)"`), nil }
func (s Secret) IsZero() bool                  { return len(s.b) == 0 }
func (s Secret) bytes() []byte                 { return s.b }

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

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// LoadConfig reads and validates the configuration file at path, substitutes
// hostname into each repository's path and reads every secret file. All
// problems are reported at once, each naming its field.
func LoadConfig(file, hostname string) (*Config, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return ParseConfig(file, raw, hostname)
}

// ParseConfig is LoadConfig for bytes already read; file names the source in errors.
func ParseConfig(file string, raw []byte, hostname string) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, file, err)
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
		if tok, err := readSecret(c.PageTokenFile); err != nil {
			add("pageTokenFile", "%v", err)
		} else if len(tok.b) < minSecretLen {
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
	}
}

// unjoin splits an errors.Join into its errors.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func (r *Repo) validateVerify(f func(string) string, add func(field, format string, args ...any)) {
	if r.Verify == nil {
		return
	}
	if r.Verify.AllowedSigners == "" && r.Verify.Keyring == "" {
		add(f("verify.allowedSigners"), "required when verify is set: an allowed-signers file in git's format (or verify.keyring, an OpenPGP public keyring)")
		return
	}
	var t commitsig.Trust
	if file := r.Verify.AllowedSigners; file != "" {
		if !path.IsAbs(file) {
			add(f("verify.allowedSigners"), "must be an absolute path, got %q", file)
		} else if s, err := commitsig.LoadAllowedSigners(file); err != nil {
			add(f("verify.allowedSigners"), "%v", err)
		} else {
			t.SSH = s
		}
	}
	if file := r.Verify.Keyring; file != "" {
		if !path.IsAbs(file) {
			add(f("verify.keyring"), "must be an absolute path, got %q", file)
		} else if k, err := commitsig.LoadKeyring(file); err != nil {
			add(f("verify.keyring"), "%v", err)
		} else {
			t.PGP = k
		}
	}
	r.trust = t
}

func (r *Repo) validateDrift(f func(string) string, add func(field, format string, args ...any)) {
	r.DriftInterval = DefaultDriftInterval
	if r.Drift == nil {
		return
	}
	r.Reconcile = r.Drift.Reconcile
	switch iv := r.Drift.Interval; iv {
	case "":
	case "off":
		r.DriftInterval = 0
		if r.Reconcile {
			add(f("drift.reconcile"), "needs a drift check (interval is off)")
		}
	default:
		d, err := time.ParseDuration(iv)
		switch {
		case err != nil:
			add(f("drift.interval"), "%q is not a duration like 30s or 10m (or off)", iv)
		case d < MinDriftInterval:
			add(f("drift.interval"), "%s is shorter than the minimum %s", d, MinDriftInterval)
		default:
			r.DriftInterval = d
		}
	}
}

func (r *Repo) validate(hostname string, f func(string) string, add func(field, format string, args ...any)) {
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

	if r.SecretFile == "" {
		if r.Poll == "" {
			add(f("secretFile"), "required unless poll is set (a repository needs signed webhooks, polling, or both)")
		}
	} else if s, err := readSecret(r.SecretFile); err != nil {
		add(f("secretFile"), "%v", err)
	} else if len(s.bytes()) < minSecretLen {
		add(f("secretFile"), "%s holds %d bytes; use at least %d (e.g. openssl rand -hex 32)", r.SecretFile, len(s.bytes()), minSecretLen)
	} else {
		r.Secret = s
	}

	ssh := r.endpoint != nil && r.endpoint.Protocol == "ssh"
	if ssh {
		if r.SSHKey == "" {
			add(f("sshKey"), "required for ssh remotes")
		} else if _, err := loadSigner(r.SSHKey); err != nil {
			add(f("sshKey"), "%v", err)
		}
		if r.KnownHosts == "" {
			add(f("knownHosts"), "required for ssh remotes: the remote's host key is never trusted on first use (ssh-keyscan HOST > FILE, then check it)")
		} else if db, err := knownhosts.NewDB(r.KnownHosts); err != nil {
			add(f("knownHosts"), "reading %s: %v", r.KnownHosts, err)
		} else if hp := hostPort(r.endpoint); len(db.HostKeyAlgorithms(hp)) == 0 {
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
		} else if s, err := readSecret(r.TokenFile); err != nil {
			add(f("tokenFile"), "%v", err)
		} else {
			r.Token = s
		}
	}
}

func hostPort(ep *transport.Endpoint) string {
	port := ep.Port
	if port == 0 {
		port = 22
	}
	return net.JoinHostPort(ep.Host, strconv.Itoa(port))
}

func readable(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	return f.Close()
}

// privateFile refuses a credential file that is not a regular file or that
// group or others may read (pkg/settings holds the rule).
func privateFile(file string) error { return settings.PrivateFile(file) }

func readSecret(file string) (Secret, error) {
	b, err := settings.ReadCredential(file)
	if err != nil {
		return Secret{}, err
	}
	return Secret{b: b}, nil
}

func loadSigner(file string) (ssh.Signer, error) {
	if err := privateFile(file); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	s, err := ssh.ParsePrivateKey(b)
	var pp *ssh.PassphraseMissingError
	if errors.As(err, &pp) {
		return nil, fmt.Errorf("%s is passphrase-protected; a daemon needs an unencrypted deploy key", file)
	}
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", file, err)
	}
	return s, nil
}
