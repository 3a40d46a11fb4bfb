package quadletcheck

import (
	"strings"

	"github.com/containers/podman/v5/pkg/systemd/quadlet"
	"github.com/containers/podman/v5/version/rawversion"

	"github.com/syslet/syslet/pkg/report"
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
