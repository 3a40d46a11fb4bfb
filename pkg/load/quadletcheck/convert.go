package quadletcheck

import (
	"cmp"
	"path"
	"slices"
	"strings"

	"github.com/containers/podman/v5/pkg/systemd/quadlet"

	"github.com/syslet/syslet/pkg/parallel"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// kindOrder is the order the generator converts unit types in, so that a
// volume's or network's resource name is known before a container uses it.
func kindOrder(fileName string) int { return quadlet.SupportedExtensions[path.Ext(fileName)] }

// convert converts the whole set as the generator does and reports on
// each unit: podman's parser and converter refusing it, the converter's
// warnings, and what the converter derives that syslet does not (agree).
func convert(rep *report.Report, units []*checked, quiet func(*render.Unit) bool) {
	infos, byService := unitInfos(units)
	cv := &conversion{infos: infos, byService: byService, refused: map[string]bool{}, quiet: quiet}
	// The generator converts volumes and networks before the containers
	// that use their names (kindOrder). Units of one order only read the
	// entries of earlier orders, so each order's units are converted side
	// by side; what a unit's conversion gives is compared (agree) and let
	// go at once, so no more than one order's output is held.
	order := slices.Clone(units)
	slices.SortStableFunc(order, func(a, b *checked) int { return cmp.Compare(kindOrder(a.FileName), kindOrder(b.FileName)) })
	for lo := 0; lo < len(order); {
		hi := lo
		for hi < len(order) && kindOrder(order[hi].FileName) == kindOrder(order[lo].FileName) {
			hi++
		}
		cv.level(order[lo:hi])
		lo = hi
	}
	for _, c := range units {
		if c.odd != nil {
			rep.Merge(c.odd.rep)
		}
	}
}

// unitInfos is the generator's unitsInfoMap of the set, by file name, and
// the file names of the units by podman's name for their services.
func unitInfos(units []*checked) (infos map[string]*quadlet.UnitInfo, byService map[string]string) {
	// What the generator knows of every unit before converting any
	// (unitInfo), read by podman's parser from the few lines it is taken
	// from: independent of each other, so spread over the CPUs. Each unit
	// is parsed whole when its turn to be converted comes, and let go
	// after: a big set's parsed units all at once would be most of the
	// memory a validation needs.
	parallel.Run(parallel.Parts(len(units), 256), len(units), func(_, lo, hi int) {
		for _, c := range units[lo:hi] {
			if f, err := c.parse(infoKeysOf(c.FileName)); err == nil {
				c.info = unitInfo(f)
			}
		}
	})
	// Two specs of one type and name (reported as duplicate-name) render
	// one file name; like the generator, which reads one file per name,
	// they share one entry: the first parsed.
	infos = make(map[string]*quadlet.UnitInfo, len(units))
	for _, c := range units {
		if c.info != nil {
			if _, ok := infos[c.FileName]; !ok {
				infos[c.FileName] = c.info
			}
		}
	}
	for _, c := range units {
		c.dup = c.info != nil && infos[c.FileName] != c.info
		c.info = infos[c.FileName]
	}
	// Podman's name for a unit's service is almost always the one render
	// gave it: that string is kept, not podman's copy of it.
	byService = make(map[string]string, len(infos))
	for _, c := range units {
		if c.info == nil || c.dup {
			continue
		}
		name := c.info.ServiceFileName()
		if name == c.Service {
			name = c.Service
		}
		byService[name] = c.FileName
	}
	return infos, byService
}

// conversion is a set on its way through the converter: the entries every
// unit's conversion reads and writes (infos), the units by service, the
// units the converter refused in the orders done, and which specs are
// not reported on again (quiet).
type conversion struct {
	infos     map[string]*quadlet.UnitInfo
	byService map[string]string
	refused   map[string]bool
	quiet     func(*render.Unit) bool
}

// level converts the units of one order.
func (cv *conversion) level(level []*checked) {
	// A unit sharing its entry with another of its name (a duplicate)
	// is converted after the others, on its own: its conversion writes
	// the entry too.
	parallel.Run(parallel.Parts(len(level), 256), len(level), func(_, lo, hi int) {
		for _, c := range level[lo:hi] {
			if !c.dup && c.Link == "" {
				cv.one(c)
			}
		}
	})
	for _, c := range level {
		if c.dup && c.Link == "" {
			cv.one(c)
		}
	}
	// A template's instances (links to it) after the templates of their
	// order, so that one whose template the converter refused is told
	// once, at the template.
	for _, c := range level {
		if c.Link == "" && c.err() != nil {
			cv.refused[c.FileName] = true
		}
	}
	parallel.Run(parallel.Parts(len(level), 256), len(level), func(_, lo, hi int) {
		for _, c := range level[lo:hi] {
			if c.Link != "" {
				cv.one(c)
			}
		}
	})
	// A refusal names the unit it comes from when that one was refused
	// itself: in an earlier order, or earlier in this one (as converting
	// them one by one in order would tell).
	for _, c := range level {
		err := c.err()
		if err == nil {
			continue
		}
		if !cv.quiet(c.Unit) && !(c.Link != "" && cv.refused[c.Link]) {
			because := ""
			for _, file := range quadletFiles(err.Error()) {
				if file != c.FileName && cv.refused[file] {
					because = " (" + file + " itself fails to convert; fix that first)"
				}
			}
			c.more().rep.Errorf(c.Spec.Source, blame(c.Unit, err.Error()), spec.RuleQuadlet, "podman's quadlet converter rejects %s: %v%s", c.FileName, err, because)
		}
		cv.refused[c.FileName] = true
	}
	// What the converter wrote into an entry (a resource's name, a pod's
	// containers) is a piece of a whole unit's text: copied, so that the
	// text is let go (106,888 volumes held 16 MB of it).
	for _, c := range level {
		if c.info != nil && !c.dup {
			c.info.ResourceName = strings.Clone(c.info.ResourceName)
			for i, n := range c.info.ContainersToStart {
				c.info.ContainersToStart[i] = strings.Clone(n)
			}
		}
	}
}

// one converts one unit: the unit parsed as the generator parses it, and
// the converter's output, live only while the unit is converted and
// compared.
func (cv *conversion) one(c *checked) {
	file, err := c.parse(nil)
	if err != nil {
		if !cv.quiet(c.Unit) {
			c.more().rep.Errorf(c.Spec.Source, c.Spec.Path()+".unit", spec.RuleQuadlet, "podman's quadlet parser rejects %s: %v", c.FileName, err)
		}
		return
	}
	service, warnings, err := convertOne(file, cv.infos)
	if err != nil {
		c.more().err = err
	}
	if cv.quiet(c.Unit) || c.Link != "" && cv.refused[c.Link] {
		// An instance its template's problem also breaks: told once, at
		// the template.
		return
	}
	for _, w := range splitJoined(warnings) {
		c.more().rep.Warnf(c.Spec.Source, blame(c.Unit, w), spec.RuleQuadletWarning, "podman's quadlet converter warns about %s: %s", c.FileName, w)
	}
	for _, k := range quadlet.UnsupportedServiceKeys {
		if l, ok := lineOf(c.Unit, unit.Service, k); ok {
			c.more().rep.Warnf(c.Spec.Source, l.Origin, spec.RuleQuadletWarning, "quadlet warns: using key %s in the Service group is not supported - use at your own risk", k)
		}
	}
	if err == nil {
		agree(c, file, service, cv.byService)
	}
}

// quadletFiles lists the quadlet file names a message mentions, in order.
func quadletFiles(msg string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(msg, func(r rune) bool { return !unit.NameChar(r) }) {
		if w = strings.TrimRight(w, "."); unit.IsQuadletFile(w) {
			out = append(out, w)
		}
	}
	return out
}

// splitJoined undoes errors.Join: the converter returns its warnings as one
// error of newline-separated messages.
func splitJoined(err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	for _, s := range strings.Split(err.Error(), "\n") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
