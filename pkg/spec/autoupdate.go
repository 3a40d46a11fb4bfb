package spec

import "github.com/syslet/syslet/pkg/unit"

// autoUpdate warns of each AutoUpdate= a spec sets, in its unit or its
// drop-ins: podman accepts it, so it is no error, but the restarts it
// leads to are not syslet's.
func (d *decoder) autoUpdate(s *Spec) {
	q := s.Kind.Quadlet()
	if q == nil {
		return
	}
	warn := func(secs []Section) {
		for _, sec := range secs {
			if sec.Name != q.Section {
				continue
			}
			for _, e := range sec.Entries {
				if e.Key != unit.KeyAutoUpdate {
					continue
				}
				for _, v := range e.Lines {
					d.warnf(v.Path, RuleAutoUpdate, "[%s] AutoUpdate=%s lets podman-auto-update.timer pull and restart %s outside syslet's plan, health gate and generations "+
						"(a crash loop counts as a success there, and nothing rolls it back); use `syslet update` instead, which plans, gates and rolls back a failed image", sec.Name, unit.Unquoted(v.Text), s.Name)
				}
			}
		}
	}
	warn(s.Unit)
	for _, di := range s.DropIns {
		warn(di.Unit)
	}
	for _, in := range s.Instances {
		for _, di := range in.DropIns {
			warn(di.Unit)
		}
	}
}
