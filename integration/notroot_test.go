//go:build integration

package integration

// Issue 44's first hour, on a real host: a user who is not root is told
// that a command must run as root before it reads anything, in one line,
// and a command line mistake is said before that, with the command meant.

import (
	"strings"
	"testing"
)

func TestNotRootSaysSoFirst(t *testing.T) {
	t.Parallel()
	h := startWithSyslet(t)
	h.MustRun(t, "systemctl enable --now podman.socket")
	// A host that has run syslet: stored specs (0600), the run journal
	// and a kept generation (0700), a settings file with a notify target.
	h.MustRun(t, `echo '[{"apiVersion":"v1","type":"volume","name":"data","unit":{"Volume":{}}}]' | syslet --stdin --soak 0`)
	h.MustRun(t, `printf '{"notify":[{"type":"webhook","url":"http://127.0.0.1:9/hook"}]}\n' > /etc/syslet/syslet.json && chmod 600 /etc/syslet/syslet.json`)
	h.MustRun(t, "mkdir -p /srv/specs && cp /etc/syslet/config.json /srv/specs/data.json && chmod -R a+rX /srv/specs")
	const user = "setpriv --reuid=65534 --regid=65534 --clear-groups --reset-env "

	for _, cmd := range []string{
		"syslet", "syslet --diff", "syslet /srv/specs", "syslet apply /srv/specs", "syslet --diff /srv/specs",
		"syslet history", "syslet host-key", "syslet rollback", "syslet rollback --diff", "syslet notify-test",
	} {
		r := h.Run("cd /tmp && " + user + cmd + " < /srv/specs/data.json")
		lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
		if r.Code != 1 || r.Stdout != "" || len(lines) != 1 || !strings.Contains(lines[0], ": must run as root: ") {
			t.Errorf("as nobody, %s:\n%s", cmd, r)
		}
		for _, bad := range []string{"permission denied", "notifications are off"} {
			if strings.Contains(strings.ToLower(r.Stderr), bad) {
				t.Errorf("as nobody, %s says %q:\n%s", cmd, bad, r)
			}
		}
	}
	// What needs no root runs; a usage mistake comes first, with the
	// command meant.
	if r := h.Run("cd /tmp && " + user + "syslet validate /srv/specs"); !r.OK() {
		t.Errorf("as nobody, validate:\n%s", r)
	}
	for cmd, want := range map[string]string{
		"syslet plan /srv/specs":      "run: syslet --diff /srv/specs",
		"syslet --dry-run /srv/specs": "did you mean --diff?",
	} {
		if r := h.Run("cd /tmp && " + user + cmd); r.Code != 64 || !strings.Contains(r.Stderr, want) || strings.Contains(r.Stderr, "root") {
			t.Errorf("as nobody, %s: want exit 64 and %q:\n%s", cmd, want, r)
		}
	}
	// Nothing a user ran changed the host: the journal holds root's one run.
	if got := h.MustRun(t, "syslet history --output json | grep -c '\"run\":' || true"); strings.TrimSpace(got) != "1" {
		t.Errorf("runs in the journal after the user's tries: %s", got)
	}
}
