package plan

import (
	"testing"

	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// TestEveryKindIsPlanned: what the plan does for a kind comes from its
// row of the kind table; each row must give it an op where it needs one
// (deleting the object a change recreates or a removal reclaims).
func TestEveryKindIsPlanned(t *testing.T) {
	for _, k := range unit.Kinds {
		reclaims := spec.Kind(k.Name).Accepts("reclaimPolicy")
		if (k.OnChange == unit.ChangeRecreate || reclaims) && deleteOp[k.Object] == "" {
			t.Errorf("%s: nothing deletes its podman %s", k.Name, k.Object)
		}
		if reclaims && len(k.ObjectKeys) == 0 {
			t.Errorf("%s: has a reclaimPolicy but no key names its object", k.Name)
		}
		if k.Runs() != runs(spec.Kind(k.Name)) {
			t.Errorf("%s: runs() disagrees with the table", k.Name)
		}
	}
}
