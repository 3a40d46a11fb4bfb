package quadletcheck

import (
	"slices"
	"strings"

	"github.com/containers/podman/v5/pkg/systemd/parser"
	"github.com/containers/podman/v5/pkg/systemd/quadlet"

	"github.com/syslet/syslet/pkg/spec"
	"github.com/syslet/syslet/pkg/unit"
)

// agree compares what render derived about a unit with what the converter
// made of it. The planner and executor act on render's facts (which service
// to start, which volume to delete, which containers to restart when a
// network is recreated); the host runs the converter's. Any difference is
// a syslet bug, reported so that nothing is deployed while it stands.
// file is the unit as the generator parses it, service what the converter
// made of it.
func agree(c *checked, file, service *parser.UnitFile, byService map[string]string) {
	differ := func(what, syslet, quadlet string) {
		c.more().rep.Errorf(c.Spec.Source, c.Spec.Path(), spec.RuleDisagreement,
			"%s: syslet derives %s %q but podman's quadlet derives %q; this is a syslet bug, please report it", c.FileName, what, syslet, quadlet)
	}
	if service.Filename != c.Service {
		differ("the service", c.Service, service.Filename)
	}
	k := c.Kind.Quadlet()
	switch k.Object {
	case unit.ObjectContainer:
		resource := quadlet.GetContainerResourceName(file)
		if resource == "" {
			// The converter only resolves %N; the name with other specifiers
			// is passed to podman as written (systemd fills them in).
			resource, _ = file.Lookup(quadlet.ContainerGroup, quadlet.KeyContainerName)
		}
		if c.Instance != "" {
			// systemd fills in %i when the instance's service runs.
			resource = strings.ReplaceAll(resource, "%i", c.Instance)
		}
		if resource != c.Container {
			differ("the container name", c.Container, resource)
		}
	case "": // a kube unit: its objects are its YAML's
	default:
		if resource := c.info.ResourceName; resource != c.Resource {
			differ("the "+string(c.Kind)+" name", c.Resource, resource)
		}
	}
	if k.Object != unit.ObjectContainer {
		return
	}
	// The units a container requires, as the converter wrote them into its
	// service: Requires=NAME-volume.service, BindsTo= its pod's service and
	// so on (byService maps a service back to its quadlet file). Containers
	// are left out on both sides: a [Unit] dependency on one (After=,
	// Requires=db.container) is translated to the same Requires=, and is
	// not a line render reads.
	var required []string
	reqs := append(service.LookupAllStrv(quadlet.UnitGroup, "Requires"), service.LookupAllStrv(quadlet.UnitGroup, "BindsTo")...)
	for _, req := range reqs {
		if f, ok := byService[req]; ok && unit.KindOf(f).Object != unit.ObjectContainer {
			required = append(required, f) // sameSet compacts
		}
	}
	rendered := slices.DeleteFunc(slices.Clone(c.Used().Requires), func(f string) bool { return unit.KindOf(f).Object == unit.ObjectContainer })
	if !sameSet(required, rendered) {
		differ("the units it requires", strings.Join(rendered, " "), strings.Join(slices.Compact(slices.Sorted(slices.Values(required))), " "))
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
