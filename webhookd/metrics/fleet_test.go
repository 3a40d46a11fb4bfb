package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/syslet/syslet/pkg/fleet"
	"github.com/syslet/syslet/webhookd/config"
)

// TestFleetSeries: the host's labels and its last attempt's commit, as
// Prometheus reads them.
func TestFleetSeries(t *testing.T) {
	m := New([]config.Repo{{Name: "infra"}, {Name: "apps"}}, nil, []string{"success", "failed"})
	m.SetLabels("infra", "canary1", fleet.Labels{"ring": "canary", "site": "fra"})
	m.SetLabels("apps", "canary1", nil)
	m.SetLastCommit("infra", "c0")
	m.SetLastCommit("infra", "c1")
	want := `# HELP webhookd_host_info ` + hostInfoOpts.Help + `
# TYPE webhookd_host_info gauge
webhookd_host_info{host="canary1",repo="apps"} 1
webhookd_host_info{host="canary1",repo="infra",ring="canary",site="fra"} 1
# HELP webhookd_last_deploy_commit_info 1 for the commit of the repository's last deploy attempt, whatever its result (one series per repository).
# TYPE webhookd_last_deploy_commit_info gauge
webhookd_last_deploy_commit_info{commit="c1",repo="infra"} 1
`
	if err := testutil.GatherAndCompare(m.Reg, strings.NewReader(want), "webhookd_host_info", "webhookd_last_deploy_commit_info"); err != nil {
		t.Fatal(err)
	}
}
