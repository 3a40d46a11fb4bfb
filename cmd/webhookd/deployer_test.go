package main

import (
	"testing"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/webhookd/queue"
)

// TestFindingsNameTheRepositoryPath: a finding names its file by its path
// in the repository, as the pusher knows it, not in webhookd's checkout;
// one of no file, or of a file outside the spec directory, keeps its name.
func TestFindingsNameTheRepositoryPath(t *testing.T) {
	req := queue.DeployRequest{Dir: "/var/lib/webhookd/infra/checkout/hosts/web1", SpecPath: "hosts/web1"}
	in := []report.Finding{
		{Source: "/var/lib/webhookd/infra/checkout/hosts/web1/web.json"},
		{Source: "/var/lib/webhookd/infra/checkout/hosts/web1/db/db.json"},
		{Source: ""},
		{Source: "/etc/containers/systemd/web.container"},
		{Source: "web.container"},
	}
	got := inRepo(in, req)
	for i, want := range []string{"hosts/web1/web.json", "hosts/web1/db/db.json", "", "/etc/containers/systemd/web.container", "web.container"} {
		if got[i].Source != want {
			t.Errorf("%q: named %q; want %q", in[i].Source, got[i].Source, want)
		}
	}
	if in[0].Source == got[0].Source {
		t.Error("inRepo changed the findings it was given")
	}
}
