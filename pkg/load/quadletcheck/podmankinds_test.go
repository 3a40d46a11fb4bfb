package quadletcheck

import (
	"testing"

	"github.com/containers/podman/v5/pkg/systemd/quadlet"

	"github.com/syslet/syslet/pkg/unit"
)

// TestPodmanKinds: every kind of the kind table has podman's converter,
// and podman's generator reads its files.
func TestPodmanKinds(t *testing.T) {
	for _, k := range unit.Kinds {
		if p, ok := podmanKinds[k.Name]; !ok || p.convert == nil {
			t.Errorf("%s: no converter of podman's for it", k.Ext())
		}
		if _, ok := quadlet.SupportedExtensions[k.Ext()]; !ok {
			t.Errorf("%s: podman's generator does not read it", k.Ext())
		}
	}
	if len(podmanKinds) != len(unit.Kinds) {
		t.Errorf("%d converters for %d kinds", len(podmanKinds), len(unit.Kinds))
	}
}
