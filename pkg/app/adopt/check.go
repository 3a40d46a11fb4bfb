package adopt

import (
	"path"
	"strings"

	"github.com/syslet/syslet/pkg/load"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// check renders the adopted stream and compares every unit with the file
// it came from, so the operator learns before the first apply what it
// would change.
func check(files []File, stream []byte) []string {
	set := load.Bytes("adopted", stream)
	out := set.Out
	var notes []string
	for _, f := range set.Report.Findings {
		notes = append(notes, "the adopted specs do not validate yet: "+f.String())
	}
	byName := map[string]*render.Unit{}
	for _, u := range out.Units {
		byName[u.FileName] = u
	}
	for _, f := range files {
		u := byName[path.Base(f.Path)]
		if u == nil {
			continue
		}
		for _, d := range u.DropIns {
			if df, err := unit.Parse(f.DropIns[d.Name]); err != nil || !unit.SameMeaning(df, d.File) {
				notes = append(notes, d.Path+": the drop-in syslet renders from the adopted spec differs in meaning, so the first apply restarts the unit")
			}
		}
		if u.Link != "" {
			continue // an instance: its template is compared
		}
		uf, err := unit.Parse(f.Data)
		if err != nil || unit.SameMeaning(uf, u.Parsed()) {
			continue
		}
		notes = append(notes, f.Path+": the unit syslet renders from the adopted spec differs in meaning, so the first apply restarts it; it would read:\n"+indent(string(u.Parsed().Without(unit.Syslet).Bytes())))
	}
	return notes
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
