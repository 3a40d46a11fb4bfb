package plan

import (
	"fmt"

	"github.com/syslet/syslet/pkg/redact"
)

// fileDiff is the diff a plan shows for one file. The content of a file
// that is not world-readable on either side — before or after — is never
// shown, only described (mode, size, digest): such files hold passwords
// and keys, and plans end up in CI logs and terminals.
func fileDiff(p string, oldMode uint32, old []byte, existed bool, newMode uint32, new []byte, exists bool) string {
	if (existed && redact.Private(oldMode)) || (exists && redact.Private(newMode)) {
		switch {
		case !existed:
			return fmt.Sprintf("(content hidden: %s)\n", redact.Hidden(newMode, new))
		case !exists:
			return fmt.Sprintf("(content hidden: %s)\n", redact.Hidden(oldMode, old))
		}
		return fmt.Sprintf("(content hidden: %s → %s)\n", redact.Hidden(oldMode, old), redact.Hidden(newMode, new))
	}
	if !existed {
		old = nil
	}
	if !exists {
		new = nil
	}
	return unifiedDiff(p, old, new)
}
