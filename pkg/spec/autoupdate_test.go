package spec_test

import (
	"strings"
	"testing"

	"github.com/syslet/syslet/pkg/spec"
)

// AutoUpdate= is podman's own update, outside syslet's gate: a warning
// naming syslet update, wherever the spec sets it.
func TestAutoUpdateWarns(t *testing.T) {
	for name, in := range map[string]string{
		"unit":     container("web", `"AutoUpdate": "registry"`, ""),
		"drop-in":  container("web", "", `"dropIns": {"10-up.conf": {"Container": {"AutoUpdate": "local"}}}`),
		"kube":     `{"apiVersion": "v1", "type": "kube", "name": "k", "yaml": "a: b", "unit": {"Kube": {"AutoUpdate": "registry"}}}`,
		"instance": container("web", "", `"instances": [{"name": "1", "dropIns": {"up.conf": {"Container": {"AutoUpdate": "registry"}}}}]`),
	} {
		t.Run(name, func(t *testing.T) {
			_, rep := decode(t, in)
			if rep.HasErrors() || len(rep.Findings) != 1 {
				t.Fatalf("want one warning, got:\n%s", rep.String())
			}
			f := rep.Findings[0]
			if f.Rule != spec.RuleAutoUpdate || f.Severity != "warning" || !strings.Contains(f.Message, "syslet update") || !strings.Contains(f.Message, "AutoUpdate") {
				t.Fatalf("got %+v", f)
			}
			if !strings.Contains(f.Path, "AutoUpdate") {
				t.Errorf("the finding must point at the key, got path %q", f.Path)
			}
		})
	}
}
