package quadletcheck

import (
	"bytes"
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/containers/podman/v5/pkg/systemd/parser"
	"github.com/containers/podman/v5/pkg/systemd/quadlet"
	"github.com/containers/podman/v5/version/rawversion"

	"github.com/syslet/syslet/pkg/parallel"
	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
	"github.com/syslet/syslet/render"
)

// Converter is the podman release whose quadlet converter is linked in.
var Converter = func() unit.Podman {
	p, err := unit.ParsePodman(rawversion.RawVersion)
	if err != nil {
		panic("quadletcheck: podman's raw version " + rawversion.RawVersion + ": " + err.Error())
	}
	return p
}()

// Check gates every quadlet key of out by the podman release target, then
// converts the whole unit set with podman's converter. Findings go to the
// spec each unit came from. Specs that prior already holds an error for
// are converted too (other units may refer to them) but not reported on
// again: their problem has been told, and the converter would only repeat
// it in its own words.
//
// Check is for specs checked without a host (syslet validate, --root):
// a key the target release lacks is reported with the --podman hint, as
// the host the specs are for may well run a newer podman. CheckHost is
// for the release a host runs, where there is nothing to pass.
func Check(out *render.Output, target unit.Podman, prior report.Report) report.Report {
	return check(out, target, prior, true)
}

// CheckHost is Check for the podman release of the host the specs are
// applied to.
func CheckHost(out *render.Output, target unit.Podman, prior report.Report) report.Report {
	return check(out, target, prior, false)
}

func check(out *render.Output, target unit.Podman, prior report.Report, hint bool) report.Report {
	var rep report.Report
	failed := map[string]bool{}
	for _, f := range prior.Findings {
		if f.Severity == report.Error {
			failed[specKey(f.Source, f.Path)] = true
		}
	}
	quiet := func(u *render.Unit) bool { return failed[specKey(u.Spec.Source, u.Spec.Path())] }

	units := make([]*checked, 0, len(out.Units))
	for _, u := range out.Units {
		c := &checked{Unit: u}
		// An instance's lines are its template's, gated there, and its own
		// drop-ins': only those are gated again.
		gate(&rep, c, target, quiet(u), hint)
		if c.gated {
			failed[specKey(u.Spec.Source, u.Spec.Path())] = true
		}
		units = append(units, c)
	}
	convert(&rep, units, quiet)
	return rep
}

// checked is one rendered unit on its way through the converter. It is
// held for every unit of the set while they are converted, so what only
// a few units have is behind a pointer (odd) that the rest leave nil.
type checked struct {
	*render.Unit
	info  *quadlet.UnitInfo // this unit's entry in unitsInfoMap
	odd   *oddities         // nil while the unit has none
	gated bool              // uses a key or feature the target podman lacks
	dup   bool              // shares info with an earlier unit of its file name
}

// oddities are what a unit has to tell or hold back.
type oddities struct {
	withheld []string      // "Section.Key" newer than the linked converter
	err      error         // the converter's refusal
	rep      report.Report // the unit's findings, merged in unit order
}

// more is the unit's oddities, made on the first.
func (c *checked) more() *oddities {
	if c.odd == nil {
		c.odd = &oddities{}
	}
	return c.odd
}

// err is the converter's refusal of the unit (nil: converted, or not yet).
func (c *checked) err() error {
	if c.odd == nil {
		return nil
	}
	return c.odd.err
}

// specKey identifies a spec by its source and index ("[3]" of
// "[3].unit.Container.Image").
func specKey(source, jsonPath string) string {
	i := strings.IndexByte(jsonPath, ']')
	if i < 0 {
		return source
	}
	return source + "\x00" + jsonPath[:i+1]
}

// gate reports each quadlet key the target release does not know, and each
// value an older generator reads differently (unit.Features), once per key
// or feature, at its first line. Keys newer than the linked converter (but known
// to the target) are withheld from the converter, which would call them
// unknown; the host's generator judges them at staging.
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
			if !target.Less(f.Since) || l.Section != f.Section || !slices.Contains(f.Keys, l.Key) || !f.Matches(l.Value) || !first("feature "+f.What) {
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

// kindOrder is the order the generator converts unit types in, so that a
// volume's or network's resource name is known before a container uses it.
func kindOrder(fileName string) int { return quadlet.SupportedExtensions[path.Ext(fileName)] }

func convert(rep *report.Report, units []*checked, quiet func(*render.Unit) bool) {
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
	infos := make(map[string]*quadlet.UnitInfo, len(units))
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
	byService := make(map[string]string, len(infos))
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
	// The generator converts volumes and networks before the containers
	// that use their names (kindOrder). Units of one order only read the
	// entries of earlier orders, so each order's units are converted side
	// by side; what a unit's conversion gives is compared (agree) and let
	// go at once, so no more than one order's output is held.
	order := slices.Clone(units)
	slices.SortStableFunc(order, func(a, b *checked) int { return cmp.Compare(kindOrder(a.FileName), kindOrder(b.FileName)) })
	refused := map[string]bool{} // units the converter refused, of the orders done
	for lo := 0; lo < len(order); {
		hi := lo
		for hi < len(order) && kindOrder(order[hi].FileName) == kindOrder(order[lo].FileName) {
			hi++
		}
		level := order[lo:hi]
		// The unit parsed as the generator parses it, and the converter's
		// output, live only while the unit is converted and compared.
		one := func(c *checked) {
			file, err := c.parse(nil)
			if err != nil {
				if !quiet(c.Unit) {
					c.more().rep.Errorf(c.Spec.Source, c.Spec.Path()+".unit", spec.RuleQuadlet, "podman's quadlet parser rejects %s: %v", c.FileName, err)
				}
				return
			}
			service, warnings, err := convertOne(file, infos)
			if err != nil {
				c.more().err = err
			}
			if quiet(c.Unit) || c.Link != "" && refused[c.Link] {
				// An instance its template's problem also breaks: told
				// once, at the template.
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
				agree(c, file, service, byService)
			}
		}
		// A unit sharing its entry with another of its name (a duplicate)
		// is converted after the others, on its own: its conversion
		// writes the entry too.
		parallel.Run(parallel.Parts(len(level), 256), len(level), func(_, lo, hi int) {
			for _, c := range level[lo:hi] {
				if !c.dup && c.Link == "" {
					one(c)
				}
			}
		})
		for _, c := range level {
			if c.dup && c.Link == "" {
				one(c)
			}
		}
		// A template's instances (links to it) after the templates of
		// their order, so that one whose template the converter refused
		// is told once, at the template.
		for _, c := range level {
			if c.Link == "" && c.err() != nil {
				refused[c.FileName] = true
			}
		}
		parallel.Run(parallel.Parts(len(level), 256), len(level), func(_, lo, hi int) {
			for _, c := range level[lo:hi] {
				if c.Link != "" {
					one(c)
				}
			}
		})
		// A refusal names the unit it comes from when that one was
		// refused itself: in an earlier order, or earlier in this one
		// (as converting them one by one in order would tell).
		for _, c := range level {
			err := c.err()
			if err == nil {
				continue
			}
			if !quiet(c.Unit) && !(c.Link != "" && refused[c.Link]) {
				because := ""
				for _, file := range quadletFiles(err.Error()) {
					if file != c.FileName && refused[file] {
						because = " (" + file + " itself fails to convert; fix that first)"
					}
				}
				c.more().rep.Errorf(c.Spec.Source, blame(c.Unit, err.Error()), spec.RuleQuadlet, "podman's quadlet converter rejects %s: %v%s", c.FileName, err, because)
			}
			refused[c.FileName] = true
		}
		// What the converter wrote into an entry (a resource's name, a
		// pod's containers) is a piece of a whole unit's text: copied, so
		// that the text is let go (106,888 volumes held 16 MB of it).
		for _, c := range level {
			if c.info != nil && !c.dup {
				c.info.ResourceName = strings.Clone(c.info.ResourceName)
				for i, n := range c.info.ContainersToStart {
					c.info.ContainersToStart[i] = strings.Clone(n)
				}
			}
		}
		lo = hi
	}
	for _, c := range units {
		if c.odd != nil {
			rep.Merge(c.odd.rep)
		}
	}
}

// infoKeys are the lines unitInfo reads: a unit's service name, a
// container's name, a build's image.
var infoKeys = map[infoKey]bool{
	{unit.Container, unit.KeyServiceName}: true, {unit.Volume, unit.KeyServiceName}: true,
	{unit.Network, unit.KeyServiceName}: true, {unit.Build, unit.KeyServiceName}: true,
	{unit.Container, unit.KeyContainerName}: true, {unit.Build, unit.KeyImageTag}: true,
}

type infoKey struct{ section, key string }

// infoKeysOf is infoKeys for the kinds unitInfo reads only those of, and
// nil (the whole unit) for the others (pods, images, kubes, artifacts),
// whose names podman's helpers derive from more keys.
func infoKeysOf(fileName string) map[infoKey]bool {
	switch path.Ext(fileName) {
	case ".container", ".volume", ".network", ".build":
		return infoKeys
	}
	return nil
}

// parse reads the unit as the generator would from the bytes a host gets
// (keys newer than the linked converter withheld), or only the lines of
// only (nil: all of them).
func (c *checked) parse(only map[infoKey]bool) (*parser.UnitFile, error) {
	var text string
	switch {
	case only != nil:
		f := &unit.File{}
		if c.Merged != nil || mayHoldInfo(c.Content) {
			for _, sec := range c.MergedFile().Sections {
				for _, e := range sec.Entries {
					if only[infoKey{sec.Name, e.Key}] {
						f.Add(sec.Name, e.Key, e.Value)
					}
				}
			}
		}
		if len(f.Sections) == 0 {
			// None of the lines (as for almost every volume and network):
			// what podman's parser makes of an empty file, without
			// writing and parsing one.
			pf := parser.NewUnitFile()
			pf.Filename, pf.Path = c.FileName, c.Path
			return pf, nil
		}
		text = string(f.Bytes())
	case c.odd != nil && len(c.odd.withheld) > 0:
		text = string(c.MergedFile().Without(c.odd.withheld...).Bytes())
	case c.Merged == nil:
		text = string(c.Content) // kept as its bytes: what a host gets
	default:
		text = string(c.Merged.Bytes())
	}
	pf := parser.NewUnitFile()
	pf.Filename = c.FileName
	pf.Path = c.Path
	if err := pf.Parse(text); err != nil {
		return nil, err
	}
	return pf, nil
}

// mayHoldInfo reports whether a unit kept as its bytes may hold one of
// the infoKeys: a look for "Key=" before parsing it to find out (no volume
// or network of a big set holds any).
func mayHoldInfo(content []byte) bool {
	for _, k := range infoNeedles {
		if bytes.Contains(content, k) {
			return true
		}
	}
	return false
}

// infoNeedles are the infoKeys' keys as a unit's lines start: "Key=".
var infoNeedles = func() [][]byte {
	var out [][]byte
	for k := range infoKeys {
		if n := []byte(k.key + "="); !slices.ContainsFunc(out, func(o []byte) bool { return bytes.Equal(o, n) }) {
			out = append(out, n)
		}
	}
	return out
}()

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

// unitInfo is what the generator knows about a unit before converting any
// (podman's cmd/quadlet generateUnitsInfoMap): its service name, and the
// resource names that can be told without converting — a container's name
// and a build's image. Volumes and networks fill theirs in when converted.
func unitInfo(f *parser.UnitFile) *quadlet.UnitInfo {
	name, _ := quadlet.GetUnitServiceName(f)
	info := &quadlet.UnitInfo{ServiceName: name}
	if p, ok := podmanKinds[path.Ext(f.Filename)]; ok && p.info != nil {
		p.info(f, info)
	}
	return info
}

// convertOne calls the converter for the unit's kind. A panic inside it is
// a finding too: the generator on a host would crash the same way, and then
// no unit at all would be generated.
func convertOne(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (service *parser.UnitFile, warnings, err error) {
	defer func() {
		if r := recover(); r != nil {
			service, err = nil, fmt.Errorf("the converter crashed on this unit (%v); podman's generator would crash too", r)
		}
	}()
	p, ok := podmanKinds[path.Ext(f.Filename)]
	if !ok {
		return nil, nil, fmt.Errorf("syslet does not render %s units", path.Ext(f.Filename))
	}
	return p.convert(f, infos)
}

// podmanKinds are podman's own functions per quadlet kind, called as its
// generator (cmd/quadlet) calls them: what it fills in of a unit's info
// before converting any (besides the service name), and the converter.
// Podman has no entry point that picks them by the file's extension, so
// each kind of unit.Kinds has its row here (TestPodmanKinds).
var podmanKinds = map[string]struct {
	info    func(f *parser.UnitFile, info *quadlet.UnitInfo)
	convert func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error)
}{
	".container": {
		func(f *parser.UnitFile, info *quadlet.UnitInfo) {
			info.ResourceName = quadlet.GetContainerResourceName(f)
		},
		func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
			return quadlet.ConvertContainer(f, infos, false)
		}},
	".volume": {nil, func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
		return quadlet.ConvertVolume(f, infos, false)
	}},
	".network": {nil, func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
		return quadlet.ConvertNetwork(f, infos, false)
	}},
	".build": {
		func(f *parser.UnitFile, info *quadlet.UnitInfo) { info.ResourceName = quadlet.GetBuiltImageName(f) },
		func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
			return quadlet.ConvertBuild(f, infos, false)
		}},
	".pod": {
		func(f *parser.UnitFile, info *quadlet.UnitInfo) {
			info.ContainersToStart = []string{}
			info.ResourceName = quadlet.GetPodResourceName(f)
		},
		func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
			return quadlet.ConvertPod(f, infos, false)
		}},
	".image": {nil, func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
		service, err := quadlet.ConvertImage(f, infos, false)
		return service, nil, err
	}},
	".kube": {nil, func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
		service, err := quadlet.ConvertKube(f, infos, false)
		return service, nil, err
	}},
	".artifact": {
		func(f *parser.UnitFile, info *quadlet.UnitInfo) { info.ServiceName = quadlet.GetArtifactServiceName(f) },
		func(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (*parser.UnitFile, error, error) {
			service, err := quadlet.ConvertArtifact(f, infos, false)
			return service, nil, err
		}},
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
