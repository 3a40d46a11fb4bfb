package quadletcheck

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/containers/podman/v5/pkg/systemd/parser"
	"github.com/containers/podman/v5/pkg/systemd/quadlet"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// gate reports each quadlet key the target release does not know, and each
// value an older generator reads differently (unit.Features), once per key
// or feature, at its first line. Keys and features newer than the linked
// converter (but known to the target) are withheld from the converter, which
// would call them unknown or refuse them; the host's generator judges them
// at staging.
//
// With hint, the finding says how to check against a newer podman: the
// earlier syslet required podman 6, so its users' specs use keys (BuildArg=)
// that the default release here predates.
func gate(rep *report.Report, c *checked, target unit.Podman, quiet, hint bool) {
	// What was told already, by feature or section and key: allocated
	// only for a unit that has something to tell, as almost no unit does.
	var seen map[string]bool
	first := func(id string) bool {
		if seen == nil {
			seen = map[string]bool{}
		}
		if seen[id] {
			return false
		}
		seen[id] = true
		return true
	}
	lines := c.Lines
	if c.Instance != "" {
		lines = nil
		for _, d := range c.DropIns {
			lines = append(lines, d.Lines...)
		}
	}
	newer := func(since unit.Podman) string {
		if !hint {
			return ""
		}
		return fmt.Sprintf(": if the host runs podman %s or later, say so with --podman (syslet validate --podman %s)", since, since)
	}
	// A unit type a release does not have is told once, for the unit, by
	// the release its type section's keys came with.
	if k := unit.KindOf(c.FileName); k != nil {
		if since, ok := unit.KeySince(k.Section, k.TypeKey); ok && target.Less(since) {
			c.gated = true
			if !quiet {
				rep.Errorf(c.Spec.Source, c.Spec.Path()+".type", spec.RuleNewerPodman,
					"%s units need podman %s or later; these specs are checked against podman %s%s", path.Ext(c.FileName), since, target, newer(since))
			}
			return
		}
	}
	for _, l := range lines {
		for _, f := range unit.Features {
			if l.Section != f.Section || !slices.Contains(f.Keys, l.Key) || !f.Matches(l.Value) || (f.Unless != "" && hasKey(c.Lines, f.Section, f.Unless)) {
				continue
			}
			if !target.Less(f.Since) {
				// A feature the target has and the linked converter lacks
				// (it would refuse the line): the host's generator judges it.
				if Converter.Less(f.Since) {
					c.more().withheld = append(c.more().withheld, l.Section+"."+l.Key)
				}
				continue
			}
			if !first("feature " + f.What) {
				continue
			}
			c.gated = true
			if !quiet {
				rep.Errorf(c.Spec.Source, l.Origin, spec.RuleNewerPodman,
					"[%s] %s=%s: %s needs podman %s or later; these specs are checked against podman %s (for older podman: %s%s)%s",
					l.Section, l.Key, l.Value, f.What, f.Since, target, f.Instead, servicesOf(l), newer(f.Since))
			}
		}
		if !unit.QuadletSection(l.Section) {
			continue
		}
		since, ok := unit.KeySince(l.Section, l.Key)
		if !ok || (!target.Less(since) && !Converter.Less(since)) {
			continue // unknown keys are refused when specs are decoded; known ones pass
		}
		if !first(l.Section + "." + l.Key) {
			continue
		}
		switch {
		case target.Less(since):
			c.gated = true
			if !quiet {
				rep.Errorf(c.Spec.Source, l.Origin, spec.RuleNewerPodman,
					"[%s] %s needs podman %s or later; these specs are checked against podman %s%s", l.Section, l.Key, since, target, newer(since))
			}
		default:
			c.more().withheld = append(c.more().withheld, l.Section+"."+l.Key)
		}
	}
}

// hasKey reports whether lines set key in section.
func hasKey(lines []render.Line, section, key string) bool {
	return slices.ContainsFunc(lines, func(l render.Line) bool { return l.Section == section && l.Key == key })
}

// servicesOf names the services of the quadlet files a [Unit] dependency
// lists, as the converter names them: "; db.container runs as db.service".
func servicesOf(l render.Line) string {
	if l.Section != unit.Unit {
		return ""
	}
	var b strings.Builder
	for _, w := range strings.Fields(l.Value) {
		if !unit.IsQuadletFile(w) {
			continue
		}
		f := parser.NewUnitFile()
		f.Filename = w
		if name, err := quadlet.GetUnitServiceName(f); err == nil {
			fmt.Fprintf(&b, "; %s runs as %s.service", w, name)
		}
	}
	return b.String()
}
