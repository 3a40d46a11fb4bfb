package spec

import (
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec/internal/jsontree"
)

// CheckSet runs the pre-render checks that need every spec at once: names
// are unique per type. (Checks that need rendered units, such as references
// and mount destinations, belong to render.Check.)
func CheckSet(specs []*Spec) report.Report {
	var rep report.Report
	type key struct {
		k    Kind
		name string
	}
	first := map[key]*Spec{}
	for _, s := range specs {
		if s.Name == "" || s.Kind == "" {
			continue
		}
		k := key{s.Kind, s.Name}
		if f, ok := first[k]; ok {
			rep.Errorf(s.Source, jsontree.Child(s.Path(), "name"), RuleDuplicateName, "%s %q is already defined in %s %s", s.Kind, s.Name, f.Source, f.Path())
			continue
		}
		first[k] = s
	}
	return rep
}
