package plan

import (
	"fmt"
	"strings"

	"github.com/syslet/syslet/pkg/digest"
	"github.com/syslet/syslet/pkg/filemode"
	"github.com/syslet/syslet/pkg/host"
	"github.com/syslet/syslet/pkg/redact"
)

// The one redaction rule of every diff a plan shows — a config file's, a
// config dir file's, a drifted file's or unit's, a unit's key changes —
// in text and JSON alike (pkg/redact): the content of a change is hidden
// when either side's mode is not world-readable, only described (mode,
// size, digest), since such files hold passwords and keys and plans end
// up in CI logs and terminals; and a line that names a credential
// (DB_PASSWORD=, --token, api-key:) is shown only up to that name.

// maxShown bounds the content a diff shows: a larger file (on the host,
// one read by digest only) is described, never diffed.
const maxShown = 1 << 20

// fileDiff is the diff a plan shows for one file: old is the host's (when
// existed), new the spec's content with its mode (when exists).
func fileDiff(p string, old host.File, existed bool, newMode uint32, new []byte, exists bool) string {
	oldMode := uint32(old.Mode.Perm())
	oldDesc := func() string {
		if !old.Mode.IsRegular() {
			return fmt.Sprintf("%s, mode %04o", filemode.Describe(old.Mode), oldMode)
		}
		return redact.HiddenSum(oldMode, old.Length(), old.Digest())
	}
	newDesc := func() string { return redact.HiddenSum(newMode, int64(len(new)), digest.Of(new)) }
	describe := func(why string) string {
		switch {
		case !existed:
			return fmt.Sprintf("(%s: %s)\n", why, newDesc())
		case !exists:
			return fmt.Sprintf("(%s: %s)\n", why, oldDesc())
		}
		return fmt.Sprintf("(%s: %s → %s)\n", why, oldDesc(), newDesc())
	}
	switch {
	case (existed && redact.Private(oldMode)) || (exists && redact.Private(newMode)):
		return describe("content hidden")
	case existed && !old.Mode.IsRegular():
		return describe("not a regular file")
	case (existed && old.Length() > maxShown) || (exists && len(new) > maxShown):
		return describe("content not shown")
	}
	var o, n []byte
	if existed {
		o = old.Data
	}
	if exists {
		n = new
	}
	return redact.DiffLines(unifiedDiff(p, o, n))
}

// unitDiff is fileDiff of a unit file: the installed one (with its mode,
// which an operator may have made private) against what syslet writes.
func unitDiff(files map[string]host.File, iu *installedUnit, want []byte) string {
	return fileDiff(iu.path, files[iu.path], true, 0o644, want, want != nil)
}

// redactKeys applies the rule to a unit's key changes: every value is
// hidden when the installed unit is private, and a value that follows a
// credential's name is hidden from it on. It runs when the plan is done,
// after the planner has read the keys.
func redactKeys(ks []KeyChange, private bool, mode uint32) {
	hide := func(v string) string {
		if v == "" {
			return v
		}
		if private {
			return fmt.Sprintf("(content hidden: the installed unit has mode %04o)", mode)
		}
		return v
	}
	for i := range ks {
		k := &ks[i]
		k.Old, k.New = hide(k.Old), hide(k.New)
		for _, v := range []*string{&k.Old, &k.New} {
			if *v == "" || private {
				continue
			}
			if masked, ok := redact.Credential(k.Key + "=" + *v); ok {
				*v = strings.TrimPrefix(masked, k.Key+"=")
			}
		}
	}
}
