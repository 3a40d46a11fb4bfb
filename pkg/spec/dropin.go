package spec

import (
	"regexp"
	"slices"
	"strings"

	"github.com/syslet/syslet/pkg/layout"
	"github.com/syslet/syslet/pkg/spec/internal/jsontree"
	"github.com/syslet/syslet/pkg/unit"
)

// Drop-ins and template instances. A drop-in is a unit fragment quadlet
// merges into the unit (NAME.KIND.d/FILE.conf, in file name order, after
// the unit's own lines): written as {"FILE.conf": {Section: {Key:
// value}}}, checked like the unit itself. A template is a container spec
// with instances: syslet writes NAME@.container and, per instance, the
// link NAME@INSTANCE.container quadlet turns into NAME@INSTANCE.service.

// dropInNameRe is a drop-in file name: one plain name ending in .conf,
// the only files quadlet reads from a drop-in directory.
var dropInNameRe = regexp.MustCompile(`^[A-Za-z0-9_@-][A-Za-z0-9_.@-]*\.conf$`)

// dropIns decodes a dropIns object: file name → unit sections.
func (d *decoder) dropIns(v *jsontree.Node, kind Kind) []DropIn {
	if v.Kind != jsontree.Object {
		d.errf(v.Path(), RuleFieldType, "dropIns must be an object of drop-in file names (NAME.conf) to unit sections, got %s", v.Kind)
		return nil
	}
	var out []DropIn
	owned := dropInOwned(kind)
	for i, name := range v.Keys {
		dv := v.Vals[i]
		switch {
		case hasControl(name):
			d.errf(dv.Path(), RuleControlChar, "drop-in name contains a control character")
			continue
		case name == layout.PinFile:
			d.errf(dv.Path(), RuleDropIn, "drop-in %s is syslet's own (a rollback's image pin): name yours otherwise", name)
			continue
		case len(name) > maxComponent || !dropInNameRe.MatchString(name):
			d.errf(dv.Path(), RuleDropIn, "drop-in name %q is not valid: a plain file name ending in .conf (quadlet reads no other), letters, digits, '_', '-', '.' and '@', at most %d bytes", name, maxComponent)
			continue
		}
		di := DropIn{Name: name, Path: dv.Path()}
		if dv.Kind == jsontree.Object && len(dv.Keys) == 0 {
			d.errf(dv.Path(), RuleDropIn, "drop-in %s is empty: give it a section", name)
			continue
		}
		sub := &decoder{source: d.source, rep: d.rep}
		di.Unit = sub.unit(dv, kind)
		for _, sec := range di.Unit {
			for _, e := range sec.Entries {
				switch {
				case slices.Contains(owned, sec.Name+"."+e.Key):
					d.errf(e.Path, RuleDropIn, "[%s] %s cannot be set in a drop-in: syslet sets it in the unit, and the plan relies on it", sec.Name, e.Key)
				case e.Key == unit.KeyServiceName && unit.QuadletSection(sec.Name):
					d.errf(e.Path, RuleDropIn, "[%s] ServiceName cannot be set in a drop-in: set it in the unit", sec.Name)
				}
			}
		}
		out = append(out, di)
	}
	slices.SortFunc(out, func(a, b DropIn) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// maxInstance bounds an instance name: NAME-INSTANCE is a podman
// container name and NAME@INSTANCE.service a unit name.
const maxInstance = 64

// instances decodes a template's instances: each a name, or {"name":
// NAME, "dropIns": {...}}. Their drop-ins are read with the spec's own.
func (d *decoder) instances(v *jsontree.Node, s *Spec) {
	if !s.Kind.Templates() {
		d.errf(v.Path(), RuleInstance, "instances are only for container specs (a template NAME@.container); a %s unit cannot be templated in specs", s.Kind)
		return
	}
	if v.Kind != jsontree.Array {
		d.errf(v.Path(), RuleFieldType, "instances must be an array of instance names, got %s", v.Kind)
		return
	}
	s.Instances = []Instance{}
	seen := map[string]string{}
	for _, it := range v.Items {
		inst := Instance{Path: it.Path()}
		np := it.Path()
		var dropIns *jsontree.Node
		switch it.Kind {
		case jsontree.String:
			inst.Name = it.Text
		case jsontree.Object:
			for j, k := range it.Keys {
				switch {
				case k == "name" || k == "dropIns":
				case nearMiss(k, []string{"name", "dropIns"}) != "":
					d.errf(it.Vals[j].Path(), RuleMisspelledField, "unknown field %q in an instance: did you mean %s?", k, nearMiss(k, []string{"name", "dropIns"}))
				default:
					d.warnf(it.Vals[j].Path(), RuleUnknownField, "unknown field %q in an instance is ignored (allowed: name, dropIns)", k)
				}
			}
			inst.Name = d.str(it, "name", true)
			np = jsontree.Child(it.Path(), "name")
			dropIns = it.Get("dropIns")
		default:
			d.errf(it.Path(), RuleFieldType, "instances items must be names or objects, got %s", it.Kind)
			continue
		}
		switch n := inst.Name; {
		case n == "":
			if it.Kind == jsontree.String {
				d.errf(np, RuleInstance, "an instance name must not be empty")
			}
			continue
		case hasControl(n):
			d.errf(np, RuleControlChar, "instance name contains a control character")
			continue
		case len(n) > maxInstance || !isWord(n, true) || strings.Contains(n, ".."):
			d.errf(np, RuleInstance, "instance name %q is not valid: letters, digits, '_', '.' and '-', starting with a letter or digit, at most %d bytes (it becomes %s-%s and %s@%s.service)", n, maxInstance, s.Name, n, s.Name, n)
			continue
		case seen[n] != "":
			d.errf(np, RuleInstance, "instance %q already appears at %s", n, seen[n])
			continue
		}
		seen[inst.Name] = np
		s.Instances = append(s.Instances, inst)
		if dropIns != nil {
			k := len(s.Instances) - 1
			d.later = append(d.later, func() { s.Instances[k].DropIns = d.dropIns(dropIns, s.Kind) })
		}
	}
}
