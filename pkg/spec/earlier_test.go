package spec_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
)

// TestEarlierSysletForms: what the earlier syslet's documentation, examples
// and tests show it accepting decodes, with one warning at the JSON path of
// what it was lenient about, and means what it meant there. Each case
// checks the decoded spec too, not only the warning.
func TestEarlierSysletForms(t *testing.T) {
	dirs := func(mountPath string) string {
		return `{"apiVersion": "v1", "type": "container", "name": "web",
			"configDirs": [{"mountPath": "` + mountPath + `", "files": [{"name": "a.conf", "content": "a"}]}],
			"unit": {"Container": {` + img + `}, "Service": {"ExecReload": "/bin/true"}}}`
	}
	tests := []struct {
		name, data, path, rule string
		check                  func(t *testing.T, s *spec.Spec)
	}{
		// Its how-to and container reference write "/etc/nginx/conf.d/".
		{"config dir with a trailing slash", dirs("/etc/nginx/conf.d/"), "[0].configDirs[0].mountPath", spec.RuleMountPath,
			func(t *testing.T, s *spec.Spec) {
				if got := s.ConfigDirs[0].MountPath; got != "/etc/nginx/conf.d" {
					t.Errorf("mountPath %q, want it cleaned", got)
				}
			}},
		{"config dir with two trailing slashes", dirs("/etc/nginx/conf.d//"), "[0].configDirs[0].mountPath", spec.RuleMountPath,
			func(t *testing.T, s *spec.Spec) {
				if got := s.ConfigDirs[0].MountPath; got != "/etc/nginx/conf.d" {
					t.Errorf("mountPath %q, want it cleaned", got)
				}
			}},
		// Its loader reads desiredState in any case.
		{"desiredState Running", container("c", "", `"desiredState": "Running"`), "[0].desiredState", spec.RuleEnum,
			func(t *testing.T, s *spec.Spec) { wantState(t, s, spec.Running) }},
		{"desiredState STOPPED", container("c", "", `"desiredState": "STOPPED"`), "[0].desiredState", spec.RuleEnum,
			func(t *testing.T, s *spec.Spec) { wantState(t, s, spec.Stopped) }},
		{"desiredState Oneshot", container("c", "", `"desiredState": "Oneshot"`), "[0].desiredState", spec.RuleEnum,
			func(t *testing.T, s *spec.Spec) { wantState(t, s, spec.Oneshot) }},
		// Older releases took a volume or network without unit.
		{"volume without unit", `{"apiVersion": "v1", "type": "volume", "name": "v"}`, "[0].unit", spec.RuleRequired,
			func(t *testing.T, s *spec.Spec) {
				if s.Kind != spec.Volume || len(s.Unit) != 0 || s.ReclaimPolicy != spec.Delete {
					t.Errorf("want an empty volume unit with the defaults: %v", s)
				}
			}},
		{"network without unit", `{"apiVersion": "v1", "type": "network", "name": "n", "reclaimPolicy": "Retain"}`, "[0].unit", spec.RuleRequired,
			func(t *testing.T, s *spec.Spec) {
				if s.Kind != spec.Network || len(s.Unit) != 0 || s.ReclaimPolicy != spec.Retain {
					t.Errorf("want an empty network unit: %v", s)
				}
			}},
		// It overwrote Type for a oneshot, Restart and WantedBy for a
		// running container (render overwrites them; see render's tests).
		{"oneshot with Type=notify", `{"apiVersion": "v1", "type": "container", "name": "job", "desiredState": "oneshot",
			"unit": {"Container": {` + img + `}, "Service": {"Type": "notify"}}}`, "[0].unit.Service.Type", spec.RuleForcedKey,
			func(t *testing.T, s *spec.Spec) { wantState(t, s, spec.Oneshot) }},
		{"running with Restart=on-failure", `{"apiVersion": "v1", "type": "container", "name": "web",
			"unit": {"Container": {` + img + `}, "Service": {"Restart": "on-failure"}}}`, "[0].unit.Service.Restart", spec.RuleForcedKey, nil},
		{"running with WantedBy=multi-user.target", `{"apiVersion": "v1", "type": "container", "name": "web",
			"unit": {"Container": {` + img + `}, "Install": {"WantedBy": "multi-user.target"}}}`, "[0].unit.Install.WantedBy", spec.RuleForcedKey, nil},
		// Its reference: "Network: name; the value is ignored".
		{"network map value", container("c", `"Network": {"host": "ignored"}`, ""), "[0].unit.Container.Network.host", spec.RuleMapValueIgnored,
			func(t *testing.T, s *spec.Spec) {
				if got := s.Values("Container", "Network"); len(got) != 1 || got[0].Text != "host" {
					t.Errorf("Network lines %v, want the key alone", got)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, rep := decode(t, tt.data)
			if rep.HasErrors() || len(rep.Findings) != 1 {
				t.Fatalf("want exactly one warning, got:\n%s", rep.String())
			}
			f := rep.Findings[0]
			if f.Severity != report.Warning || f.Path != tt.path || f.Rule != tt.rule {
				t.Errorf("got %s %s %s, want warning %s %s (%s)", f.Severity, f.Path, f.Rule, tt.path, tt.rule, f.Message)
			}
			strict := rep
			strict.Findings = slices.Clone(rep.Findings)
			strict.Strict()
			if !strict.HasErrors() {
				t.Errorf("--strict does not refuse it")
			}
			if tt.check != nil {
				tt.check(t, specs[0])
			}
		})
	}
}

func wantState(t *testing.T, s *spec.Spec, want spec.State) {
	t.Helper()
	if s.DesiredState != want {
		t.Errorf("desiredState %q, want %q", s.DesiredState, want)
	}
}

// TestEarlierSysletRefusals: what the earlier syslet refused stays refused
// (an empty Mask map value, its unit-options.md says), and leniency stops
// where the earlier tool's did: a trailing slash only on config dirs, the
// forced keys only for the states it forced them in.
func TestEarlierSysletRefusals(t *testing.T) {
	tests := []struct {
		name, data, path, rule string
	}{
		{"empty mask value", container("c", `"Mask": {"/proc/kcore": ""}`, ""), `[0].unit.Container.Mask["/proc/kcore"]`, spec.RuleMapValue},
		{"config file with a trailing slash", container("c", "", `"configFiles": [{"mountPath": "/etc/app.conf/", "content": "x"}]`),
			"[0].configFiles[0].mountPath", spec.RuleMountPath},
		{"config dir unclean inside", `{"apiVersion": "v1", "type": "container", "name": "web",
			"configDirs": [{"mountPath": "/etc//conf.d/", "files": []}], "unit": {"Container": {` + img + `}, "Service": {"ExecReload": "/bin/true"}}}`,
			"[0].configDirs[0].mountPath", spec.RuleMountPath},
		{"config dir root", `{"apiVersion": "v1", "type": "container", "name": "web",
			"configDirs": [{"mountPath": "//", "files": []}], "unit": {"Container": {` + img + `}, "Service": {"ExecReload": "/bin/true"}}}`,
			"[0].configDirs[0].mountPath", spec.RuleMountPath},
		{"desiredState unknown in any case", container("c", "", `"desiredState": "Paused"`), "[0].desiredState", spec.RuleEnum},
		{"running with Type=oneshot", `{"apiVersion": "v1", "type": "container", "name": "web",
			"unit": {"Container": {` + img + `}, "Service": {"Type": "oneshot"}}}`, "[0].unit.Service.Type", spec.RuleStateConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, rep := decode(t, tt.data)
			errs := slices.DeleteFunc(slices.Clone(rep.Findings), func(f report.Finding) bool { return f.Severity != report.Error })
			if len(errs) != 1 || errs[0].Path != tt.path || errs[0].Rule != tt.rule {
				t.Fatalf("want one %s error at %s, got:\n%s", tt.rule, tt.path, rep.String())
			}
		})
	}
	// Neither a stopped container's Restart= nor its WantedBy= is forced:
	// the earlier syslet left them as written.
	decodeOK(t, `{"apiVersion": "v1", "type": "container", "name": "web", "desiredState": "stopped",
		"unit": {"Container": {`+img+`}, "Service": {"Restart": "on-failure"}, "Install": {"WantedBy": "multi-user.target"}}}`)
	// The forced values themselves are no warning.
	decodeOK(t, `{"apiVersion": "v1", "type": "container", "name": "web",
		"unit": {"Container": {`+img+`}, "Service": {"Restart": "always"}, "Install": {"WantedBy": "multi-user.target default.target"}}}`)
	specs := decodeOK(t, `{"apiVersion": "v1", "type": "container", "name": "web", "removalAllowed": false, "unit": {"Container": {`+img+`}}}
		{"apiVersion": "v1", "type": "volume", "name": "v", "unit": {}}`)
	if !specs[0].RemovalAllowedSet || specs[0].RemovalAllowed || specs[1].RemovalAllowedSet || !specs[1].RemovalAllowed {
		t.Errorf("removalAllowed written / defaulted: %+v %+v", specs[0], specs[1])
	}
	if _, rep := decode(t, container("c", `"Mask": {"/proc/kcore": ""}`, "")); !strings.Contains(rep.String(), "path: path") {
		t.Errorf("the Mask refusal does not say what a map entry needs: %s", rep.String())
	}
}
