package layout

import (
	"path/filepath"
	"strconv"
)

// syslet's own files, as absolute host paths like every other path of this
// package. Under a managed root other than "/" (tests, --root) each lives
// beneath it: Under(root, p).
const (
	// ConfigHome holds the operator's files: settings, the stored specs,
	// webhookd's configuration and secrets.
	ConfigHome = "/etc/syslet"
	// StoredSpecs is read when no source is given; an apply from stdin
	// stores the validated stream there (0600).
	StoredSpecs = "/etc/syslet/config.json"
	// Settings is syslet's own settings file (sshKeyPath, ageIdentityFiles).
	Settings = "/etc/syslet/syslet.json"
	// WebhookdConfig is webhookd's configuration file.
	WebhookdConfig = "/etc/syslet/webhookd.yaml"

	// StateHome holds what syslet keeps between runs (0700).
	StateHome = "/var/lib/syslet"
	// Journal is the run journal (JSON lines, 0600); it is rotated to
	// Journal + ".1".
	Journal = "/var/lib/syslet/runs.jsonl"
	// Generations holds the last good generations (0700): what a rollback
	// returns to.
	Generations = "/var/lib/syslet/generations"
	// Backups holds the exports of the volumes applies deleted or
	// recreated (0700, each file 0600): what syslet restore reads.
	Backups = "/var/lib/syslet/backups"
	// KeyCache is the append-only cache of age identities derived from
	// the SSH host keys this host had (0600).
	KeyCache = "/var/lib/syslet/key.txt"
	// WebhookdState holds webhookd's checkouts and last status.
	WebhookdState = "/var/lib/syslet/webhookd"
	// NotifyState is what syslet's own notifications remember between
	// runs (0600): the units the last drift check found differing (so a
	// drift is told once, when it appears) and the count of deliveries by
	// target and result (the textfile's counters).
	NotifyState = "/var/lib/syslet/notify-state.json"

	// RunHome holds what lives only while the host is up.
	RunHome = "/run/syslet"
	// LockFile is the apply lock: one apply at a time per host.
	LockFile = "/run/syslet/apply.lock"
	// NotifyLock serialises updates of NotifyState.
	NotifyLock = "/run/syslet/notify-state.lock"
)

// TestPauseFile is where an apply paused by the integration tests' hook
// (after step n) writes its pid.
func TestPauseFile(n int) string { return RunHome + "/test-paused-" + strconv.Itoa(n) }

// Under places a host path beneath a managed root: the one way syslet's
// own files and the trees it manages are found when the root is not "/".
func Under(root, p string) string { return filepath.Join(root, p) }

// The reverse proxy syslet runs for its start-first containers (package
// proxy says what it is): HAProxy from the host's package, under a unit
// of syslet's own, never Debian's haproxy.service.
const (
	// ProxyService is the proxy's unit, and ProxyUnit its file: a plain
	// systemd unit (quadlet has no kind for it).
	ProxyService = "syslet-proxy.service"
	ProxyUnit    = "/etc/systemd/system/syslet-proxy.service"
	// ProxyConfig is HAProxy's configuration, written by syslet alone.
	ProxyConfig = "/etc/syslet/proxy/haproxy.cfg"
	// ProxyState is HAProxy's server state file: saved by syslet after
	// every switch (and before every reload), read by HAProxy at every
	// start and reload, and by the plan for which slot is live.
	ProxyState = "/var/lib/syslet/proxy/server-state"
	// ProxySocket is HAProxy's runtime API (level admin, root only).
	ProxySocket = "/run/syslet-proxy/admin.sock"
	// ProxyPID is the HAProxy master's pid: whether the binary it runs
	// is still the one installed (an upgrade replaced it) is read there.
	ProxyPID = "/run/syslet-proxy/haproxy.pid"
	// ProxyBinary is HAProxy as Debian installs it.
	ProxyBinary = "/usr/sbin/haproxy"
)
