package render

import (
	"strings"

	"github.com/syslet/syslet/pkg/report"
	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// checkPorts reports a PublishPort= that podman would refuse only when the
// container starts: a port outside 1-65535, a range that runs backwards,
// no container port.
func checkPorts(rep *report.Report, u *Unit, lines []Line) {
	for _, l := range lines {
		if l.Key != unit.KeyPublishPort || (l.Section != unit.Container && l.Section != unit.Pod) {
			continue
		}
		if _, err := unit.ParsePublishPort(l.Value); err != nil {
			rep.Errorf(u.Spec.Source, l.Origin, spec.RulePort, "PublishPort=%s: %s", l.Value, err)
		}
	}
}

// checkNamedVolumes reports a Volume= whose source is a podman volume by
// name that no volume spec declares. podman creates such a volume, empty,
// when the container first starts: web-cache.volum:/data (one letter
// short of the unit) gives a container an empty cache volume nobody
// declared, nothing refuses it, and syslet never backs it up nor removes
// it. A name one or two edits from a declared volume's is an error naming
// that volume; any other undeclared name a warning, as a volume made on
// the host by hand is a podman volume of this kind.
func checkNamedVolumes(rep *report.Report, u *Unit, lines []Line, vols volumes) {
	for _, l := range lines {
		if l.Key != unit.KeyVolume || (l.Section != unit.Container && l.Section != unit.Pod) {
			continue
		}
		src, _, ok := strings.Cut(l.Value, ":")
		if !ok || src == "" || strings.HasPrefix(src, "/") || strings.HasPrefix(src, ".") || strings.Contains(src, "%") ||
			isQuadletRef(src) || vols.podman[src] {
			continue // anonymous, a host path, a specifier, a unit (checkRefs) or declared
		}
		if near := spec.NearMiss(src, vols.names); near != "" {
			rep.Errorf(u.Spec.Source, l.Origin, spec.RuleUndefinedRef,
				"Volume=%s: %q is no volume a spec declares, so podman would create an empty volume of that name: did you mean %s?", l.Value, src, near)
			continue
		}
		rep.Warnf(u.Spec.Source, l.Origin, spec.RuleUndefinedRef,
			"Volume=%s: podman volume %q is declared by no spec: podman creates it empty at the first start, and syslet neither backs it up nor removes it (a volume spec NAME is written NAME.volume)", l.Value, src)
	}
}

// volumes are the volumes the specs declare, for checkNamedVolumes.
type volumes struct {
	names  []string        // unit file names and podman names, for a suggestion
	podman map[string]bool // podman names
}

func declaredVolumes(o *Output) volumes {
	v := volumes{podman: map[string]bool{}}
	for _, u := range o.Units {
		if u.Kind == spec.Volume {
			v.names = append(v.names, u.FileName, u.Resource)
			v.podman[u.Resource] = true
		}
	}
	return v
}
