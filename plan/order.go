package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/digest"
)

// sortActions puts actions in their one total order: by step; inside a
// step the filling of volumes first (Op.Fills), then by rank (resources
// before the containers that use them, reversed when stopping so
// containers stop first), then by op, target and unit. No order of map
// iteration or of input can change the result, so two plans of the same
// host and input are identical byte for byte.
func sortActions(as []Action) {
	slices.SortStableFunc(as, func(a, c Action) int {
		if a.Step != c.Step {
			return int(a.Step) - int(c.Step)
		}
		if f := a.Op.Fills(); f != c.Op.Fills() {
			// A volume is filled before anything of step 9 starts.
			if f {
				return -1
			}
			return 1
		}
		if a.rank != c.rank {
			if a.Step == StepStop {
				return int(c.rank) - int(a.rank)
			}
			return int(a.rank) - int(c.rank)
		}
		if a.Op != c.Op {
			return slices.Index(opOrder, a.Op) - slices.Index(opOrder, c.Op)
		}
		if a.Target != c.Target {
			return strings.Compare(a.Target, c.Target)
		}
		return strings.Compare(a.Unit, c.Unit)
	})
}

// opOrder orders the ops that share a step: a unit is removed before the
// directory of its config files.
var opOrder = []Op{OpPull, OpStop, OpWriteFile, OpWriteDir, OpCreateSecret, OpWriteUnit, OpLinkUnit, OpRemoveUnit, OpRemoveFile,
	OpRemoveSecret, OpDeleteVolume, OpDeleteNetwork, OpDeleteImage, OpDaemonReload, OpReload, OpCreateVolume, OpImportVolume, OpStart, OpRestart,
	OpAwaitReady, OpSwitch, OpDrain, OpStopSlot, OpRemoveSlot}

// contentDigest is how an action's content is recorded (the bare
// spelling of pkg/digest).
func contentDigest(b []byte) string { return digest.Of(b).Hex() }

// Digest identifies exactly what the plan would do: a sha256 over its
// actions in order, content by digest. Plans with the same digest make the
// same changes; the footer prints its first 12 hex digits and the run
// journal records it.
func (p *Plan) Digest() string {
	h := sha256.New()
	// Each action as a json.Encoder writes it (HTML escaped, one a line),
	// the form digests were always made of.
	var line []byte
	for i := range p.Actions {
		line = append(p.Actions[i].appendJSON(line[:0], true), '\n')
		h.Write(line)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ShortDigest is the plan digest as people see it.
func (p *Plan) ShortDigest() string { return p.Digest()[:12] }
