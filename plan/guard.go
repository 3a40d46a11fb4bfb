package plan

import (
	"fmt"
	"strings"
)

// MassRemoval is the removal guard's threshold: removing removed of the
// managed units syslet finds installed is a mass removal when it takes all
// of them, or more than half of them when there are more than four. Such a
// plan is far more often an upstream mistake (a truncated export, the
// wrong directory, an empty push) than an intent.
func MassRemoval(managed, removed int) bool {
	switch {
	case removed <= 0 || managed <= 0:
		return false
	case removed >= managed:
		return true
	}
	return managed > 4 && 2*removed > managed
}

// GuardRemovals refuses the plan when it is a mass removal (see
// MassRemoval), listing every unit that would go. The caller skips it when
// the operator asked for the removals (--allow-removals).
func (p *Plan) GuardRemovals() {
	managed := 0
	var gone []string
	for _, u := range p.Units {
		switch u.Effect {
		case EffectCreate, EffectIgnore:
			continue // not installed, or not syslet's
		case EffectRemove:
			gone = append(gone, u.FileName)
		}
		managed++
	}
	if !MassRemoval(managed, len(gone)) {
		return
	}
	p.Refusals = append(p.Refusals, Refusal{Unit: "removals", Message: fmt.Sprintf(
		"the plan removes %d of the %d managed units (%s); that looks like missing specs rather than an intent, so nothing is removed: pass --allow-removals to remove them",
		len(gone), managed, strings.Join(gone, ", "))})
}
