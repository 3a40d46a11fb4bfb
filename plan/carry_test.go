package plan_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/syslet/syslet/plan"
)

// labelled is the base set with volume data's options changed (a
// recreate), and more of its spec edited as extra says.
func labelled(t *testing.T, extra ...string) string {
	return edit(t, append([]string{`"name":"data","reclaimPolicy":"Delete","unit":{}}`, `"name":"data","reclaimPolicy":"Delete","unit":{"Volume":{"Label":"x=1"}}}`}, extra...)...)
}

// A volume recreated for a changed option carries its data over: the
// import names no backup (the export the run takes), and the plan says so.
func TestARecreatedVolumeCarriesItsDataOver(t *testing.T) {
	h := install(t, renderStream(t, base))
	p := plan.Build(renderStream(t, labelled(t)), h.obs, plan.Options{})
	if !p.CarriesOver("data") {
		t.Fatalf("no carry-over: %q", actions(p))
	}
	for _, a := range p.Actions {
		if a.Op == plan.OpCreateVolume && a.Data().Service != "data-volume.service" {
			t.Errorf("the volume is not created through its service: %+v", a)
		}
	}
	if slices.Contains(actions(p), "start data-volume.service") {
		t.Errorf("the volume's service starts after its import: %q", actions(p))
	}
}

// Where the data goes anyway (--no-backup, or the spec's backup false),
// there is nothing to carry: the volume's service creates it, empty.
func TestARecreateWithoutBackupCarriesNothing(t *testing.T) {
	h := install(t, renderStream(t, base))
	p := plan.Build(renderStream(t, labelled(t)), h.obs, plan.Options{NoBackups: true})
	if p.CarriesOver("data") || !slices.Contains(actions(p), "start data-volume.service") || !p.NoBackups {
		t.Errorf("--no-backup: %q", actions(p))
	}
	noBackup := edit(t, `"name":"data","reclaimPolicy":"Delete","unit":{}}`, `"name":"data","reclaimPolicy":"Delete","backup":false,"unit":{}}`)
	h = install(t, renderStream(t, noBackup))
	p = plan.Build(renderStream(t, strings.Replace(noBackup, `"backup":false,"unit":{}}`, `"backup":false,"unit":{"Volume":{"Label":"x=1"}}}`, 1)), h.obs, plan.Options{})
	if p.CarriesOver("data") || !slices.Contains(actions(p), "start data-volume.service") {
		t.Errorf("backup false: %q", actions(p))
	}
}

// A volume of a driver podman cannot import into is refused: recreating
// it would leave it empty, which only --no-backup allows.
func TestARecreateOfAnotherDriverNeedsNoBackup(t *testing.T) {
	driven := edit(t, `"name":"data","reclaimPolicy":"Delete","unit":{}}`, `"name":"data","reclaimPolicy":"Delete","unit":{"Volume":{"Driver":"image","Image":"registry.example/data:1"}}}`)
	h := install(t, renderStream(t, driven))
	changed := strings.Replace(driven, `"Driver":"image"`, `"Label":"x=1","Driver":"image"`, 1)
	p := plan.Build(renderStream(t, changed), h.obs, plan.Options{})
	if p.Appliable() || !strings.Contains(p.Refusals[0].Message, "driver image") || !strings.Contains(p.Refusals[0].Message, "--no-backup") {
		t.Fatalf("want a refusal naming the driver and --no-backup, got %+v, actions %q", p.Refusals, actions(p))
	}
	if p := plan.Build(renderStream(t, changed), h.obs, plan.Options{NoBackups: true}); !p.Appliable() || p.CarriesOver("data") {
		t.Errorf("with --no-backup: refusals %+v, actions %q", p.Refusals, actions(p))
	}
}
