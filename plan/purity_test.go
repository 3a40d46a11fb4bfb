package plan_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPure fails when render or plan reach for the host. Both must stay
// pure so that a plan can be computed, tested and reviewed with nothing
// but the observed facts: no os, net or os/exec in their own imports, and
// no host adapter (or the podman and systemd clients behind them) anywhere
// in what they link.
func TestPure(t *testing.T) {
	pkgs := []string{"github.com/syslet/syslet/render", "github.com/syslet/syslet/plan"}
	direct := []string{"os", "os/exec", "net", "net/http", "syscall", "io/fs"}
	linked := []string{"net", "os/exec", "net/http",
		"github.com/syslet/syslet/pkg/host/", "github.com/syslet/syslet/executor",
		"github.com/containers/podman/", "github.com/coreos/go-systemd/"}
	for _, p := range pkgs {
		out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, p).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", p, err)
		}
		for _, imp := range strings.Fields(string(out)) {
			for _, bad := range direct {
				if imp == bad {
					t.Errorf("%s imports %s; it must stay pure", p, imp)
				}
			}
		}
		out, err = exec.Command("go", "list", "-deps", p).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", p, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, bad := range linked {
				if dep == bad || (strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad)) {
					t.Errorf("%s links %s; host access belongs behind plan's reader interfaces", p, dep)
				}
			}
		}
	}
}
