//go:build integration

package integration

// Issue 57's acceptance for labels and threshold promotion: hosts carry
// labels in the config repository (hosts/<host>/labels) and in webhookd's
// metrics; `syslet push --select` picks push targets by them, and
// `syslet wait-status --select --min-success` promotes a ring on a
// threshold, read from the forge's statuses or from a real Prometheus
// scraping the hosts' webhookd.

import (
	"strings"
	"testing"

	"github.com/syslet/syslet/integration/testhost"
	hostlabels "github.com/syslet/syslet/pkg/fleet"
)

// TestPushSelect: four hosts with labels; push --select role=web,site=fra
// applies on the two that carry both, and the other two see no SSH login
// at all (their sshd logs nothing since the push began).
func TestPushSelect(t *testing.T) {
	t.Parallel()
	hosts := []struct {
		name, labels string
		picked       bool
	}{
		{"web1", "role=web\nsite=fra\nring=canary\n", true},
		{"web2", "# the second web host in Frankfurt\nrole=web\nsite=fra\n", true},
		{"web3", "role=web\nsite=ams\n", false},
		{"db1", "role=db\nsite=fra\n", false},
	}
	hs := testhost.StartN(t, len(hosts))
	parallel(t, len(hosts), func(i int) error {
		if err := hs[i].CopyIn(sysletBin, "/usr/local/bin/syslet"); err != nil {
			return err
		}
		_, err := runErr(hs[i], "systemctl enable --now podman.socket")
		return err
	})
	e := newPushEnv(t)
	e.writeSpecs("hosts/common", map[string]string{"net.json": sharedNetwork})
	curs := make([]string, len(hosts))
	for i, h := range hosts {
		e.addHost(h.name, hs[i].Port())
		e.trust(hs[i], hostKey(t, hs[i]))
		e.writeSpecs("hosts/"+h.name, map[string]string{"app.json": sleeper("app-" + h.name), "labels": h.labels})
		curs[i] = verboseSSHD(t, hs[i])
	}

	r := e.push("--hosts-dir", "hosts", "--select", "role=web,site=fra")
	t.Logf("push --select role=web,site=fra (exit %d):\n%s", r.code, r)
	if r.code != 0 {
		t.Fatalf("exit %d; want 0", r.code)
	}
	mustContain(t, "selection", r.stderr, "syslet push: --select role=web,site=fra: 2 of 4 host(s): web1, web2")
	mustContain(t, "summary", r.stdout, "2 host(s): 2 applied")
	for i, h := range hosts {
		log := sshdLog(t, hs[i], curs[i])
		active := hs[i].Run("systemctl is-active app-" + h.name + ".service").OK()
		ls, err := hostlabels.ParseLabels(h.name, []byte(h.labels))
		must(t, err)
		t.Logf("%s (%s): picked %v, app active %v, logins %d", h.name, ls, h.picked, active, strings.Count(log, "Accepted publickey"))
		if h.picked {
			mustContain(t, h.name+"'s sshd log", log, "Accepted publickey for root")
			if !active {
				t.Errorf("%s: app-%s.service is not active after the push", h.name, h.name)
			}
			continue
		}
		if strings.Contains(log, "Accepted publickey") || strings.Contains(log, "Connection from") {
			t.Errorf("%s was not selected, but its sshd saw a connection:\n%s", h.name, log)
		}
		if active || hs[i].Run("test -e /etc/containers/systemd/app-"+h.name+".container").OK() {
			t.Errorf("%s was not selected, but its app was deployed", h.name)
		}
	}
}
