package quadletcheck

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/containers/podman/v5/pkg/systemd/parser"
	"github.com/containers/podman/v5/pkg/systemd/quadlet"
	"github.com/containers/podman/v5/version/rawversion"

	"github.com/syslet/syslet/pkg/layout"
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

// checked is one rendered unit on its way through the converter.
type checked struct {
	*render.Unit
	gated    bool              // uses a key or feature the target podman lacks
	withheld []string          // "Section.Key" newer than the linked converter
	file     *parser.UnitFile  // parsed as the generator parses it
	service  *parser.UnitFile  // the converter's output
	info     *quadlet.UnitInfo // this unit's entry in unitsInfoMap
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
	seen := map[string]bool{}
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
	if sec := unit.Sections[path.Ext(c.FileName)]; sec != "" {
		if since, ok := unit.KeySince(sec, unit.KindKey[sec]); ok && target.Less(since) {
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
			id := "feature " + f.What
			if seen[id] || !target.Less(f.Since) || l.Section != f.Section || !slices.Contains(f.Keys, l.Key) || !f.Matches(l.Value) {
				continue
			}
			seen[id] = true
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
		id := l.Section + "." + l.Key
		if !ok || seen[id] {
			continue // unknown keys are refused when specs are decoded
		}
		seen[id] = true
		switch {
		case target.Less(since):
			c.gated = true
			if !quiet {
				rep.Errorf(c.Spec.Source, l.Origin, spec.RuleNewerPodman,
					"[%s] %s needs podman %s or later; these specs are checked against podman %s%s", l.Section, l.Key, since, target, newer(since))
			}
		case Converter.Less(since):
			c.withheld = append(c.withheld, id)
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
		if !layout.IsQuadletFile(w) {
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
	// Parse every unit from the bytes a host would get.
	infos := map[string]*quadlet.UnitInfo{}
	for _, c := range units {
		f := c.Merged
		if len(c.withheld) > 0 {
			f = f.Without(c.withheld...)
		}
		c.file = parser.NewUnitFile()
		c.file.Filename = c.FileName
		c.file.Path = c.Path
		if err := c.file.Parse(string(f.Bytes())); err != nil {
			c.file = nil
			if !quiet(c.Unit) {
				rep.Errorf(c.Spec.Source, c.Spec.Path()+".unit", spec.RuleQuadlet, "podman's quadlet parser rejects %s: %v", c.FileName, err)
			}
			continue
		}
		infos[c.FileName] = unitInfo(c.file)
	}
	// Two specs of one type and name (reported as duplicate-name) render
	// one file name; like the generator, which reads one file per name,
	// they share one entry.
	for _, c := range units {
		c.info = infos[c.FileName]
	}
	// Units the converter refuses; a unit using one fails with it on the
	// host too, and its finding says where the trouble starts.
	refused := map[string]bool{}
	order := slices.Clone(units)
	slices.SortStableFunc(order, func(a, b *checked) int { return cmp.Compare(kindOrder(a.FileName), kindOrder(b.FileName)) })
	for _, c := range order {
		if c.file == nil {
			continue
		}
		service, warnings, err := convertOne(c.file, infos)
		if err != nil {
			refused[c.FileName] = true
		}
		if quiet(c.Unit) || c.Link != "" && refused[c.Link] {
			// An instance its template's problem also breaks: told once,
			// at the template.
			continue
		}
		for _, w := range splitJoined(warnings) {
			rep.Warnf(c.Spec.Source, blame(c.Unit, w), spec.RuleQuadletWarning, "podman's quadlet converter warns about %s: %s", c.FileName, w)
		}
		for _, k := range quadlet.UnsupportedServiceKeys {
			if l, ok := lineOf(c.Unit, unit.Service, k); ok {
				rep.Warnf(c.Spec.Source, l.Origin, spec.RuleQuadletWarning, "quadlet warns: using key %s in the Service group is not supported - use at your own risk", k)
			}
		}
		if err != nil {
			because := ""
			for file := range refused {
				if file != c.FileName && strings.Contains(err.Error(), file) {
					because = " (" + file + " itself fails to convert; fix that first)"
				}
			}
			rep.Errorf(c.Spec.Source, blame(c.Unit, err.Error()), spec.RuleQuadlet, "podman's quadlet converter rejects %s: %v%s", c.FileName, err, because)
			continue
		}
		c.service = service
	}
	byService := make(map[string]string, len(infos))
	for file, info := range infos {
		byService[info.ServiceFileName()] = file
	}
	for _, c := range units {
		if c.service != nil && !quiet(c.Unit) {
			agree(rep, c, byService)
		}
	}
}

// unitInfo is what the generator knows about a unit before converting any
// (podman's cmd/quadlet generateUnitsInfoMap): its service name, and the
// resource names that can be told without converting — a container's name
// and a build's image. Volumes and networks fill theirs in when converted.
func unitInfo(f *parser.UnitFile) *quadlet.UnitInfo {
	name, _ := quadlet.GetUnitServiceName(f)
	info := &quadlet.UnitInfo{ServiceName: name}
	switch path.Ext(f.Filename) {
	case ".container":
		info.ResourceName = quadlet.GetContainerResourceName(f)
	case ".build":
		info.ResourceName = quadlet.GetBuiltImageName(f)
	case ".artifact":
		info.ServiceName = quadlet.GetArtifactServiceName(f)
	case ".pod":
		info.ContainersToStart = []string{}
		info.ResourceName = quadlet.GetPodResourceName(f)
	}
	return info
}

// convertOne calls the converter for the unit's type. A panic inside it is
// a finding too: the generator on a host would crash the same way, and then
// no unit at all would be generated.
func convertOne(f *parser.UnitFile, infos map[string]*quadlet.UnitInfo) (service *parser.UnitFile, warnings, err error) {
	defer func() {
		if r := recover(); r != nil {
			service, err = nil, fmt.Errorf("the converter crashed on this unit (%v); podman's generator would crash too", r)
		}
	}()
	switch path.Ext(f.Filename) {
	case ".container":
		return quadlet.ConvertContainer(f, infos, false)
	case ".volume":
		return quadlet.ConvertVolume(f, infos, false)
	case ".network":
		return quadlet.ConvertNetwork(f, infos, false)
	case ".build":
		return quadlet.ConvertBuild(f, infos, false)
	case ".pod":
		return quadlet.ConvertPod(f, infos, false)
	case ".image":
		service, err = quadlet.ConvertImage(f, infos, false)
		return service, nil, err
	case ".kube":
		service, err = quadlet.ConvertKube(f, infos, false)
		return service, nil, err
	case ".artifact":
		service, err = quadlet.ConvertArtifact(f, infos, false)
		return service, nil, err
	}
	return nil, nil, fmt.Errorf("syslet does not render %s units", path.Ext(f.Filename))
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
