package spec_test

import (
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
)

// withService is a container spec with the given [Service] keys.
func withService(keys string) string {
	return `{"apiVersion": "v1", "type": "container", "name": "c", "unit": {"Container": {` + img + `}, "Service": {` + keys + `}}}`
}

// TestSystemdKeys: a key of systemd's own sections that no supported
// systemd knows is refused at its JSON path with the key it is a typo of
// (the host would only warn, and staging refuse, after the whole plan was
// printed); a key newer than the oldest supported systemd is a warning
// naming the release; the user's own X- keys and systemd's older
// spellings pass.
func TestSystemdKeys(t *testing.T) {
	tests := []struct {
		name, data string
		severity   report.Severity // "" for no finding
		path, rule string
		says       string
	}{
		{"typo in Service", withService(`"TimeoutStarSec": "60"`), report.Error,
			"[0].unit.Service.TimeoutStarSec", spec.RuleUnknownKey, "systemd does not know key TimeoutStarSec in [Service]: did you mean TimeoutStartSec?"},
		{"typo in Unit", `{"apiVersion": "v1", "type": "volume", "name": "v", "unit": {"Unit": {"Descripton": "x"}}}`, report.Error,
			"[0].unit.Unit.Descripton", spec.RuleUnknownKey, "did you mean Description?"},
		{"typo in Install", `{"apiVersion": "v1", "type": "container", "name": "c", "unit": {"Container": {` + img + `}, "Install": {"WanteBy": "x.target"}}}`, report.Error,
			"[0].unit.Install.WanteBy", spec.RuleUnknownKey, "did you mean WantedBy?"},
		{"no near key", withService(`"Frobnicate": "1"`), report.Error,
			"[0].unit.Service.Frobnicate", spec.RuleUnknownKey, "systemd does not know key Frobnicate in [Service]"},
		{"quadlet typo suggested too", container("c", `"PublishPor": "80"`, ""), report.Error,
			"[0].unit.Container.PublishPor", spec.RuleUnknownKey, "did you mean PublishPort?"},
		{"exec and kill and resource keys", withService(`"KillMode": "mixed", "MemoryMax": "1G", "LimitNOFILE": "4096", "TimeoutStartSec": "60"`), "", "", "", ""},
		{"older spelling", withService(`"StartLimitInterval": "10"`), "", "", "", ""},
		{"user key", withService(`"X-Team": "shop"`), "", "", "", ""},
		{"newer systemd", withService(`"ExecReloadPost": "/bin/true"`), report.Warning,
			"[0].unit.Service.ExecReloadPost", spec.RuleNewerSystemd, "needs systemd 259 or later: systemd 257"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, rep := decode(t, tt.data)
			if tt.severity == "" {
				if len(rep.Findings) > 0 {
					t.Fatalf("want no finding, got:\n%s", rep.String())
				}
				return
			}
			if len(rep.Findings) != 1 {
				t.Fatalf("want 1 finding, got:\n%s", rep.String())
			}
			f := rep.Findings[0]
			if f.Severity != tt.severity || f.Path != tt.path || f.Rule != tt.rule || !strings.Contains(f.Message, tt.says) {
				t.Errorf("got %s %s %s %q, want %s %s %s saying %q", f.Severity, f.Path, f.Rule, f.Message, tt.severity, tt.path, tt.rule, tt.says)
			}
		})
	}
}
