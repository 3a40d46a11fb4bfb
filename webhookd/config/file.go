package config

import (
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/syslet/syslet/pkg/calendar"
	"github.com/syslet/syslet/pkg/commitsig"
	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/notify"
	"github.com/syslet/syslet/pkg/settings"
)

// The configuration file's shape: every field a configuration may set,
// with its defaults. The comments of these fields are the configuration
// reference (webhookd(8) and docs/reference/webhookd.md are generated
// from this file); how each part is checked is in a file of its own.

// Defaults for fields the configuration may leave out.
const (
	DefaultPath     = layout.WebhookdConfig
	DefaultListen   = "127.0.0.1:9090"
	DefaultStateDir = layout.WebhookdState
	DefaultBranch   = "main"

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
	// Windows are the maintenance windows a new commit is applied in (a
	// push, a poll, a registry's push, a reconcile); outside them it waits,
	// the newest one queued, until the next opening. A deploy that starts
	// inside a window runs to its end. A drift check still runs at any
	// time. None: a commit is applied when it comes. `webhookd
	// --open-window` opens one for an emergency.
	Windows []WindowConfig `yaml:"windows"`

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
	forgeStatus   *StatusTarget
	// trust is the keys a commit must be signed by (zero: no check).
	trust commitsig.Trust
	// MaintenanceWindows are Windows read (none: always open).
	MaintenanceWindows []calendar.Window `yaml:"-"`
}

// WindowConfig is one maintenance window.
type WindowConfig struct {
	// Calendar is when the window opens, a calendar spec as systemd's
	// OnCalendar= reads it (systemd.time(7)), e.g. "Mon..Thu 02:00
	// Europe/Berlin"; without a time zone at its end it is read in the
	// host's local time. `systemd-analyze calendar SPEC` shows its next
	// openings.
	Calendar string `yaml:"calendar"`
	Duration string `yaml:"duration"` // how long it stays open from each opening, e.g. 3h
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
